import type { FastifyPluginAsync } from 'fastify';
import { ZVerificationTypeParams } from '@obmen/shared';
import type { TConfig } from '../../config.ts';
import { parseInput } from '../../validation.ts';
import { notFound } from '../../errors.ts';
import { currentUser, requireUser } from '../user/current.ts';
import { receiveUpload, refuseOversizedUpload } from '../../storage/upload.ts';
import { sendStoredFile } from '../../storage/files.ts';
import { toPublicUser } from '../user/public.ts';
import { openDocumentCipher } from './cipher.ts';
import { findOwnFile, getVerificationState, openDraft, submitVerification, uploadVerificationFiles, type TVerificationContext } from './service.ts';

/** Spec §7 "Verification", plus the owner's read of their own files. */
const verificationRoutes: FastifyPluginAsync<{ config: TConfig; now?: () => Date }> = async (app, { config, now }) => {
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

  app.get('/api/verification', { preHandler: requireUser }, async (request) => answer(request, await getVerificationState(app.db, currentUser(request).id)));

  app.get('/api/verification/:type/new', { preHandler: requireUser }, async (request) => {
    const { type } = parseInput(ZVerificationTypeParams, request.params);
    return answer(request, await openDraft(app.db, currentUser(request).id, type));
  });

  app.post('/api/verification/:type/upload', { preHandler: requireUser, preValidation: refuseOversizedUpload }, async (request) => {
    const { type } = parseInput(ZVerificationTypeParams, request.params);
    const upload = await receiveUpload(request);
    try {
      return await answer(request, await uploadVerificationFiles(ctx, currentUser(request).id, type, upload));
    } finally {
      await upload.cleanup();
    }
  });

  app.post('/api/verification/:type/submit', { preHandler: requireUser }, async (request) => {
    const { type } = parseInput(ZVerificationTypeParams, request.params);
    return answer(request, await submitVerification(ctx, currentUser(request).id, type, request.body ?? {}));
  });

  app.get('/api/verification/file/:id', { preHandler: requireUser }, async (request, reply) => {
    const file = await findOwnFile(app.db, currentUser(request).id, (request.params as { id: string }).id);
    const sent =
      file &&
      (await sendStoredFile(reply, app.storage, {
        key: file.storage_key,
        mime: file.mime,
        reencoded: file.reencoded,
        name: `${file.side}.${file.storage_key.split('.').pop()}`,
      }));
    if (!sent) throw notFound();
    return sent;
  });
};

export default verificationRoutes;
