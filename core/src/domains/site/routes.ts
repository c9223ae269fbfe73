import type { FastifyPluginAsync } from 'fastify';
import { ZLangBody } from '@obmen/shared';
import { getSiteSettings } from './service.ts';
import { parseInput } from '../../validation.ts';

const siteRoutes: FastifyPluginAsync = async (app) => {
  /** Liveness and database reachability, for the BFF's /local/healthcheck. */
  app.get('/api/health', async () => {
    await app.db.query('SELECT 1');
    return { status: 'ok' };
  });

  app.get('/api/site', async () => ({ site_settings: await getSiteSettings(app.db) }));

  app.post('/api/lang', async (request) => {
    const { lang } = parseInput(ZLangBody, request.body);
    return { status: 'ok', locale: lang };
  });
};

export default siteRoutes;
