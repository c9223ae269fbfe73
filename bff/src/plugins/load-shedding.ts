import fp from 'fastify-plugin';
import underPressure from '@fastify/under-pressure';

/** Seconds a shed client is asked to wait. */
const RETRY_AFTER_S = 5;
export const LIVENESS_PATH = '/local/livez';

/**
 * Overload: when the event loop lags more than `maxEventLoopDelayMs` on average (sampled every
 * second), new requests get 503 with Retry-After at once, instead of queueing behind the work
 * already accepted (page latency climbing from 3 s to 15 s under a flood). The error reaches the
 * BFF's error handler (errors.ts): JSON `overloaded`, localized. The liveness path is never
 * shed: the process is alive, only busy.
 */
export default fp<{ maxEventLoopDelayMs: number }>(
  async (app, { maxEventLoopDelayMs }) => {
    if (maxEventLoopDelayMs > 0) await app.register(underPressure, { maxEventLoopDelay: maxEventLoopDelayMs, retryAfter: RETRY_AFTER_S });
    // Liveness: answers while the process runs, asks nothing of the core (readiness is /local/healthcheck).
    app.get(LIVENESS_PATH, { config: { pressureHandler: () => undefined } }, (_request, reply) => {
      reply.header('cache-control', 'no-store').send({ status: 'ok' });
    });
  },
  { name: 'load-shedding', dependencies: ['own-errors'] },
);
