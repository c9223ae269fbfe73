import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { CALLS } from '@obmen/shared/calls';
import { schemaOf } from '../../lib/call-schema.ts';
import type { FastifyRequest } from 'fastify';
import { ZOk, ZOpsCustomerActionBody, ZOpsCustomerParams } from '@obmen/shared';
import {
  addCustomerNote,
  findCustomer,
  revealCustomer,
  revokeCustomerSessions,
  searchCustomers,
  setSignInBlocked,
  setWithdrawalsBlocked,
  viewCustomer,
  type TOpsActor,
} from './customers.ts';
import { opsSessionOf } from './guard.ts';
import type { TDocumentCipher } from '../verification/cipher.ts';

const tags = ['Ops'];

/** Who acts in an /api/ops call: the session's operator, the request's id and address, the clock. */
export const opsActorOf = (request: FastifyRequest, now: () => Date): TOpsActor => ({
  operator: opsSessionOf(request).operator,
  requestId: request.id,
  ip: request.ip,
  now: now(),
});

/** The customer view's calls: find, see, reveal, and the audited actions (each with a fresh second factor). */
const customerRoutes: FastifyPluginAsyncZod<{ now: () => Date; cipher: Pick<TDocumentCipher, 'lookupHash'> }> = async (app, { now, cipher }) => {
  const actorOf = (request: FastifyRequest) => opsActorOf(request, now);
  const customerOf = (request: FastifyRequest<{ Params: { account_id: number } }>) => findCustomer(app.db, request.params.account_id);

  app.get(
    '/api/ops/customers',
    {
      config: { ops: 'customers.view' },
      schema: { tags, summary: 'Finds customers by account id, e-mail, name, phone or deposit address', ...schemaOf(CALLS['GET /api/ops/customers']) },
    },
    async (request) => ({ status: 'ok' as const, customers: await searchCustomers(app.db, request.query.q, (plain) => cipher.lookupHash(plain)) }),
  );

  app.get(
    '/api/ops/customers/:account_id',
    {
      config: { ops: 'customers.view' },
      schema: {
        tags,
        summary: 'Everything about one customer, personal data masked',
        params: ZOpsCustomerParams,
        ...schemaOf(CALLS['GET /api/ops/customers/{account_id}']),
      },
    },
    async (request) => ({ status: 'ok' as const, customer: await viewCustomer(app.db, await customerOf(request), actorOf(request)) }),
  );

  app.post(
    '/api/ops/customers/:account_id/reveal',
    {
      config: { ops: 'customers.view_personal', stepUp: true },
      schema: {
        tags,
        summary: "The customer's personal data in full (audited)",
        params: ZOpsCustomerParams,
        ...schemaOf(CALLS['POST /api/ops/customers/{account_id}/reveal']),
      },
    },
    async (request) => ({ status: 'ok' as const, customer: await revealCustomer(app.db, await customerOf(request), { ...actorOf(request), ...request.body }) }),
  );

  for (const [path, blocked] of [
    ['block-sign-in', true],
    ['unblock-sign-in', false],
  ] as const) {
    app.post(
      `/api/ops/customers/:account_id/${path}`,
      {
        config: { ops: 'customers.block', stepUp: true },
        schema: {
          tags,
          summary: blocked ? "Blocks the customer's sign-in and ends every session" : "Lifts the block on the customer's sign-in",
          params: ZOpsCustomerParams,
          body: ZOpsCustomerActionBody,
          response: { 200: ZOk },
        },
      },
      async (request) => {
        await setSignInBlocked(app.db, await customerOf(request), blocked, { ...actorOf(request), ...request.body });
        return { status: 'ok' as const };
      },
    );
  }

  app.post(
    '/api/ops/customers/:account_id/block-withdrawals',
    {
      config: { ops: 'customers.block', stepUp: true },
      schema: {
        tags,
        summary: "Blocks the customer's withdrawals until a day, or lifts the block",
        params: ZOpsCustomerParams,
        ...schemaOf(CALLS['POST /api/ops/customers/{account_id}/block-withdrawals']),
      },
    },
    async (request) => {
      const { until, ...reason } = request.body;
      await setWithdrawalsBlocked(app.db, await customerOf(request), until, { ...actorOf(request), ...reason });
      return { status: 'ok' as const };
    },
  );

  app.post(
    '/api/ops/customers/:account_id/revoke-sessions',
    {
      config: { ops: 'customers.block', stepUp: true },
      schema: {
        tags,
        summary: 'Signs the customer out on every device',
        params: ZOpsCustomerParams,
        ...schemaOf(CALLS['POST /api/ops/customers/{account_id}/revoke-sessions']),
      },
    },
    async (request) => {
      await revokeCustomerSessions(app.db, await customerOf(request), { ...actorOf(request), ...request.body });
      return { status: 'ok' as const };
    },
  );

  app.post(
    '/api/ops/customers/:account_id/notes',
    {
      config: { ops: 'customers.note' },
      schema: {
        tags,
        summary: 'Adds a note on the customer for colleagues',
        params: ZOpsCustomerParams,
        ...schemaOf(CALLS['POST /api/ops/customers/{account_id}/notes']),
      },
    },
    async (request) => {
      await addCustomerNote(app.db, await customerOf(request), request.body.text, actorOf(request));
      return { status: 'ok' as const };
    },
  );
};

export default customerRoutes;
