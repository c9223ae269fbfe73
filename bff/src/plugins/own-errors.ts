import fp from 'fastify-plugin';
import { answerError, sendError } from '../errors.ts';
import { createRateWindow } from '../rate-window.ts';

declare module 'fastify' {
  interface FastifyInstance {
    /** 404s per client: answered here, or rendered as the 404 page (plugins/site.ts). */
    notFoundWindow: { hit: (ip: string) => number };
  }
}

/**
 * The errors the BFF answers itself, in the project's shape {status, code, message}, localized:
 * a path with no route (404), a body the parser refuses (400, 413, 415), anything thrown. 404s
 * are limited per client like other anonymous traffic: a scan of made-up paths gets 429 +
 * Retry-After, not a page render (and its core calls) for each.
 */
export default fp<{ notFoundPerMinute: number }>(
  async (app, { notFoundPerMinute }) => {
    const notFound = createRateWindow({ perWindow: notFoundPerMinute });
    app.decorate('notFoundWindow', notFound);
    app.setNotFoundHandler((request, reply) => {
      const retryAfterS = notFound.hit(request.ip);
      if (retryAfterS === 0) return sendError(request, reply, 404, 'not_found', 'error.not_found');
      reply.header('retry-after', String(retryAfterS));
      return sendError(request, reply, 429, 'rate_limited', 'error.rate_limited');
    });
    app.setErrorHandler(answerError);
  },
  { name: 'own-errors', dependencies: ['@fastify/cookie'] },
);
