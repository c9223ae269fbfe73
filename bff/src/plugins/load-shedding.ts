import fp from 'fastify-plugin';
import underPressure from '@fastify/under-pressure';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { sendError } from '../errors.ts';

declare module 'fastify' {
  interface FastifyInstance {
    /** The core is saturated: SHED_UPSTREAM_PENDING calls already wait for a connection to it. */
    upstreamSaturated: () => boolean;
  }
}

/** Seconds a shed client is asked to wait. */
export const RETRY_AFTER_S = 5;
export const LIVENESS_PATH = '/local/livez';

/** The answer of a shed request: 503 `overloaded`, localized, with Retry-After. */
export function sendOverloaded(request: FastifyRequest, reply: FastifyReply) {
  reply.header('retry-after', String(RETRY_AFTER_S));
  return sendError(request, reply, 503, 'overloaded', 'error.overloaded');
}

export type TLoadSheddingOptions = { maxEventLoopDelayMs: number; maxUpstreamPending: number };

/**
 * Overload: when the event loop lags more than `maxEventLoopDelayMs` on average (sampled every
 * second), new requests get 503 with Retry-After at once, instead of queueing behind the work
 * already accepted (page latency climbing from 3 s to 15 s under a flood). The error reaches the
 * BFF's error handler (errors.ts): JSON `overloaded`, localized. The liveness path is never
 * shed: the process is alive, only busy.
 *
 * The core is more often the bottleneck than the BFF: then the BFF's loop idles while calls
 * queue in its pool for a connection to the core. With `maxUpstreamPending` of them waiting,
 * requests that need the core (the /api proxy, page renders the page cache did not answer) get
 * the same 503 at once (`upstreamSaturated`, checked by api-proxy.ts and site.ts) rather than
 * joining the queue and a 504 later; what needs no core (static files, liveness) is served.
 */
export default fp<TLoadSheddingOptions>(
  async (app, { maxEventLoopDelayMs, maxUpstreamPending }) => {
    if (maxEventLoopDelayMs > 0) await app.register(underPressure, { maxEventLoopDelay: maxEventLoopDelayMs, retryAfter: RETRY_AFTER_S });
    // app.core (plugins/upstream.ts) is registered later; it is read per request.
    app.decorate('upstreamSaturated', () => maxUpstreamPending > 0 && app.core.stats.pending >= maxUpstreamPending);
    // Liveness: answers while the process runs, asks nothing of the core (readiness is /local/healthcheck).
    app.get(LIVENESS_PATH, { config: { pressureHandler: () => undefined } }, (_request, reply) => {
      reply.header('cache-control', 'no-store').send({ status: 'ok' });
    });
  },
  { name: 'load-shedding', dependencies: ['own-errors'] },
);
