import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { LOCALES, NOTIFICATION_DISPLAYS, NOTIFICATION_TYPES, ZAuthType, ZLocale, ZNotificationButtonInput, ZOk } from '@obmen/shared';
import { listOutbox } from '../../mail/outbox.ts';
import { setSiteSetting } from '../site/service.ts';
import { sendNotification, userIdOfAccount } from '../notifications/service.ts';
import { notFoundOf } from '../../errors.ts';

/** The options of the operator's `notify:send`, for tests that cannot run the CLI beside a live PGlite. */
const ZDevNotifyBody = z.object({
  account_id: z.number().int().optional(),
  all: z.literal(true).optional(),
  display: z.enum(NOTIFICATION_DISPLAYS),
  type: z.enum(NOTIFICATION_TYPES),
  title: z.string().min(1),
  text: z.string().default(''),
  buttons: z.array(ZNotificationButtonInput).default([]),
  closable: z.boolean().default(true),
  /** One locale, or the same text for every locale when absent. */
  locale: ZLocale.optional(),
});

const ZMailboxQuery = z.object({
  to: z.string().trim().max(254).optional(),
  limit: z.coerce.number().int().min(1).max(200).default(50),
});

const ZOutboxMail = z.object({
  id: z.number(),
  kind: z.string(),
  to: z.string(),
  subject: z.string(),
  text: z.string(),
  html: z.string(),
  locale: ZLocale,
  created_at: z.string(),
  sent_at: z.string().nullable(),
  links: z.array(z.string()),
});

/**
 * Development and test only (app.ts never registers this when NODE_ENV is production), and
 * hidden from the API document.
 */
const devRoutes: FastifyPluginAsyncZod = async (app) => {
  app.get(
    '/api/dev/mailbox',
    { schema: { hide: true, querystring: ZMailboxQuery, response: { 200: z.object({ mails: z.array(ZOutboxMail) }) } } },
    async (request, reply) => {
      const query = request.query;
      reply.header('cache-control', 'no-store');
      return { mails: await listOutbox(app.db, { limit: query.limit, ...(query.to ? { to: query.to } : {}) }) };
    },
  );

  app.post(
    '/api/dev/auth_type',
    { schema: { hide: true, body: z.object({ auth_type: ZAuthType }), response: { 200: ZOk.extend({ auth_type: ZAuthType }) } } },
    async (request) => {
      const { auth_type } = request.body;
      await setSiteSetting(app.db, 'auth_type', auth_type);
      return { status: 'ok' as const, auth_type };
    },
  );

  app.post(
    '/api/dev/notify',
    { schema: { hide: true, body: ZDevNotifyBody, response: { 200: ZOk.extend({ id: z.number() }) } } },
    async (request) => {
      const body = request.body;
      let userId: string | null = null;
      if (body.account_id !== undefined) {
        userId = await userIdOfAccount(app.db, body.account_id);
        if (!userId) throw notFoundOf('account');
      }
      const locales = body.locale ? [body.locale] : LOCALES;
      const id = await sendNotification(app.db, {
        userId,
        display: body.display,
        type: body.type,
        closable: body.closable,
        texts: locales.map((locale) => ({ locale, title: body.title, text: body.text, buttons: body.buttons })),
      });
      return { status: 'ok' as const, id };
    },
  );
};

export default devRoutes;
