import type { FastifyPluginAsync } from 'fastify';
import type { TUser } from '@obmen/shared';
import { getSiteSettings } from '../site/service.ts';

const authRoutes: FastifyPluginAsync = async (app) => {
  app.get('/api/auth/check', async (request) => {
    const user: TUser = { is_authenticated: false, account_id: null, need_set_password: false, locale: request.locale };
    return { user, locale: user.locale, site_settings: await getSiteSettings(app.db) };
  });
};

export default authRoutes;
