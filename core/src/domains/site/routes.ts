import { z } from 'zod';
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { ZOk, ZSiteResponse } from '@obmen/shared';
import { getSiteSettings, setUserLocale } from './service.ts';
import { toPublicUser } from '../user/public.ts';
import { CALLS } from '@obmen/shared/calls';
import { schemaOf } from '../../lib/call-schema.ts';

const ZHealthDetails = ZOk.extend({
  jobs: z.array(
    z.object({
      name: z.string(),
      enabled: z.boolean(),
      every_ms: z.number().int(),
      running: z.boolean(),
      last_run_at: z.string().nullable(),
      duration_ms: z.number().int().nullable(),
      error: z.string().nullable(),
    }),
  ),
});

const siteRoutes: FastifyPluginAsyncZod = async (app) => {
  app.get(
    '/api/health',
    { schema: { tags: ['Service'], summary: "Liveness and database reachability (the BFF's /local/healthcheck)", response: { 200: ZOk } } },
    async () => {
      await app.db.query('SELECT 1');
      return { status: 'ok' as const };
    },
  );

  // The readiness details for operators and their monitoring, on the core's own port only: the
  // BFF proxies /api/health to anyone but never /api/internal/*, and a job's failure may name
  // tables or hosts.
  app.get(
    '/api/internal/health',
    {
      schema: {
        hide: true,
        tags: ['Service'],
        summary: "Readiness details: database reachability and each timed job's last run, duration and failure",
        response: { 200: ZHealthDetails },
      },
    },
    // Reading the jobs' runs is the database check.
    async () => ({ status: 'ok' as const, jobs: await app.jobs.status() }),
  );

  app.get('/api/site', { schema: { tags: ['Client'], summary: 'Site settings', response: { 200: ZSiteResponse } } }, async () => ({
    site_settings: await getSiteSettings(app.db),
  }));

  app.post(
    '/api/lang',
    {
      schema: {
        tags: ['Client'],
        summary: 'Choose the language',
        description:
          "Signed in: stored as the account's language (mails, and pages when the browser has no i18n_redirected cookie) and the updated `user` comes back. The BFF sets the i18n_redirected cookie (365 days) in both cases.",
        ...schemaOf(CALLS['POST /api/lang']),
      },
    },
    async (request) => {
      const { lang } = request.body;
      request.locale = lang;
      if (!request.user) return { status: 'ok' as const, locale: lang };
      await setUserLocale(app.db, request.user.id, lang);
      request.user = { ...request.user, locale: lang };
      return { status: 'ok' as const, locale: lang, user: toPublicUser(request.user) };
    },
  );
};

export default siteRoutes;
