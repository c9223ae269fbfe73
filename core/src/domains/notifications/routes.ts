import type { FastifyPluginAsync } from 'fastify';
import { ZNotifyCloseBody, type TNotifyCloseResponse } from '@obmen/shared';
import { parseInput } from '../../validation.ts';
import { closeNotification, listOpenNotifications } from './service.ts';

/**
 * GET  /api/notify            {notifications}: the viewer's open ones (also in /api/auth/check)
 * POST /api/notify/close {id} {status:'ok', id, remembered}; 404 not_found, 409 not_closable
 */
const notificationRoutes: FastifyPluginAsync = async (app) => {
  app.get('/api/notify', async (request) => ({
    notifications: await listOpenNotifications(app.db, request.user?.id ?? null, request.locale),
  }));

  app.post('/api/notify/close', async (request): Promise<TNotifyCloseResponse> => {
    const { id } = parseInput(ZNotifyCloseBody, request.body);
    const { remembered } = await closeNotification(app.db, request.user?.id ?? null, id);
    return { status: 'ok', id, remembered };
  });
};

export default notificationRoutes;
