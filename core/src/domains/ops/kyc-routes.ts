import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { CALLS } from '@obmen/shared/calls';
import { schemaOf } from '../../lib/call-schema.ts';
import type { FastifyRequest } from 'fastify';
import { STORED_FILE_RESPONSE, ZOpsKycParams } from '@obmen/shared';
import { sendDocumentFile, type TVerificationContext } from '../verification/service.ts';
import { opsSessionOf } from './guard.ts';
import { claimKyc, decideKyc, kycFile, kycQueue, kycReview, type TKycActing } from './kyc.ts';

const tags = ['Ops'];

/**
 * Identity review (/ops/kyc): the queue and claims need kyc.review; the review itself shows the
 * document's data in full and the images need kyc.view_documents, both with a fresh second
 * factor, as do the decisions.
 */
const opsKycRoutes: FastifyPluginAsyncZod<{ now: () => Date; targetMs: number; verification: Omit<TVerificationContext, 'db' | 'now'> }> = async (
  app,
  { now, targetMs, verification },
) => {
  const ctx: TVerificationContext = { ...verification, db: app.db, now };
  const acting = (request: FastifyRequest): TKycActing => ({ operator: opsSessionOf(request).operator, requestId: request.id, ip: request.ip, now: now() });

  app.get(
    '/api/ops/kyc',
    {
      config: { ops: 'kyc.review' },
      schema: { tags, summary: 'Submitted verifications, oldest first, with waiting time and claims', ...schemaOf(CALLS['GET /api/ops/kyc']) },
    },
    async (request) => ({ status: 'ok' as const, target_ms: targetMs, items: await kycQueue(app.db, acting(request), targetMs) }),
  );

  app.post(
    '/api/ops/kyc/:id/claim',
    {
      config: { ops: 'kyc.review' },
      schema: {
        tags,
        summary: 'Takes a submitted verification for review (409 while a colleague holds it)',
        params: ZOpsKycParams,
        ...schemaOf(CALLS['POST /api/ops/kyc/{id}/claim']),
      },
    },
    async (request) => ({ status: 'ok' as const, claim: await claimKyc(app.db, acting(request), request.params.id) }),
  );

  app.get(
    '/api/ops/kyc/:id',
    {
      config: { ops: 'kyc.review', stepUp: true },
      schema: {
        tags,
        summary: "A verification's typed data, checks and files (audited view)",
        params: ZOpsKycParams,
        ...schemaOf(CALLS['GET /api/ops/kyc/{id}']),
      },
    },
    async (request) => ({ status: 'ok' as const, review: await kycReview(ctx, acting(request), request.params.id) }),
  );

  app.post(
    '/api/ops/kyc/:id/approve',
    {
      config: { ops: 'kyc.review', stepUp: true },
      schema: {
        tags,
        summary: 'Approves a verification: the customer reaches level 1',
        params: ZOpsKycParams,
        ...schemaOf(CALLS['POST /api/ops/kyc/{id}/approve']),
      },
    },
    async (request) => ({ status: 'ok' as const, verification_status: await decideKyc(ctx, acting(request), request.params.id, { action: 'approve' }) }),
  );

  app.post(
    '/api/ops/kyc/:id/reject',
    {
      config: { ops: 'kyc.review', stepUp: true },
      schema: {
        tags,
        summary: 'Rejects files of a verification, each with a reason from the catalogue; the customer sends those again',
        params: ZOpsKycParams,
        ...schemaOf(CALLS['POST /api/ops/kyc/{id}/reject']),
      },
    },
    async (request) => ({
      status: 'ok' as const,
      verification_status: await decideKyc(ctx, acting(request), request.params.id, { action: 'reject', ...request.body }),
    }),
  );

  app.get(
    '/api/ops/kyc/file/:id',
    {
      config: { ops: 'kyc.view_documents', stepUp: true },
      schema: {
        tags,
        summary: 'A document image for the reviewer (private, not cached, audited)',
        params: ZOpsKycParams,
        response: { 200: STORED_FILE_RESPONSE },
      },
    },
    async (request, reply) => sendDocumentFile(reply, app.storage, await kycFile(app.db, acting(request), request.params.id)),
  );
};

export default opsKycRoutes;
