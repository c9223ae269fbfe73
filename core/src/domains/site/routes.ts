import type { FastifyPluginAsync } from 'fastify';
import { ZLangBody } from '@obmen/shared';
import { getSiteSettings, setUserLocale } from './service.ts';
import { parseInput } from '../../validation.ts';
import { toPublicUser } from '../user/public.ts';

const siteRoutes: FastifyPluginAsync = async (app) => {
  /** Liveness and database reachability, for the BFF's /local/healthcheck. */
  app.get('/api/health', async () => {
    await app.db.query('SELECT 1');
    return { status: 'ok' };
  });

  app.get('/api/site', async () => ({ site_settings: await getSiteSettings(app.db) }));

  /**
   * POST /api/lang {lang} (spec §4). Signed in: stored as the user's language (mails, and the
   * page language when the browser has no i18n_redirected cookie) and the updated `user` comes
   * back. Anonymous: nothing to store, just ok (the BFF sets the cookie in both cases).
   */
  app.post('/api/lang', async (request) => {
    const { lang } = parseInput(ZLangBody, request.body);
    request.locale = lang;
    if (!request.user) return { status: 'ok', locale: lang };
    await setUserLocale(app.db, request.user.id, lang);
    request.user = { ...request.user, locale: lang };
    return { status: 'ok', locale: lang, user: toPublicUser(request.user) };
  });
};

export default siteRoutes;
