import fp from 'fastify-plugin';
import { Pool } from 'undici';
import type { TConfig } from '../config.ts';

/** GET /local/healthcheck: 200 when the core answers its own health check, 503 otherwise. */
export default fp<{ config: TConfig }>(
  async (app, { config }) => {
    const core = new Pool(config.UPSTREAM_URL, { connections: 2 });
    app.addHook('onClose', () => core.close());
    const timeout = Math.min(config.UPSTREAM_TIMEOUT_MS, 3_000);

    app.get('/local/healthcheck', async (_request, reply) => {
      reply.header('cache-control', 'no-store');
      try {
        const answer = await core.request({ path: '/api/health', method: 'GET', headersTimeout: timeout, bodyTimeout: timeout });
        await answer.body.dump();
        if (answer.statusCode === 200) return { status: 'ok', core: 'ok' };
      } catch {
        // Unreachable or too slow: reported below, never thrown as a 500.
      }
      return reply.code(503).send({ status: 'error', core: 'unavailable' });
    });
  },
  { name: 'health' },
);
