import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { CALLS } from '@obmen/shared/calls';
import { ZOpsBankPaymentParams, ZOpsChainDepositParams, ZOpsWebhookParams, type TOpsBankMatchBody, type TOpsPaymentsQuery } from '@obmen/shared';
import { schemaOf } from '../../lib/call-schema.ts';
import type { TIssuers } from '../cards/issuer.ts';
import type { TProviders } from '../payments/providers.ts';
import { opsActorOf } from './customers-routes.ts';
import { issuerCallbacks, matchOnDesk, paymentsDesk, paymentWebhooks, releaseOnDesk, replayOnDesk } from './payments.ts';

const tags = ['Ops'];

/**
 * The payments desk (/ops/payments): everything needs payments.review; replaying a delivery,
 * matching a bank payment and releasing a held chain deposit move money, so they ask for a fresh
 * second factor too. A match of another amount becomes a four-eyes request (checked by the request).
 */
const opsPaymentRoutes: FastifyPluginAsyncZod<{ now: () => Date; providers: TProviders; issuers: TIssuers }> = async (app, { now, providers, issuers }) => {
  const webhooks = paymentWebhooks(providers);
  const callbacks = issuerCallbacks(issuers);
  const review = { ops: 'payments.review' as const };
  const action = { ops: 'payments.review' as const, stepUp: true };

  app.get(
    '/api/ops/payments',
    {
      config: review,
      schema: {
        tags,
        summary: 'Failed provider deliveries, held bank payments, chain deposits and card orders waiting, each against its target',
        ...schemaOf(CALLS['GET /api/ops/payments']),
      },
    },
    async (request) => ({
      status: 'ok' as const,
      ...(await paymentsDesk(app.db, opsActorOf(request, now), (request.query as TOpsPaymentsQuery).q)),
    }),
  );

  app.post(
    '/api/ops/payments/webhooks/:id/replay',
    {
      config: action,
      schema: {
        tags,
        summary: 'Processes a failed provider delivery again now, through the inbox',
        params: ZOpsWebhookParams,
        ...schemaOf(CALLS['POST /api/ops/payments/webhooks/{id}/replay']),
      },
    },
    async (request) => ({ status: 'ok' as const, ...(await replayOnDesk(app.db, webhooks, opsActorOf(request, now), request.params.id)) }),
  );

  app.post(
    '/api/ops/payments/callbacks/:id/replay',
    {
      config: action,
      schema: {
        tags,
        summary: "Processes a failed card issuer's callback again now, through the inbox",
        params: ZOpsWebhookParams,
        ...schemaOf(CALLS['POST /api/ops/payments/callbacks/{id}/replay']),
      },
    },
    async (request) => ({ status: 'ok' as const, ...(await replayOnDesk(app.db, callbacks, opsActorOf(request, now), request.params.id)) }),
  );

  app.post(
    '/api/ops/payments/chain/:id/release',
    {
      config: action,
      schema: {
        tags,
        summary: "Credits a chain deposit held above its customer's limits",
        params: ZOpsChainDepositParams,
        ...schemaOf(CALLS['POST /api/ops/payments/chain/{id}/release']),
      },
    },
    async (request) => ({ status: 'ok' as const, ...(await releaseOnDesk(app.db, opsActorOf(request, now), request.params.id)) }),
  );

  app.post(
    '/api/ops/payments/bank/:id/match',
    {
      config: action,
      schema: {
        tags,
        summary: 'Matches a held bank payment to a deposit: credited now, or a request for a second operator when the amounts differ',
        params: ZOpsBankPaymentParams,
        ...schemaOf(CALLS['POST /api/ops/payments/bank/{id}/match']),
      },
    },
    async (request) => ({
      status: 'ok' as const,
      ...(await matchOnDesk(app.db, opsActorOf(request, now), request.params.id, (request.body as TOpsBankMatchBody).deposit)),
    }),
  );
};

export default opsPaymentRoutes;
