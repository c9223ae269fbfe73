import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { CALLS } from '@obmen/shared/calls';
import { schemaOf } from '../../lib/call-schema.ts';
import { ZOpsRequestParams, ZOpsRequestResponse, type TOpsProposal, type TOpsReason, type TOpsRequestsQuery } from '@obmen/shared';
import { opsActorOf } from './customers-routes.ts';
import { opsSessionOf } from './guard.ts';
import { decideRequest, listRequests, proposeRequest } from './requests.ts';
import { listOperators } from './service.ts';

const tags = ['Ops'];

/**
 * Four eyes: proposals and their decisions. Which permission a request needs depends on its
 * action, so the routes ask only for a signed-in operator with a fresh second factor and the
 * service checks the action's permission (a refusal audited like the guard's).
 */
const requestRoutes: FastifyPluginAsyncZod<{ now: () => Date }> = async (app, { now }) => {
  app.get(
    '/api/ops/requests',
    {
      config: { ops: 'signed_in' },
      schema: { tags, summary: 'Requests waiting for a second operator, and the latest decided', ...schemaOf(CALLS['GET /api/ops/requests']) },
    },
    async (request) => ({
      status: 'ok' as const,
      ...(await listRequests(app.db, opsSessionOf(request).operator.id, now(), (request.query as TOpsRequestsQuery).account_id)),
    }),
  );

  app.post(
    '/api/ops/requests',
    {
      config: { ops: 'signed_in', stepUp: true },
      schema: { tags, summary: 'Proposes an action that a second operator must approve', ...schemaOf(CALLS['POST /api/ops/requests']) },
    },
    async (request) => ({
      status: 'ok' as const,
      request: await proposeRequest(app.db, request.body as TOpsProposal & { reason: TOpsReason; text: string }, opsActorOf(request, now)),
    }),
  );

  for (const decision of ['approve', 'decline', 'withdraw'] as const) {
    app.post(
      `/api/ops/requests/:id/${decision}`,
      {
        config: { ops: 'signed_in', stepUp: true },
        schema: {
          tags,
          summary:
            decision === 'approve'
              ? 'Approves a request (never its proposer): the action runs with the approval'
              : decision === 'decline'
                ? 'Declines a request (never its proposer)'
                : 'Withdraws a request of your own',
          params: ZOpsRequestParams,
          response: { 200: ZOpsRequestResponse },
        },
      },
      async (request) => ({ status: 'ok' as const, request: await decideRequest(app.db, request.params.id, decision, opsActorOf(request, now)) }),
    );
  }

  app.get(
    '/api/ops/operators',
    { config: { ops: 'operators.manage' }, schema: { tags, summary: 'The operators, their roles and state', ...schemaOf(CALLS['GET /api/ops/operators']) } },
    async () => ({ status: 'ok' as const, operators: await listOperators(app.db) }),
  );
};

export default requestRoutes;
