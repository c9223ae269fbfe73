import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { CALLS } from '@obmen/shared/calls';
import { ZOpsWithdrawalParams, type TOpsWithdrawalRejectBody } from '@obmen/shared';
import { schemaOf } from '../../lib/call-schema.ts';
import type { TPayoutDeps } from '../payments/withdrawal-states.ts';
import { opsActorOf } from './customers-routes.ts';
import { approveOnDesk, claimWithdrawal, failOnDesk, rejectOnDesk, retryOnDesk, withdrawalsDesk } from './withdrawals.ts';

const tags = ['Ops'];

/**
 * The withdrawals desk (/ops/withdrawals): everything needs withdrawals.review; the decisions and
 * the payout fixes move money, so they ask for a fresh second factor too. A large approval
 * becomes a four-eyes request (its own permission, checked by the request).
 */
const opsWithdrawalRoutes: FastifyPluginAsyncZod<{ now: () => Date; targetMs: number; payouts: Omit<TPayoutDeps, 'db'> }> = async (
  app,
  { now, targetMs, payouts },
) => {
  const deps: TPayoutDeps = { ...payouts, db: app.db };
  const review = { ops: 'withdrawals.review' as const };
  const decision = { ops: 'withdrawals.review' as const, stepUp: true };

  app.get(
    '/api/ops/withdrawals',
    {
      config: review,
      schema: { tags, summary: 'Withdrawals waiting for an operator, oldest first, and payouts in trouble', ...schemaOf(CALLS['GET /api/ops/withdrawals']) },
    },
    async (request) => ({ status: 'ok' as const, ...(await withdrawalsDesk(app.db, opsActorOf(request, now), targetMs)) }),
  );

  app.post(
    '/api/ops/withdrawals/:id/claim',
    {
      config: review,
      schema: {
        tags,
        summary: 'Takes a waiting withdrawal (409 while a colleague holds it)',
        params: ZOpsWithdrawalParams,
        ...schemaOf(CALLS['POST /api/ops/withdrawals/{id}/claim']),
      },
    },
    async (request) => ({ status: 'ok' as const, claim: await claimWithdrawal(app.db, opsActorOf(request, now), request.params.id) }),
  );

  app.post(
    '/api/ops/withdrawals/:id/approve',
    {
      config: decision,
      schema: {
        tags,
        summary: 'Approves a waiting withdrawal; a large one becomes a request for a second operator',
        params: ZOpsWithdrawalParams,
        ...schemaOf(CALLS['POST /api/ops/withdrawals/{id}/approve']),
      },
    },
    async (request) => ({ status: 'ok' as const, ...(await approveOnDesk(deps, opsActorOf(request, now), request.params.id)) }),
  );

  app.post(
    '/api/ops/withdrawals/:id/reject',
    {
      config: decision,
      schema: {
        tags,
        summary: 'Rejects a waiting withdrawal with a reason the customer reads; the hold is released',
        params: ZOpsWithdrawalParams,
        ...schemaOf(CALLS['POST /api/ops/withdrawals/{id}/reject']),
      },
    },
    async (request) => {
      const { reason, text } = request.body as TOpsWithdrawalRejectBody;
      return { status: 'ok' as const, ...(await rejectOnDesk(app.db, opsActorOf(request, now), request.params.id, reason, text)) };
    },
  );

  app.post(
    '/api/ops/withdrawals/:id/retry',
    {
      config: decision,
      schema: {
        tags,
        summary: 'Hands a stuck payout to its provider again',
        params: ZOpsWithdrawalParams,
        ...schemaOf(CALLS['POST /api/ops/withdrawals/{id}/retry']),
      },
    },
    async (request) => ({ status: 'ok' as const, ...(await retryOnDesk(deps, opsActorOf(request, now), request.params.id)) }),
  );

  app.post(
    '/api/ops/withdrawals/:id/mark-failed',
    {
      config: decision,
      schema: {
        tags,
        summary: 'Gives a stuck payout up: failed, the hold released',
        params: ZOpsWithdrawalParams,
        ...schemaOf(CALLS['POST /api/ops/withdrawals/{id}/mark-failed']),
      },
    },
    async (request) => ({ status: 'ok' as const, ...(await failOnDesk(app.db, opsActorOf(request, now), request.params.id)) }),
  );
};

export default opsWithdrawalRoutes;
