/**
 * `pnpm dev`: the app for editing. The core and the BFF run under `node --watch` (a change to
 * their code, or to shared/, restarts that service); the Astro dev server renders pages and
 * hot-reloads pages and islands in the browser. The browser talks to the BFF only, which proxies
 * pages, modules and the hot-reload websocket to Astro, so /api, cookies and /i18n work as in
 * production. Logs are pretty-printed. No build is needed.
 *   PORT (3000) the BFF; CORE_PORT (4000) the core; SITE_DEV_PORT (4321) the Astro dev server;
 *   the core's own variables (DATABASE_URL, DATA_DIR, ...) as for `pnpm start`, the development
 *   chain too (its blocks kept in .data/evm-chain.json, EVM_DEV_STATE). `.env` is read first.
 */
import type { ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import pretty from 'pino-pretty';
import { loadDotEnv, root, seedBeforeCore, sitePublicUrl, startDevChain, supervise, waitForHealth } from './supervise.ts';

loadDotEnv();
const port = process.env.PORT ?? '3000';
const corePort = process.env.CORE_PORT ?? '4000';
const sitePort = process.env.SITE_DEV_PORT ?? '4321';
const upstream = `http://127.0.0.1:${corePort}`;
const supervisor = supervise('dev');

/**
 * Restart on a change under these folders (not node_modules: another checkout's install can touch
 * files there), keeping the other services' lines on the screen (no clear).
 */
function watch(...folders: string[]): string[] {
  return [...[...folders, 'shared/src', 'shared/i18n'].map((folder) => `--watch-path=${folder}`), '--watch-preserve-output'];
}
const development = { NODE_ENV: process.env.NODE_ENV ?? 'development' };

/** Fastify's two lines per request, each on one line: what was asked, and how it ended. */
const REQUEST_FORMAT = '{if req.method} {req.method} {req.url}{end}{if res.statusCode} {res.statusCode} in {responseTime} ms{end}';

/** The service's JSON log lines made readable; anything else (a crash, node --watch's notes) passes as is. */
function prettyLogs(name: string, child: ChildProcess) {
  const format = `${name} {if reqId}{reqId} {end}{msg}${REQUEST_FORMAT}`;
  const ignore = 'pid,hostname,service,reqId,req,res,responseTime';
  child.stdout!.pipe(pretty({ destination: 1, colorize: process.stdout.isTTY, translateTime: 'SYS:HH:MM:ss.l', ignore, messageFormat: format }));
}

try {
  // Once per `pnpm dev`, not at every restart of the core: it prints the demo account's sign-in.
  // The development chain keeps its blocks across restarts here (the database does too).
  await startDevChain('dev', supervisor, { EVM_DEV_STATE: join(root, '.data/evm-chain.json'), ...process.env, ...development });
  await seedBeforeCore('dev', development);
  const core = supervisor.run(
    'core',
    [...watch('core/src', 'core/migrations'), 'core/src/server.ts'],
    { ...development, PORT: corePort, HOST: '127.0.0.1', PUBLIC_URL: sitePublicUrl() },
    { stdio: ['ignore', 'pipe', 'inherit'] },
  );
  prettyLogs('core', core);
  // The first start of a fresh database migrates: give it time on a busy machine.
  await waitForHealth(`${upstream}/api/health`, 180_000);
  supervisor.run(
    'site',
    [join(root, 'site/node_modules/astro/bin/astro.mjs'), 'dev', '--host', '127.0.0.1', '--port', sitePort],
    { ...development, UPSTREAM_URL: upstream, ASTRO_TELEMETRY_DISABLED: '1' },
    { cwd: join(root, 'site') },
  );
  const bff = supervisor.run(
    'bff',
    [...watch('bff/src'), 'bff/src/server.ts'],
    { ...development, PORT: port, HOST: process.env.HOST ?? '127.0.0.1', UPSTREAM_URL: upstream, SITE_DEV_URL: `http://127.0.0.1:${sitePort}` },
    { stdio: ['ignore', 'pipe', 'inherit'] },
  );
  prettyLogs('bff', bff);
  await waitForHealth(`http://127.0.0.1:${port}/local/healthcheck`, 60_000);
  console.log(`[dev] Obmen is up at http://localhost:${port}: edits to core/, bff/, shared/ restart that service, edits to site/ show in the browser`);
} catch (err) {
  console.error(`[dev] ${(err as Error).message}`);
  await supervisor.stop(1);
}
