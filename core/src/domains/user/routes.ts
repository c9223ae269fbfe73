import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { translate } from '@obmen/shared';
import { currentUser, requireUser } from './current.ts';
import { toPublicUser } from './public.ts';
import { getUserInfo, updateUserInfo } from './service.ts';
import { CALLS } from '@obmen/shared/calls';
import { schemaOf } from '../../lib/call-schema.ts';

const userRoutes: FastifyPluginAsyncZod = async (app) => {
  const tags = ['Auth'];

  app.get(
    '/api/user/info',
    { onRequest: requireUser, schema: { tags, summary: 'The account and personal data', ...schemaOf(CALLS['GET /api/user/info']) } },
    async (request) => {
      const user = currentUser(request);
      return { user: toPublicUser(user), info: await getUserInfo(app.db, user.id) };
    },
  );

  app.post(
    '/api/user/info',
    {
      onRequest: requireUser,
      schema: {
        tags,
        summary: 'Change personal data (form data; a missing field stays, an empty one is cleared)',
        ...schemaOf(CALLS['POST /api/user/info']),
      },
    },
    async (request) => {
      const user = currentUser(request);
      const info = await updateUserInfo(app.db, user.id, request.body);
      return { status: 'ok' as const, message: translate(request.locale, 'user.info_saved'), user: toPublicUser(user), info };
    },
  );
};

export default userRoutes;
