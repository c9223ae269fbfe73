import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { ZDisplayCurrencyBody, ZWalletsResponse } from '@obmen/shared';
import { currentUser, requireUser } from '../user/current.ts';
import { getWalletEnvelope, setDisplayCurrency } from './service.ts';
import { CALLS } from '@obmen/shared/calls';
import { schemaOf } from '../../lib/call-schema.ts';

const walletRoutes: FastifyPluginAsyncZod = async (app) => {
  app.get(
    '/api/wallets',
    {
      onRequest: requireUser,
      config: { apiKey: 'read' },
      schema: { tags: ['Client'], summary: 'Wallets and the total balance', ...schemaOf(CALLS['GET /api/wallets']) },
    },
    async (request) => ({ status: 'ok' as const, ...(await getWalletEnvelope(app.db, currentUser(request).id)) }),
  );

  app.post(
    '/api/wallets/display_currency',
    {
      onRequest: requireUser,
      schema: { tags: ['Client'], summary: 'The currency of total_balance', body: ZDisplayCurrencyBody, response: { 200: ZWalletsResponse } },
    },
    async (request) => ({ status: 'ok' as const, ...(await setDisplayCurrency(app.db, currentUser(request).id, request.body.currency)) }),
  );
};

export default walletRoutes;
