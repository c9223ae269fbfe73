import type { FastifyPluginAsync } from 'fastify';
import { ZDisplayCurrencyBody } from '@obmen/shared';
import { parseInput } from '../../validation.ts';
import { currentUser, requireUser } from '../user/current.ts';
import { getWalletEnvelope, setDisplayCurrency } from './service.ts';

/** GET /api/wallets; POST /api/wallets/display_currency {currency}: the envelope keys wallets and total_balance. */
const walletRoutes: FastifyPluginAsync = async (app) => {
  app.get('/api/wallets', { preHandler: requireUser }, async (request) => ({
    status: 'ok',
    ...(await getWalletEnvelope(app.db, currentUser(request).id)),
  }));

  app.post('/api/wallets/display_currency', { preHandler: requireUser }, async (request) => {
    const { currency } = parseInput(ZDisplayCurrencyBody, request.body ?? {});
    return { status: 'ok', ...(await setDisplayCurrency(app.db, currentUser(request).id, currency)) };
  });
};

export default walletRoutes;
