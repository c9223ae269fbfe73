import fp from 'fastify-plugin';
import type { TConfig } from '../config.ts';
import { startMailSender } from '../mail/sender.ts';

declare module 'fastify' {
  interface FastifyInstance {
    mailer: {
      /** After a transaction queued mails: deliver soon, without making the request wait. */
      kick: () => void;
      /** Deliver what is due and wait (tests, shutdown). 0 when there is no SMTP. */
      flush: () => Promise<number>;
      readonly smtp: boolean;
    };
  }
}

/** SMTP_URL set: outbox rows go out by nodemailer. Unset: they stay for the dev mailbox. */
export default fp<{ config: TConfig }>(
  async (app, { config }) => {
    if (!config.SMTP_URL) {
      if (config.NODE_ENV === 'production') app.log.warn('SMTP_URL is not set: mails stay in the outbox and are not delivered');
      app.decorate('mailer', { kick: () => {}, flush: async () => 0, smtp: false });
      return;
    }
    const sender = startMailSender(app.db, { smtpUrl: config.SMTP_URL, from: config.MAIL_FROM, log: app.log });
    app.decorate('mailer', { kick: sender.kick, flush: sender.flush, smtp: true });
    app.addHook('onClose', () => sender.close());
  },
  { name: 'mail', dependencies: ['db'] },
);
