import type { FastifyReply, FastifyRequest } from 'fastify';
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { CHAT_FIELD_MAX_BYTES, STORED_FILE_RESPONSE, ZChatFileParams, ZChatPrivateFileParams, ZChatPrivateParams } from '@obmen/shared';
import { AppError, notFoundOf } from '../../errors.ts';
import { sendStoredFile } from '../../storage/files.ts';
import { receiveUpload, refuseOversizedUpload } from '../../storage/upload.ts';
import { currentUser, requireUser } from '../user/current.ts';
import {
  findPrivateFile,
  findSupportFile,
  getPrivate,
  getSupport,
  listChats,
  readPrivate,
  readSupport,
  reportChat,
  sendPrivate,
  sendSupport,
  setBlocked,
  type TChatContext,
  type TChatInput,
} from './service.ts';
import { CALLS } from '@obmen/shared/calls';
import { schemaOf } from '../../lib/call-schema.ts';

/** A multipart text field over the cap is a message too long, said as such (not "bad form"). */
const tooLong = (field: string) => new AppError('validation', { fields: { [field]: 'chat.message_too_long' } });

/**
 * A message arrives as multipart/form-data (text or message, file0..n) or, without files, as
 * JSON or a urlencoded form; either way the service checks the fields.
 */
export async function withMessage<T>(request: FastifyRequest, send: (input: TChatInput) => Promise<T>): Promise<T> {
  if (!request.isMultipart()) return send({ fields: (request.body ?? {}) as Record<string, unknown>, files: [] });
  const upload = await receiveUpload(request, { fieldMaxBytes: CHAT_FIELD_MAX_BYTES, fieldTooLong: tooLong });
  try {
    return await send({ fields: upload.fields, files: upload.files, signal: upload.signal });
  } finally {
    await upload.cleanup();
  }
}

/** Sends a file of the caller's conversation, or 404 like a missing one (a reply is thenable: check `sent`, not the value). */
export async function sendFile(reply: FastifyReply, ctx: TChatContext, file: Awaited<ReturnType<typeof findSupportFile>>) {
  if (file) await sendStoredFile(reply, ctx.storage, { key: file.storage_key, mime: file.mime, reencoded: file.reencoded, name: file.name });
  if (!reply.sent) throw notFoundOf('chat_file');
  return reply;
}

const messageBody = z.unknown().describe('multipart/form-data (text or message, file0..n) or JSON {text} / {message}');
const fileAnswer = { 200: STORED_FILE_RESPONSE };
/** A malformed account id in the path names no chat. */
const privateConfig = { paramsError: () => notFoundOf('chat') };
const fileConfig = { paramsError: () => notFoundOf('chat_file') };

/** Spec §7 "Support" and "Chat", plus reading a private chat, its files, blocking and reporting. */
const chatRoutes: FastifyPluginAsyncZod = async (app) => {
  const ctx: TChatContext = { db: app.db, storage: app.storage };
  const support = ['Support'];
  const chat = ['Chat'];

  app.get(
    '/api/support',
    {
      onRequest: requireUser,
      schema: {
        tags: support,
        summary: 'The support conversation, a page of messages (page 1: the newest)',
        ...schemaOf(CALLS['GET /api/support']),
      },
    },
    async (request) => ({ status: 'ok' as const, ...(await getSupport(app.db, currentUser(request).id, request.query.page)) }),
  );

  app.post(
    '/api/support',
    {
      onRequest: requireUser,
      preValidation: refuseOversizedUpload,
      schema: { tags: support, summary: 'Write to support (text, files file0..n)', ...schemaOf(CALLS['POST /api/support']), body: messageBody },
    },
    async (request) => ({ status: 'ok' as const, ...(await withMessage(request, (input) => sendSupport(ctx, currentUser(request).id, input))) }),
  );

  app.post(
    '/api/support/read',
    {
      onRequest: requireUser,
      schema: { tags: support, summary: 'Mark support messages read up to last_read_message', ...schemaOf(CALLS['POST /api/support/read']) },
    },
    async (request) => ({ status: 'ok' as const, ...(await readSupport(app.db, currentUser(request).id, request.body.last_read_message)) }),
  );

  app.get(
    '/api/support/file/:file',
    {
      onRequest: requireUser,
      config: fileConfig,
      schema: { tags: support, summary: 'A file of the caller’s support conversation', params: ZChatFileParams, response: fileAnswer },
    },
    async (request, reply) => sendFile(reply, ctx, await findSupportFile(app.db, currentUser(request).id, request.params.file)),
  );

  app.get(
    '/api/chat/list',
    {
      onRequest: requireUser,
      schema: { tags: chat, summary: 'The caller’s private chats (id, title, unread_msgs)', ...schemaOf(CALLS['GET /api/chat/list']) },
    },
    async (request) => ({ status: 'ok' as const, ...(await listChats(app.db, currentUser(request).id, request.locale)) }),
  );

  app.get(
    '/api/chat/private/:id',
    {
      onRequest: requireUser,
      config: privateConfig,
      schema: {
        tags: chat,
        summary: 'A private chat with an account, a page of messages (an account without one answers an empty chat)',
        params: ZChatPrivateParams,
        ...schemaOf(CALLS['GET /api/chat/private/{id}']),
      },
    },
    async (request) => ({
      status: 'ok' as const,
      ...(await getPrivate(app.db, currentUser(request).id, request.params.id, request.query.page, request.locale)),
    }),
  );

  app.post(
    '/api/chat/private/:id',
    {
      onRequest: requireUser,
      preValidation: refuseOversizedUpload,
      config: privateConfig,
      schema: {
        tags: chat,
        summary: 'Write to an account (message, files file0..n)',
        params: ZChatPrivateParams,
        ...schemaOf(CALLS['POST /api/chat/private/{id}']),
        body: messageBody,
      },
    },
    async (request) => ({
      status: 'ok' as const,
      ...(await withMessage(request, (input) => sendPrivate(ctx, currentUser(request).id, request.params.id, input))),
    }),
  );

  app.post(
    '/api/chat/private/read/:id',
    {
      onRequest: requireUser,
      config: privateConfig,
      schema: {
        tags: chat,
        summary: 'Mark a private chat read up to last_read_message',
        params: ZChatPrivateParams,
        ...schemaOf(CALLS['POST /api/chat/private/read/{id}']),
      },
    },
    async (request) => ({ status: 'ok' as const, ...(await readPrivate(app.db, currentUser(request).id, request.params.id, request.body.last_read_message)) }),
  );

  app.get(
    '/api/chat/private/:id/file/:file',
    {
      onRequest: requireUser,
      config: fileConfig,
      schema: { tags: chat, summary: 'A file of a private chat of the caller', params: ZChatPrivateFileParams, response: fileAnswer },
    },
    async (request, reply) => sendFile(reply, ctx, await findPrivateFile(app.db, currentUser(request).id, request.params.id, request.params.file)),
  );

  app.post(
    '/api/chat/private/block/:id',
    {
      onRequest: requireUser,
      config: privateConfig,
      schema: {
        tags: chat,
        summary: 'Block (or unblock) an account: no messages either way',
        params: ZChatPrivateParams,
        ...schemaOf(CALLS['POST /api/chat/private/block/{id}']),
      },
    },
    async (request) => ({ status: 'ok' as const, ...(await setBlocked(app.db, currentUser(request).id, request.params.id, request.body.blocked)) }),
  );

  app.post(
    '/api/chat/private/report/:id',
    {
      onRequest: requireUser,
      config: privateConfig,
      schema: {
        tags: chat,
        summary: 'Report a private conversation to the operators',
        params: ZChatPrivateParams,
        ...schemaOf(CALLS['POST /api/chat/private/report/{id}']),
      },
    },
    async (request) => ({ status: 'ok' as const, ...(await reportChat(app.db, currentUser(request).id, request.params.id, request.body.reason)) }),
  );
};

export default chatRoutes;
