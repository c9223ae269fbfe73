import fp from 'fastify-plugin';
import { Pool } from 'undici';
import type { TConfig } from '../config.ts';

declare module 'fastify' {
  interface FastifyInstance {
    /** Pooled keep-alive client for the BFF's own calls to the core (not the /api proxy). */
    core: Pool;
  }
}

export default fp<{ config: TConfig }>(
  async (app, { config }) => {
    const core = new Pool(config.UPSTREAM_URL, {
      connections: 8,
      headersTimeout: config.UPSTREAM_TIMEOUT_MS,
      bodyTimeout: config.UPSTREAM_TIMEOUT_MS,
    });
    app.decorate('core', core);
    app.addHook('onClose', () => core.close());
  },
  { name: 'upstream' },
);
