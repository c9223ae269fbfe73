/**
 * Starts the whole app: the core (unless UPSTREAM_URL names one elsewhere) and the BFF in
 * front of it. Children get SIGTERM on our SIGTERM/SIGINT and finish their in-flight requests.
 *   PORT (3000) the BFF; CORE_PORT (4000) the core; DATA_DIR (.data/pglite) PGlite's files;
 *   DATABASE_URL to use PostgreSQL instead; UPSTREAM_URL to run the BFF alone. `.env` is read first.
 *   SEED=false skips `ops seed` (run before the core: an empty database's catalogue, the demo account outside production).
 *   EVM_RPC_URL unset (and EVM_DEV_CHAIN not false, outside production): a development chain
 *   (anvil) is started on EVM_DEV_PORT (a free port by default) and the core pointed at it.
 *   HOST (127.0.0.1) where the BFF listens: set HOST=0.0.0.0 to open it to the network (the
 *   development helpers /api/dev/* and /dev/* still answer loopback clients only).
 */
import { BFF_NODE_ARGS, BFF_SCRIPT, loadDotEnv, seedBeforeCore, sitePublicUrl, startDevChain, supervise, waitForHealth } from './supervise.ts';

loadDotEnv();
const corePort = process.env.CORE_PORT ?? '4000';
const upstream = process.env.UPSTREAM_URL ?? `http://127.0.0.1:${corePort}`;
const supervisor = supervise('start');

/** A first start migrates and seeds; on a loaded 2-core machine that can take a while. */
const HEALTH_WAIT_MS = 180_000;

try {
  if (!process.env.UPSTREAM_URL) {
    // The core trusts X-Forwarded-For from the BFF beside it only, whatever TRUST_PROXY the BFF
    // got for a load balancer in front of it.
    // Two malloc arenas: libvips' threads (upload re-encoding) otherwise each keep an arena of
    // freed memory; 20 uploads at once grew the core by 148 MB instead of 45 (pnpm bench upload).
    // A real EVM node beside the exchange unless one is configured (before the seed: it adds the chain's system).
    await startDevChain('start', supervisor);
    await seedBeforeCore('start', {});
    supervisor.run('core', ['core/src/server.ts'], {
      PORT: corePort,
      HOST: '127.0.0.1',
      TRUST_PROXY: process.env.CORE_TRUST_PROXY ?? '127.0.0.1,::1',
      MALLOC_ARENA_MAX: process.env.MALLOC_ARENA_MAX ?? '2',
      PUBLIC_URL: sitePublicUrl(),
    });
    await waitForHealth(`${upstream}/api/health`, HEALTH_WAIT_MS);
  }
  // Loopback unless asked: a development start must not be reachable from the network by default.
  const host = process.env.HOST ?? '127.0.0.1';
  const port = process.env.PORT ?? '3000';
  supervisor.run('bff', [...BFF_NODE_ARGS, BFF_SCRIPT], { UPSTREAM_URL: upstream, HOST: host });
  await waitForHealth(`http://127.0.0.1:${port}/local/healthcheck`, HEALTH_WAIT_MS);
  console.log(
    `[start] Obmen is up at http://${host.includes(':') ? `[${host}]` : host}:${port} (HOST=${host}); development helpers answer loopback clients only`,
  );
} catch (err) {
  // Never leave a half-started stack behind.
  console.error(`[start] ${(err as Error).message}`);
  await supervisor.stop(1);
}
