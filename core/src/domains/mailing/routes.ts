import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { translate } from '@obmen/shared';
import { currentUser, requireUser } from '../user/current.ts';
import { changeMailingPreferences, confirmUnsubscribe, describeUnsubscribe, mailingPreferences, setAntiPhishingCode } from './service.ts';
import { CALLS } from '@obmen/shared/calls';
import { schemaOf } from '../../lib/call-schema.ts';

/** Mail preferences (/settings/mail) and the signed one-click unsubscribe (no sign-in). */
const mailingRoutes: FastifyPluginAsyncZod<{ now: () => Date }> = async (app, { now }) => {
  const tags = ['Client'];

  app.get(
    '/api/config/mailing',
    { onRequest: requireUser, schema: { tags, summary: 'Which optional mails the user gets', ...schemaOf(CALLS['GET /api/config/mailing']) } },
    async (request) => ({ status: 'ok' as const, ...(await mailingPreferences(app.db, currentUser(request).id)) }),
  );

  app.post(
    '/api/config/anti_phishing',
    {
      onRequest: requireUser,
      schema: {
        tags,
        summary: 'Set or remove the anti-phishing code printed at the top of every mail (the second factor when 2FA is on)',
        ...schemaOf(CALLS['POST /api/config/anti_phishing']),
      },
    },
    async (request) => ({
      status: 'ok' as const,
      message: translate(request.locale, 'mailprefs.anti_phishing_saved'),
      anti_phishing_code: await setAntiPhishingCode(app.db, currentUser(request).id, request.body, now()),
    }),
  );

  app.post(
    '/api/config/mailing',
    {
      onRequest: requireUser,
      schema: { tags, summary: 'Switch optional mails on or off (security mails have no switch)', ...schemaOf(CALLS['POST /api/config/mailing']) },
    },
    async (request) => ({
      status: 'ok' as const,
      message: translate(request.locale, 'mailprefs.saved'),
      mailing: await changeMailingPreferences(app.db, currentUser(request).id, request.body),
    }),
  );

  app.get(
    '/api/mail/unsubscribe',
    {
      schema: { tags, summary: 'What an unsubscribe link names (changes nothing)', ...schemaOf(CALLS['GET /api/mail/unsubscribe']) },
    },
    async (request) => ({ status: 'ok' as const, ...(await describeUnsubscribe(app.db, request.query.t)) }),
  );

  app.post(
    '/api/mail/unsubscribe',
    {
      schema: {
        tags,
        summary: 'Unsubscribe by a signed link: the page button or a mail client one-click POST (RFC 8058)',
        ...schemaOf(CALLS['POST /api/mail/unsubscribe']),
      },
    },
    async (request) => ({
      status: 'ok' as const,
      ...(await confirmUnsubscribe(app.db, request.query.t)),
      message: translate(request.locale, 'mailprefs.unsubscribed'),
    }),
  );
};

export default mailingRoutes;
