import fp from 'fastify-plugin';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { answerError, sendError } from '../errors.ts';
import { createRateWindow } from '../rate-window.ts';

declare module 'fastify' {
  interface FastifyInstance {
    /** 404s per client: answered here, or rendered as the 404 page (plugins/site.ts). */
    notFoundWindow: { hit: (ip: string) => number };
  }
}

/** A client past its 404s of the window: 429 + Retry-After, in the error shape. */
export function sendTooManyMisses(request: FastifyRequest, reply: FastifyReply, retryAfterS: number) {
  reply.header('retry-after', String(retryAfterS));
  return sendError(request, reply, 429, 'rate_limited', 'error.rate_limited');
}

/**
 * The errors the BFF answers itself, in the project's shape {status, code, message}, localized:
 * a path with no route (404), a body the parser refuses (400, 413, 415), anything thrown. 404s
 * are limited per client like other anonymous traffic: a scan of made-up paths gets 429 +
 * Retry-After, not a page render (and its core calls) for each. The core's route misses under
 * /api count in the same window (api-proxy.ts).
 */
export default fp<{ notFoundPerMinute: number }>(
  async (app, { notFoundPerMinute }) => {
    const notFound = createRateWindow({ perWindow: notFoundPerMinute });
    app.decorate('notFoundWindow', notFound);
    app.setNotFoundHandler((request, reply) => {
      const retryAfterS = notFound.hit(request.ip);
      if (retryAfterS === 0) return sendError(request, reply, 404, 'not_found', 'error.not_found');
      return sendTooManyMisses(request, reply, retryAfterS);
    });
    app.setErrorHandler(answerError);
  },
  { name: 'own-errors', dependencies: ['@fastify/cookie'] },
);
