import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { ZNotificationsResponse } from '@obmen/shared';
import { closeNotification, listOpenNotifications } from './service.ts';
import { CALLS } from '@obmen/shared/calls';
import { schemaOf } from '../../lib/call-schema.ts';

const notificationRoutes: FastifyPluginAsyncZod = async (app) => {
  app.get(
    '/api/notify',
    { schema: { tags: ['Client'], summary: "The caller's open notifications (also in /api/auth/check)", response: { 200: ZNotificationsResponse } } },
    async (request) => ({ notifications: await listOpenNotifications(app.db, request.user?.id ?? null, request.locale) }),
  );

  app.post(
    '/api/notify/close',
    {
      schema: {
        tags: ['Client'],
        summary: 'Close a notification',
        description:
          '`remembered`: stored for the signed-in user; anonymous visitors keep their closes in localStorage. 404 `notification_not_found`, 409 `not_closable`.',
        ...schemaOf(CALLS['POST /api/notify/close']),
      },
    },
    async (request) => {
      const { id } = request.body;
      const { remembered } = await closeNotification(app.db, request.user?.id ?? null, id);
      return { status: 'ok' as const, id, remembered };
    },
  );
};

export default notificationRoutes;
