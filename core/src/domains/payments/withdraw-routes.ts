import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { translate, ZWithdrawalParams, ZWithdrawSystemParams } from '@obmen/shared';
import { notFoundOf } from '../../errors.ts';
import { consumeRateLimit } from '../../rate-limit.ts';
import { callWithIdempotencyKey } from '../idempotency/service.ts';
import { sendCsv } from '../history/service.ts';
import { secondFactorEnabled, withdrawalsBlockedUntil } from '../security/second-factor.ts';
import { getWalletEnvelope } from '../wallets/service.ts';
import { currentUser, requireUser } from '../user/current.ts';
import { groupByCurrency, listPaymentSystems } from './catalogue.ts';
import { userLevel } from '../limits/service.ts';
import type { TDocumentCipher } from '../verification/cipher.ts';
import { WITHDRAW_CSV_COLUMNS, withdrawHistory } from './payment-history.ts';
import { cancelWithdrawal, requestWithdrawal } from './withdrawal-states.ts';
import { checkWithdrawal, openWithdrawals, withdrawalStatus, withdrawLimits } from './withdrawals.ts';
import { CALLS } from '@obmen/shared/calls';
import { csvSchemaOf, schemaOf } from '../../lib/call-schema.ts';

type TWithdrawOptions = { now: () => Date; cipher: TDocumentCipher };

const tags = ['Withdraw'];

/** Spec §7 "Withdraw": the systems, the check, the request, its status and cancel, the history. */
const withdrawRoutes: FastifyPluginAsyncZod<TWithdrawOptions> = async (app, { now, cipher }) => {
  const deps = { db: app.db, now, cipher };

  app.get(
    '/api/withdraw/ps',
    {
      onRequest: requireUser,
      schema: {
        tags,
        summary: 'Withdrawal systems per currency, the limits left, the security pause and the requests under way',
        ...schemaOf(CALLS['GET /api/withdraw/ps']),
      },
    },
    async (request) => {
      const user = currentUser(request);
      const level = await userLevel(app.db, user.id);
      const entries = await listPaymentSystems(app.db, { direction: 'withdraw', userLevel: level });
      const blocked = await withdrawalsBlockedUntil(app.db, user.id);
      return {
        status: 'ok' as const,
        currencies: await groupByCurrency(app.db, entries, request.locale),
        limits: await withdrawLimits(app.db, user.id, now()),
        blocked_until: blocked ? blocked.toISOString() : null,
        second_factor: await secondFactorEnabled(app.db, user.id),
        open: await openWithdrawals(app.db, user.id, request.locale),
      };
    },
  );

  app.post(
    '/api/withdraw/check',
    {
      onRequest: requireUser,
      schema: {
        tags,
        summary: 'Check a withdrawal form: fee, amount received, limits left, field errors (form)',
        ...schemaOf(CALLS['POST /api/withdraw/check']),
      },
    },
    async (request) => {
      const user = currentUser(request);
      await consumeRateLimit(app.db, 'withdraw_check_user', user.id);
      return { status: 'ok' as const, ...(await checkWithdrawal(app.db, user.id, request.body, request.locale, now())) };
    },
  );

  app.post(
    '/api/withdraw/form/:id',
    {
      onRequest: requireUser,
      config: { idempotent: true, paramsError: () => notFoundOf('payment_provider') },
      schema: {
        tags,
        summary: 'Request a withdrawal through system {id} and hold its amount (form; code when 2FA is on)',
        params: ZWithdrawSystemParams,
        ...schemaOf(CALLS['POST /api/withdraw/form/{id}']),
      },
    },
    async (request, reply) => {
      const user = currentUser(request);
      const { withdrawal } = await callWithIdempotencyKey(request, reply, (key) =>
        requestWithdrawal(deps, user.id, key, request.params.id, request.body, request.locale),
      );
      return { status: 'ok' as const, message: translate(request.locale, 'withdraw.placed'), withdrawal, ...(await getWalletEnvelope(app.db, user.id)) };
    },
  );

  app.get(
    '/api/withdraw/status/:id',
    {
      onRequest: requireUser,
      config: { paramsError: () => notFoundOf('withdrawal') },
      schema: {
        tags,
        summary: "One of the caller's withdrawals: state, reason, expected time",
        params: ZWithdrawalParams,
        ...schemaOf(CALLS['GET /api/withdraw/status/{id}']),
      },
    },
    async (request) => ({ status: 'ok' as const, withdrawal: await withdrawalStatus(app.db, currentUser(request).id, request.params.id, request.locale) }),
  );

  app.post(
    '/api/withdraw/cancel/:id',
    {
      onRequest: requireUser,
      config: { idempotent: true, paramsError: () => notFoundOf('withdrawal') },
      schema: {
        tags,
        summary: 'Cancel a withdrawal still awaiting review; the held amount comes back',
        params: ZWithdrawalParams,
        ...schemaOf(CALLS['POST /api/withdraw/cancel/{id}']),
      },
    },
    async (request) => {
      const user = currentUser(request);
      const withdrawal = await cancelWithdrawal(deps, user.id, request.params.id, request.locale);
      return { status: 'ok' as const, message: translate(request.locale, 'withdraw.cancelled_ok'), withdrawal, ...(await getWalletEnvelope(app.db, user.id)) };
    },
  );

  app.get(
    '/api/withdraw/history',
    {
      onRequest: requireUser,
      schema: {
        tags,
        summary: "The caller's withdrawals, filtered and paged (format=csv: a CSV file)",
        ...csvSchemaOf(CALLS['GET /api/withdraw/history']),
      },
    },
    async (request, reply) => {
      const page = await withdrawHistory(app.db, currentUser(request).id, request.query, request.locale);
      if (request.query.format === 'csv') return sendCsv(reply, 'withdraw-history.csv', WITHDRAW_CSV_COLUMNS, page.items);
      return { status: 'ok' as const, ...page };
    },
  );
};

export default withdrawRoutes;
