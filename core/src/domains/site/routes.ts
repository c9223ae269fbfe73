import type { FastifyPluginAsync } from 'fastify';
import { getSiteSettings } from './service.ts';

const siteRoutes: FastifyPluginAsync = async (app) => {
  /** Liveness and database reachability, for the BFF's /local/healthcheck. */
  app.get('/api/health', async () => {
    await app.db.query('SELECT 1');
    return { status: 'ok' };
  });

  app.get('/api/site', async () => ({ site_settings: await getSiteSettings(app.db) }));
};

export default siteRoutes;
