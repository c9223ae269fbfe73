import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { STORED_FILE_RESPONSE, ZVerificationTypeParams } from '@obmen/shared';
import type { TConfig } from '../../config.ts';
import { notFoundOf } from '../../errors.ts';
import { currentUser, requireUser } from '../user/current.ts';
import { receiveUpload, refuseOversizedUpload } from '../../storage/upload.ts';
import { toPublicUser } from '../user/public.ts';
import { openDocumentCipher } from './cipher.ts';
import {
  findOwnFile,
  getVerificationState,
  openDraft,
  sendDocumentFile,
  submitVerification,
  uploadVerificationFiles,
  type TVerificationContext,
} from './service.ts';
import { CALLS } from '@obmen/shared/calls';
import { schemaOf } from '../../lib/call-schema.ts';

const ZFileParams = z.object({ id: z.string() });

/** Spec §7 "Verification", plus the owner's read of their own files. */
const verificationRoutes: FastifyPluginAsyncZod<{ config: TConfig; now?: () => Date }> = async (app, { config, now }) => {
  const ctx: TVerificationContext = {
    db: app.db,
    storage: app.storage,
    cipher: openDocumentCipher(config, (msg) => app.log.warn(msg)),
    publicUrl: config.PUBLIC_URL,
    now: now ?? (() => new Date()),
  };
  const answer = async (request: Parameters<typeof currentUser>[0], state: Awaited<ReturnType<typeof getVerificationState>>) => ({
    status: 'ok' as const,
    user: toPublicUser(currentUser(request)),
    verification: state,
  });
  const tags = ['Verification'];

  app.get(
    '/api/verification',
    { onRequest: requireUser, schema: { tags, summary: "The caller's verification state and limits", ...schemaOf(CALLS['GET /api/verification']) } },
    async (request) => answer(request, await getVerificationState(app.db, currentUser(request).id)),
  );

  app.get(
    '/api/verification/:type/new',
    {
      onRequest: requireUser,
      schema: {
        tags,
        summary: 'Open (or reuse) a draft for one document type',
        params: ZVerificationTypeParams,
        ...schemaOf(CALLS['GET /api/verification/{type}/new']),
      },
    },
    async (request) => answer(request, await openDraft(app.db, currentUser(request).id, request.params.type)),
  );

  // multipart/form-data (id, file0..n, side0..n): streamed to storage and checked by the service.
  app.post(
    '/api/verification/:type/upload',
    {
      onRequest: requireUser,
      preValidation: refuseOversizedUpload,
      schema: {
        tags,
        summary: 'Upload document files (multipart/form-data: id, file0..n with side0..n)',
        params: ZVerificationTypeParams,
        ...schemaOf(CALLS['POST /api/verification/{type}/upload']),
      },
    },
    async (request) => {
      const upload = await receiveUpload(request);
      try {
        return await answer(request, await uploadVerificationFiles(ctx, currentUser(request).id, request.params.type, upload));
      } finally {
        await upload.cleanup();
      }
    },
  );

  // The rules that depend on today's date (expiry) are the service's: the core's clock decides.
  app.post(
    '/api/verification/:type/submit',
    {
      onRequest: requireUser,
      schema: {
        tags,
        summary: 'Submit a draft with its form for review',
        params: ZVerificationTypeParams,
        ...schemaOf(CALLS['POST /api/verification/{type}/submit']),
      },
    },
    async (request) => answer(request, await submitVerification(ctx, currentUser(request).id, request.params.type, request.body)),
  );

  app.get(
    '/api/verification/file/:id',
    {
      onRequest: requireUser,
      schema: {
        tags,
        summary: "One of the caller's own document files (404 document_not_found otherwise)",
        params: ZFileParams,
        response: { 200: STORED_FILE_RESPONSE },
      },
    },
    async (request, reply) => {
      const file = await findOwnFile(app.db, currentUser(request).id, request.params.id);
      if (!file) throw notFoundOf('document');
      return sendDocumentFile(reply, app.storage, file);
    },
  );
};

export default verificationRoutes;
