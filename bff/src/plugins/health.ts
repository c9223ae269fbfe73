import fp from 'fastify-plugin';

const HEALTH_TIMEOUT_MS = 3_000;

/** GET /local/healthcheck: 200 when the core answers its own health check, 503 otherwise. */
export default fp(
  async (app) => {
    app.get('/local/healthcheck', async (_request, reply) => {
      reply.header('cache-control', 'no-store');
      try {
        const answer = await app.core.request({ path: '/api/health', method: 'GET', headersTimeout: HEALTH_TIMEOUT_MS, bodyTimeout: HEALTH_TIMEOUT_MS });
        await answer.body.dump();
        if (answer.statusCode === 200) return { status: 'ok', core: 'ok' };
      } catch {
        // Unreachable or too slow: reported below, never thrown as a 500.
      }
      return reply.code(503).send({ status: 'error', core: 'unavailable' });
    });
  },
  { name: 'health', dependencies: ['upstream'] },
);
