import fp from 'fastify-plugin';
import { Pool } from 'undici';
import type { TConfig } from '../config.ts';

declare module 'fastify' {
  interface FastifyInstance {
    /**
     * The one pooled keep-alive client to the core: the /api proxy, the BFF's own calls and
     * page renders (through Astro.locals) share its UPSTREAM_CONNECTIONS connections.
     */
    core: Pool;
  }
}

export default fp<{ config: TConfig }>(
  async (app, { config }) => {
    const core = new Pool(config.UPSTREAM_URL, {
      connections: config.UPSTREAM_CONNECTIONS,
      pipelining: 1,
      keepAliveTimeout: 60_000,
      keepAliveMaxTimeout: 600_000,
      headersTimeout: config.UPSTREAM_TIMEOUT_MS,
      bodyTimeout: config.UPSTREAM_TIMEOUT_MS,
      connect: { timeout: Math.min(config.UPSTREAM_TIMEOUT_MS, 5_000) },
    });
    app.decorate('core', core);
    app.addHook('onClose', () => core.close());
  },
  { name: 'upstream' },
);
