import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { CALLS } from '@obmen/shared/calls';
import { ZOpsSuspenseParams } from '@obmen/shared';
import { csvSchemaOf, schemaOf } from '../../lib/call-schema.ts';
import { opsActorOf } from './customers-routes.ts';
import { dashboard, type TDashboardDeps } from './dashboard.ts';
import { opsSessionOf } from './guard.ts';
import { explainSuspense, proposeSuspenseAdjustment, reconciliationCsv, reconciliationReport } from './reconciliation.ts';

const tags = ['Ops'];

/**
 * Reconciliation (/ops/reconciliation) and the back office's home (/ops). Seeing the report
 * needs reconciliation.view; resolving an item reconciliation.resolve and a fresh second factor
 * (an adjustment is a `ledger.adjust` request, whose own permission the request checks).
 */
const opsReconciliationRoutes: FastifyPluginAsyncZod<{ now: () => Date; dashboard: Omit<TDashboardDeps, 'db'> }> = async (app, { now, dashboard: deps }) => {
  const resolve = { ops: 'reconciliation.resolve' as const, stepUp: true };

  app.get(
    '/api/ops/reconciliation',
    {
      config: { ops: 'reconciliation.view' },
      schema: {
        tags,
        summary:
          "A period's reconciliation of a provider (or all) against the clearing accounts; its differences kept in the suspense list (format=csv: the differences)",
        ...csvSchemaOf(CALLS['GET /api/ops/reconciliation']),
      },
    },
    async (request, reply) => {
      const { provider, from, to, format } = request.query;
      const report = await reconciliationReport(app.db, { from, to, ...(provider ? { provider } : {}) }, now(), opsActorOf(request, now));
      if (format === 'csv') {
        return reply
          .type('text/csv; charset=utf-8')
          .header('content-disposition', `attachment; filename="reconciliation-${provider ?? 'all'}-${from}-${to}.csv"`)
          .header('cache-control', 'no-store')
          .send(reconciliationCsv(report));
      }
      return { status: 'ok' as const, ...report };
    },
  );

  app.post(
    '/api/ops/reconciliation/suspense/:id/explain',
    {
      config: resolve,
      schema: {
        tags,
        summary: 'Resolves a suspense item with an explanation',
        params: ZOpsSuspenseParams,
        ...schemaOf(CALLS['POST /api/ops/reconciliation/suspense/{id}/explain']),
      },
    },
    async (request) => ({ status: 'ok' as const, item: await explainSuspense(app.db, request.params.id, request.body.text, opsActorOf(request, now)) }),
  );

  app.post(
    '/api/ops/reconciliation/suspense/:id/adjust',
    {
      config: resolve,
      schema: {
        tags,
        summary: 'Proposes the ledger adjustment that settles a suspense item (a four-eyes request; resolved when approved)',
        params: ZOpsSuspenseParams,
        ...schemaOf(CALLS['POST /api/ops/reconciliation/suspense/{id}/adjust']),
      },
    },
    async (request) => ({ status: 'ok' as const, item: await proposeSuspenseAdjustment(app.db, request.params.id, request.body, opsActorOf(request, now)) }),
  );

  app.get(
    '/api/ops/dashboard',
    {
      config: { ops: 'queues.view' },
      schema: {
        tags,
        summary: "The home: this operator's queues (overdue first), today's volumes, the parts' health",
        ...schemaOf(CALLS['GET /api/ops/dashboard']),
      },
    },
    async (request) => ({ status: 'ok' as const, ...(await dashboard({ ...deps, db: app.db }, opsSessionOf(request).operator.permissions, now())) }),
  );
};

export default opsReconciliationRoutes;
