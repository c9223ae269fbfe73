/**
 * Starts the whole app: the core (unless UPSTREAM_URL names one elsewhere) and the BFF in
 * front of it. Children get SIGTERM on our SIGTERM/SIGINT and finish their in-flight requests.
 *   PORT (3000) the BFF; CORE_PORT (4000) the core; DATA_DIR (.data/pglite) PGlite's files;
 *   DATABASE_URL to use PostgreSQL instead; UPSTREAM_URL to run the BFF alone. `.env` is read first.
 */
import { loadDotEnv, supervise, waitForHealth } from './supervise.ts';

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
    supervisor.run('core', ['core/src/server.ts'], { PORT: corePort, HOST: '127.0.0.1', TRUST_PROXY: process.env.CORE_TRUST_PROXY ?? '127.0.0.1,::1' });
    await waitForHealth(`${upstream}/api/health`, HEALTH_WAIT_MS);
  }
  supervisor.run('bff', ['bff/src/server.ts'], { UPSTREAM_URL: upstream, HOST: process.env.HOST ?? '0.0.0.0' });
  await waitForHealth(`http://127.0.0.1:${process.env.PORT ?? '3000'}/local/healthcheck`, HEALTH_WAIT_MS);
  console.log(`[start] Obmen is up at http://localhost:${process.env.PORT ?? '3000'}`);
} catch (err) {
  // Never leave a half-started stack behind.
  console.error(`[start] ${(err as Error).message}`);
  await supervisor.stop(1);
}
