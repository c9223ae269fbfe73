/**
 * Starts the whole app: the core (unless UPSTREAM_URL names one elsewhere) and the BFF in
 * front of it. Children get SIGTERM on our SIGTERM/SIGINT and finish their in-flight requests.
 *   PORT (3000) the BFF; CORE_PORT (4000) the core; DATA_DIR (.data/pglite) PGlite's files;
 *   DATABASE_URL to use PostgreSQL instead; UPSTREAM_URL to run the BFF alone;
 *   HOST (127.0.0.1) where the BFF listens: set HOST=0.0.0.0 to open it to the network (the
 *   development helpers /api/dev/* and /dev/* still answer loopback clients only).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const corePort = process.env.CORE_PORT ?? '4000';
const upstream = process.env.UPSTREAM_URL ?? `http://127.0.0.1:${corePort}`;
const children: ChildProcess[] = [];

function run(name: string, script: string, env: NodeJS.ProcessEnv): ChildProcess {
  const child = spawn(process.execPath, [script], { cwd: root, env: { ...process.env, ...env }, stdio: 'inherit' });
  child.on('exit', (code, signal) => {
    if (stopping) return;
    console.error(`[start] ${name} exited (${signal ?? code}); stopping the rest`);
    void stop(code ?? 1);
  });
  children.push(child);
  return child;
}

async function waitForHealth(url: string, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    try {
      const res = await fetch(url);
      if (res.ok) return;
    } catch {
      // not listening yet
    }
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  throw new Error(`${url} did not become healthy within ${timeoutMs} ms`);
}

let stopping = false;
const exited = (child: ChildProcess) => (child.exitCode === null && child.signalCode === null ? new Promise((resolve) => child.once('exit', resolve)) : null);

/** The BFF first (it finishes its in-flight /api calls against a live core), then the core. */
async function stop(code: number) {
  stopping = true;
  for (const child of [...children].reverse()) {
    child.kill('SIGTERM');
    await exited(child);
  }
  process.exit(code);
}
process.once('SIGTERM', () => void stop(0));
process.once('SIGINT', () => void stop(0));

/** A first start migrates and seeds; on a loaded 2-core machine that can take a while. */
const HEALTH_WAIT_MS = 180_000;

try {
  if (!process.env.UPSTREAM_URL) {
    // The core trusts X-Forwarded-For from the BFF beside it only, whatever TRUST_PROXY the BFF
    // got for a load balancer in front of it.
    run('core', 'core/src/server.ts', { PORT: corePort, HOST: '127.0.0.1', TRUST_PROXY: process.env.CORE_TRUST_PROXY ?? '127.0.0.1,::1' });
    await waitForHealth(`${upstream}/api/health`, HEALTH_WAIT_MS);
  }
  // Loopback unless asked: a development start must not be reachable from the network by default.
  const host = process.env.HOST ?? '127.0.0.1';
  const port = process.env.PORT ?? '3000';
  run('bff', 'bff/src/server.ts', { UPSTREAM_URL: upstream, HOST: host });
  await waitForHealth(`http://127.0.0.1:${port}/local/healthcheck`, HEALTH_WAIT_MS);
  console.log(`[start] Obmen is up at http://${host.includes(':') ? `[${host}]` : host}:${port} (HOST=${host}); development helpers answer loopback clients only`);
} catch (err) {
  // Never leave a half-started stack behind.
  console.error(`[start] ${(err as Error).message}`);
  await stop(1);
}
