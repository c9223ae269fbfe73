import nodemailer from 'nodemailer';
import type { Db } from '../db/index.ts';
import { isDatabaseUnavailable } from '../db/outage.ts';

type TLogger = { info: (obj: object, msg: string) => void; warn: (obj: object, msg: string) => void; error: (obj: object, msg: string) => void };
type TTransport = {
  sendMail: (message: { from: string; to: string; subject: string; text: string; html: string; headers?: Record<string, string> }) => Promise<unknown>;
  close: () => void;
};

export type TMailSender = {
  /** Delivers what is due now; resolves when this round is done. Safe to call any time. */
  flush: () => Promise<number>;
  /** Ask for a round soon without waiting for it (after a request queued a mail). */
  kick: () => void;
  close: () => Promise<void>;
};

const BATCH = 20;
const MAX_ATTEMPTS = 8;

/**
 * Sends outbox mails over SMTP with nodemailer. Rows are claimed with SKIP LOCKED and a lease
 * (next_attempt_at moves ahead with back-off before sending), so several core instances never
 * send one mail twice and a crash only delays it. Mails no kick reached, and failed ones due
 * again, wait for the `mail-outbox` job (core/src/jobs) to flush.
 */
export function startMailSender(db: Db, options: { smtpUrl: string; from: string; log: TLogger }): TMailSender {
  const transport = nodemailer.createTransport(options.smtpUrl) as unknown as TTransport;
  let running: Promise<number> | null = null;
  let again = false;
  let closed = false;

  async function round(): Promise<number> {
    const claimed = await db.query<{
      id: string;
      to_address: string;
      subject: string;
      text_body: string;
      html_body: string;
      headers: Record<string, string> | null;
      attempts: number;
    }>(
      `UPDATE mail_outbox SET attempts = attempts + 1,
              next_attempt_at = now() + (power(2, attempts) * 30) * interval '1 second'
       WHERE id IN (SELECT id FROM mail_outbox WHERE sent_at IS NULL AND next_attempt_at <= now() AND attempts < $1
                    ORDER BY id LIMIT $2 FOR UPDATE SKIP LOCKED)
       RETURNING id::text, to_address, subject, text_body, html_body, headers, attempts`,
      [MAX_ATTEMPTS, BATCH],
    );
    let sent = 0;
    for (const mail of claimed) {
      try {
        await transport.sendMail({
          from: options.from,
          to: mail.to_address,
          subject: mail.subject,
          text: mail.text_body,
          html: mail.html_body,
          ...(mail.headers ? { headers: mail.headers } : {}),
        });
        await db.query('UPDATE mail_outbox SET sent_at = now(), last_error = NULL WHERE id = $1', [mail.id]);
        sent++;
      } catch (err) {
        const message = err instanceof Error ? err.message : String(err);
        await db.query('UPDATE mail_outbox SET last_error = $2 WHERE id = $1', [mail.id, message.slice(0, 500)]);
        options.log.warn({ mailId: mail.id, attempts: mail.attempts, err: message }, 'mail delivery failed');
      }
    }
    return sent + (claimed.length === BATCH ? await round() : 0);
  }

  function flush(): Promise<number> {
    if (closed) return Promise.resolve(0);
    if (running) {
      again = true;
      return running;
    }
    running = round()
      .catch((err: unknown) => {
        if (!isDatabaseUnavailable(err)) options.log.error({ err }, 'mail sender round failed');
        return 0;
      })
      .finally(() => {
        running = null;
        if (again && !closed) {
          again = false;
          void flush();
        }
      });
    return running;
  }

  return {
    flush,
    kick: () => void flush(),
    async close() {
      closed = true;
      await running;
      transport.close();
    },
  };
}
