import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { translate } from '@obmen/shared';
import { currentUser, requireUser } from '../user/current.ts';
import { callWithIdempotencyKey } from '../idempotency/service.ts';
import { getWalletEnvelope } from '../wallets/service.ts';
import { TRANSFER_CSV_COLUMNS, sendCsv, transferHistory } from '../history/service.ts';
import { checkTransfer, makeTransfer, transferInfo } from './service.ts';
import { consumeRateLimit } from '../../rate-limit.ts';
import { CALLS } from '@obmen/shared/calls';
import { csvSchemaOf, schemaOf } from '../../lib/call-schema.ts';

/** Transfers between users (spec §7 Transfer). Every route needs a signed-in user. */
const transferRoutes: FastifyPluginAsyncZod<{ now: () => Date }> = async (app, { now }) => {
  const tags = ['Transfer'];

  app.get(
    '/api/transfer',
    {
      onRequest: requireUser,
      config: { apiKey: 'read' },
      schema: { tags, summary: 'What can be sent: currencies, limits, fees, balances', ...schemaOf(CALLS['GET /api/transfer']) },
    },
    async (request) => {
      const user = currentUser(request);
      return { status: 'ok' as const, ...(await transferInfo(app.db, user.id)), ...(await getWalletEnvelope(app.db, user.id)) };
    },
  );

  app.post(
    '/api/transfer/check',
    {
      onRequest: requireUser,
      config: { apiKey: 'transfer' },
      schema: {
        tags,
        summary: "Check a transfer: the recipient's masked name, the fee, the total (form)",
        ...schemaOf(CALLS['POST /api/transfer/check']),
      },
    },
    async (request) => {
      const user = currentUser(request);
      await consumeRateLimit(app.db, 'transfer_check_user', user.id);
      return checkTransfer(app.db, user.id, request.body, user.second_factor);
    },
  );

  app.post(
    '/api/transfer',
    {
      onRequest: requireUser,
      config: { idempotent: true, apiKey: 'transfer' },
      schema: { tags, summary: 'Send money to another account (form)', ...schemaOf(CALLS['POST /api/transfer']) },
    },
    async (request, reply) => {
      const user = currentUser(request);
      const result = await callWithIdempotencyKey(request, reply, (key) =>
        makeTransfer(app.db, user.id, key, request.body, user.second_factor ? { nowMs: now().getTime() } : null),
      );
      const { transfer } = result;
      return {
        status: 'ok' as const,
        message: translate(request.locale, 'transfer.done', { amount: transfer.amount, currency: transfer.currency, name: transfer.name }),
        transfer,
        wallets: result.wallets,
        total_balance: result.total_balance,
      };
    },
  );

  app.get(
    '/api/transfer/history',
    {
      onRequest: requireUser,
      config: { apiKey: 'read' },
      schema: {
        tags,
        summary: "The caller's transfers, filtered and paged (format=csv: a CSV file)",
        ...csvSchemaOf(CALLS['GET /api/transfer/history']),
      },
    },
    async (request, reply) => {
      const query = request.query;
      const page = await transferHistory(app.db, currentUser(request).id, query);
      if (query.format === 'csv') {
        return sendCsv(reply, 'transfer-history.csv', TRANSFER_CSV_COLUMNS, page.items);
      }
      return { status: 'ok' as const, ...page };
    },
  );
};

export default transferRoutes;
