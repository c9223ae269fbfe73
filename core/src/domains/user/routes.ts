import type { FastifyPluginAsync } from 'fastify';
import { ZUserInfoUpdate, translate } from '@obmen/shared';
import { parseInput } from '../../validation.ts';
import { currentUser, requireUser } from './current.ts';
import { toPublicUser } from './public.ts';
import { getUserInfo, updateUserInfo } from './service.ts';

/** GET and POST /api/user/info (POST as form data, JSON accepted too). */
const userRoutes: FastifyPluginAsync = async (app) => {
  app.get('/api/user/info', { preHandler: requireUser }, async (request) => {
    const user = currentUser(request);
    return { user: toPublicUser(user), info: await getUserInfo(app.db, user.id) };
  });

  app.post('/api/user/info', { preHandler: requireUser }, async (request) => {
    const user = currentUser(request);
    const info = await updateUserInfo(app.db, user.id, parseInput(ZUserInfoUpdate, request.body ?? {}));
    return { status: 'ok', message: translate(request.locale, 'user.info_saved'), user: toPublicUser(user), info };
  });
};

export default userRoutes;
