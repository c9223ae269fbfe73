import { randomUUID } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import fp from 'fastify-plugin';
import { REQUEST_ID_HEADER, isSaneRequestId } from '@obmen/shared';

/** Fastify's genReqId: the client's x-request-id when it is sane (a caller's own tracing), else a fresh one. */
export function genRequestId(req: IncomingMessage): string {
  const given = req.headers[REQUEST_ID_HEADER];
  return isSaneRequestId(given) ? given : randomUUID();
}

/**
 * Every answer carries the request's id, hijacked ones (pages) too: set on the raw response
 * before anything is written. The /api proxy and the BFF's own calls send it on to the core.
 */
export default fp(
  async (app) => {
    app.addHook('onRequest', (request, reply, done) => {
      reply.raw.setHeader(REQUEST_ID_HEADER, request.id);
      done();
    });
  },
  { name: 'request-id' },
);
