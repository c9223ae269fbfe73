import type { FastifyPluginAsync } from 'fastify';
import { z } from 'zod';
import { ZAuthType } from '@obmen/shared';
import { parseInput } from '../../validation.ts';
import { listOutbox } from '../../mail/outbox.ts';
import { setSiteSetting } from '../site/service.ts';

const ZMailboxQuery = z.object({
  to: z.string().trim().max(254).optional(),
  limit: z.coerce.number().int().min(1).max(200).default(50),
});

/**
 * Development and test only (app.ts never registers this when NODE_ENV is production):
 *   GET  /api/dev/mailbox?to=&limit=  → {mails: [{id, kind, to, subject, text, html, locale, created_at, sent_at, links}]}, newest first
 *   POST /api/dev/auth_type {auth_type: 'password'|'email'} → {status:'ok', auth_type}  (switch login modes in e2e)
 */
const devRoutes: FastifyPluginAsync = async (app) => {
  app.get('/api/dev/mailbox', async (request, reply) => {
    const query = parseInput(ZMailboxQuery, request.query);
    reply.header('cache-control', 'no-store');
    return { mails: await listOutbox(app.db, { limit: query.limit, ...(query.to ? { to: query.to } : {}) }) };
  });

  app.post('/api/dev/auth_type', async (request) => {
    const { auth_type } = parseInput(z.object({ auth_type: ZAuthType }), request.body);
    await setSiteSetting(app.db, 'auth_type', auth_type);
    return { status: 'ok', auth_type };
  });
};

export default devRoutes;
