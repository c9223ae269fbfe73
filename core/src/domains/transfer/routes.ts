import type { FastifyPluginAsync } from 'fastify';
import { REPLAYED_HEADER, ZHistoryQuery, ZTransferBody, translate } from '@obmen/shared';
import { parseInput } from '../../validation.ts';
import { currentUser, requireUser } from '../user/current.ts';
import { idempotencyKeyOf } from '../idempotency/service.ts';
import { getWalletEnvelope } from '../wallets/service.ts';
import { TRANSFER_CSV_COLUMNS, sendCsv, transferHistory } from '../history/service.ts';
import { checkTransfer, makeTransfer, transferInfo } from './service.ts';
import { consumeRateLimit } from '../../rate-limit.ts';

/** Transfers between users (spec §7 Transfer). Every route needs a signed-in user. */
const transferRoutes: FastifyPluginAsync = async (app) => {
  app.get('/api/transfer', { preHandler: requireUser }, async (request) => {
    const user = currentUser(request);
    return { status: 'ok', ...(await transferInfo(app.db, user.id)), ...(await getWalletEnvelope(app.db, user.id)) };
  });

  app.post('/api/transfer/check', { preHandler: requireUser }, async (request) => {
    const user = currentUser(request);
    await consumeRateLimit(app.db, 'transfer_check_user', user.id);
    return checkTransfer(app.db, user.id, parseInput(ZTransferBody, request.body ?? {}));
  });

  app.post('/api/transfer', { preHandler: requireUser }, async (request, reply) => {
    const user = currentUser(request);
    const key = idempotencyKeyOf(request);
    const result = await makeTransfer(app.db, user.id, key, parseInput(ZTransferBody, request.body ?? {}));
    if (result.replayed) reply.header(REPLAYED_HEADER, 'true');
    const { transfer } = result;
    return {
      status: 'ok',
      message: translate(request.locale, 'transfer.done', { amount: transfer.amount, currency: transfer.currency, name: transfer.name }),
      transfer,
      wallets: result.wallets,
      total_balance: result.total_balance,
    };
  });

  app.get('/api/transfer/history', { preHandler: requireUser }, async (request, reply) => {
    const query = parseInput(ZHistoryQuery, request.query ?? {});
    const page = await transferHistory(app.db, currentUser(request).id, query);
    if (query.format === 'csv') {
      return sendCsv(reply, 'transfer-history.csv', TRANSFER_CSV_COLUMNS, page.items);
    }
    return { status: 'ok', ...page };
  });
};

export default transferRoutes;
