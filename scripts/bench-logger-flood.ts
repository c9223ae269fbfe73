/**
 * Does a flood on POST /api/logger/front slow the BFF's other routes? (issue 4 point 7)
 *
 * Starts the core (PGlite, throw-away) and a BFF on CPU 0 (taskset, when there are two CPUs),
 * then measures a probe (GET /local/healthcheck, which the BFF answers after asking the core,
 * and GET of a cached article page) at a fixed, modest rate, first alone, then while a second
 * load generator floods the logger endpoint as fast as it can. Both generators run on CPU 1,
 * each in its own process. Floods:
 *   same-ip     every report from one address: the per-client limit answers 429 before the
 *               body is read (what one misbehaving or hostile browser gets)
 *   accepted    the limit lifted (FRONT_LOG_PER_MINUTE=1000000): every report is parsed,
 *               validated and de-duplicated (the same error again and again)
 *   distinct    the limit lifted and every report different: each one is escaped and written
 *               to the log (the worst case: a distributed flood that gets through)
 * Prints a Markdown table (probe p50/p99/max latency and req/s, the flood's req/s and status
 * counts) and writes JSON to BENCH_OUT (bench-logger-results.json).
 *   node scripts/bench-logger-flood.ts
 * Each flood runs at BENCH_FLOOD_RATE (2000 req/s: one abusive client, far above any real error
 * rate), beside a reference flood of the same rate on a static file, and once as fast as the
 * generator can (which saturates the single BFF process whatever the endpoint).
 * Knobs: BENCH_DURATION (8 s), BENCH_PROBE_RATE (200 req/s), BENCH_FLOOD_CONNECTIONS (50),
 * BENCH_FLOOD_RATE (2000 req/s).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createRequire } from 'node:module';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { canPin, cpuSeconds, pinned, stopChild } from './bench-common.ts';

const root = join(import.meta.dirname, '..');

type TLoad = {
  url: string;
  method?: string;
  headers?: Record<string, string>;
  body?: string;
  connections: number;
  duration: number;
  /** Requests per second over all connections; unset: as fast as possible. */
  overallRate?: number;
  /** Replace [<id>] in the body with a fresh id per request. */
  idReplacement?: boolean;
};
type TLoadOut = { rps: number; p50: number; p90: number; p99: number; max: number; statusCodes: Record<string, number>; errors: number; timeouts: number };

// ---- load mode: one autocannon run in this process, JSON in, JSON out ------------------------
if (process.argv[2] === '--load') {
  const options = JSON.parse(process.argv[3] ?? '{}') as TLoad;
  const autocannon = createRequire(import.meta.url)('autocannon') as (o: object) => Promise<Record<string, any>>;
  const result = await autocannon({ ...options, timeout: 10, pipelining: 1 });
  const statusCodes: Record<string, number> = {};
  for (const [code, { count }] of Object.entries(result.statusCodeStats ?? {}) as Array<[string, { count: number }]>) statusCodes[code] = count;
  const out: TLoadOut = {
    rps: result.requests.total / result.duration,
    p50: result.latency.p50,
    p90: result.latency.p90,
    p99: result.latency.p99,
    max: result.latency.max,
    statusCodes,
    errors: result.errors,
    timeouts: result.timeouts,
  };
  process.stdout.write(`${JSON.stringify(out)}\n`);
  process.exit(0);
}

// ---- orchestration ---------------------------------------------------------------------------
const pinnedNode = (cpu: string, args: string[]) => pinned(cpu, process.execPath, args);
const duration = Number(process.env.BENCH_DURATION ?? 8);
const probeRate = Number(process.env.BENCH_PROBE_RATE ?? 200);
const floodConnections = Number(process.env.BENCH_FLOOD_CONNECTIONS ?? 50);
const floodRate = Number(process.env.BENCH_FLOOD_RATE ?? 2000);
const CORE_PORT = 4220;
const BFF_PORT = 3220;
const BFF_OPEN_PORT = 3221;

/** CPU seconds a process has used, NaN when unknown (so a missing figure never looks like 0). */
const cpuSecondsOrNaN = (pid: number | undefined) => cpuSeconds(pid) ?? NaN;

const children: ChildProcess[] = [];
function start(script: string, env: NodeJS.ProcessEnv): ChildProcess {
  const [command, args] = pinnedNode('0', [script]);
  const child = spawn(command, args, { cwd: root, env, stdio: ['ignore', 'ignore', 'inherit'] });
  children.push(child);
  return child;
}
async function stopAll() {
  await Promise.all(children.splice(0).reverse().map((child) => stopChild(child)));
}
async function ready(url: string) {
  for (let i = 0; i < 450; i++) {
    try {
      const res = await fetch(url);
      await res.arrayBuffer();
      if (res.ok) return;
    } catch {
      // not yet
    }
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  throw new Error(`${url} not ready`);
}
function load(options: TLoad): Promise<TLoadOut> {
  const [command, args] = pinnedNode('1', [join('scripts', 'bench-logger-flood.ts'), '--load', JSON.stringify(options)]);
  const child = spawn(command, args, { cwd: root, stdio: ['ignore', 'pipe', 'inherit'] });
  let out = '';
  child.stdout!.on('data', (chunk: Buffer) => (out += chunk.toString()));
  return new Promise((resolve, reject) => child.once('exit', (code) => (code === 0 ? resolve(JSON.parse(out) as TLoadOut) : reject(new Error(`load failed (${code})`)))));
}

const report = (message: string) =>
  JSON.stringify({ type: 'window', message, stack: 'Error: x\n    at f (https://obmen.local/_astro/a.js:1:1)', url: 'https://obmen.local/exchanges', user_agent: 'bench', time: new Date().toISOString() });

const dir = mkdtempSync(join(tmpdir(), 'obmen-bench-logger-'));
const quiet = { NODE_ENV: 'production', LOG_LEVEL: 'warn', HOST: '127.0.0.1', LOG_REQUESTS: 'false' };
const rows: Array<{ probe: string; flood: string; probeOut: TLoadOut; floodOut: TLoadOut | null; bffCpuUsPerFloodRequest: number | null; coreCpuMs: number }> = [];
try {
  const coreEnv: NodeJS.ProcessEnv = { ...process.env, ...quiet, PORT: String(CORE_PORT), DATA_DIR: join(dir, 'pglite') };
  delete coreEnv.DATABASE_URL;
  const core = start('core/src/server.ts', coreEnv);
  await ready(`http://127.0.0.1:${CORE_PORT}/api/health`);
  // Two BFFs: the default limit, and one with the limit lifted (warn lines go to stdout: ignored here, still written).
  const bff = start('bff/src/server.ts', { ...process.env, ...quiet, PORT: String(BFF_PORT), UPSTREAM_URL: `http://127.0.0.1:${CORE_PORT}` });
  const bffOpen = start('bff/src/server.ts', { ...process.env, ...quiet, PORT: String(BFF_OPEN_PORT), UPSTREAM_URL: `http://127.0.0.1:${CORE_PORT}`, FRONT_LOG_PER_MINUTE: '1000000' });
  const pidOf = (port: number) => (port === BFF_PORT ? bff.pid : bffOpen.pid);
  for (const port of [BFF_PORT, BFF_OPEN_PORT]) {
    await ready(`http://127.0.0.1:${port}/local/healthcheck`);
    for (let i = 0; i < 5; i++) await (await fetch(`http://127.0.0.1:${port}/article/fees`)).arrayBuffer();
    await new Promise((resolve) => setTimeout(resolve, 1200));
    await (await fetch(`http://127.0.0.1:${port}/article/fees`)).arrayBuffer();
  }

  const probes = [
    { name: 'GET /local/healthcheck', path: '/local/healthcheck' },
    { name: 'GET /article/fees (page cache)', path: '/article/fees' },
  ];
  type TFlood = { name: string; port: number; path?: string; method?: string; body?: string; idReplacement?: boolean; rate?: number };
  const floods: Array<TFlood | null> = [
    null,
    { name: `same-ip (429 after 30/min), ${floodRate} req/s`, port: BFF_PORT, body: report('flood'), rate: floodRate },
    { name: `accepted, same error (de-duplicated), ${floodRate} req/s`, port: BFF_OPEN_PORT, body: report('flood'), rate: floodRate },
    { name: `accepted, every report different (logged), ${floodRate} req/s`, port: BFF_OPEN_PORT, body: report('flood [<id>]'), idReplacement: true, rate: floodRate },
    { name: `reference: GET /favicon.svg (a static file), ${floodRate} req/s`, port: BFF_PORT, path: '/favicon.svg', method: 'GET', rate: floodRate },
    { name: 'same-ip (429 after 30/min), as fast as possible', port: BFF_PORT, body: report('flood') },
  ];
  for (const probe of probes) {
    for (const flood of floods) {
      const port = flood?.port ?? BFF_PORT;
      const probeRun = load({ url: `http://127.0.0.1:${port}${probe.path}`, connections: 4, duration, overallRate: probeRate });
      const floodRun = flood
        ? load({
            url: `http://127.0.0.1:${flood.port}${flood.path ?? '/api/logger/front'}`,
            method: flood.method ?? 'POST',
            ...(flood.body ? { headers: { 'content-type': 'application/json' }, body: flood.body } : {}),
            connections: floodConnections,
            duration: duration + 1,
            ...(flood.rate ? { overallRate: flood.rate } : {}),
            ...(flood.idReplacement ? { idReplacement: true } : {}),
          })
        : Promise.resolve(null);
      const bffBefore = cpuSecondsOrNaN(pidOf(port));
      const coreBefore = cpuSecondsOrNaN(core.pid);
      const [probeOut, floodOut] = await Promise.all([probeRun, floodRun]);
      const bffCpu = cpuSecondsOrNaN(pidOf(port)) - bffBefore;
      const coreCpuMs = Math.round((cpuSecondsOrNaN(core.pid) - coreBefore) * 1000);
      // The BFF's CPU per flood request, after taking off what the probe alone costs (the first row).
      const probeOnly = rows.find((r) => r.probe === probe.name && r.flood === 'none');
      const probeCpu = probeOnly ? (probeOnly as { bffCpuS?: number }).bffCpuS ?? 0 : 0;
      const floodRequests = floodOut ? floodOut.rps * (duration + 1) : 0;
      const bffCpuUsPerFloodRequest = floodOut && floodRequests > 0 ? Math.max(0, ((bffCpu - probeCpu) * 1e6) / floodRequests) : null;
      rows.push(Object.assign({ probe: probe.name, flood: flood?.name ?? 'none', probeOut, floodOut, bffCpuUsPerFloodRequest, coreCpuMs }, { bffCpuS: bffCpu }));
      console.error(`[bench-logger] ${probe.name} | flood ${flood?.name ?? 'none'}: probe p50 ${probeOut.p50} p99 ${probeOut.p99} ms; flood ${floodOut ? `${floodOut.rps.toFixed(0)} req/s ${JSON.stringify(floodOut.statusCodes)}` : '-'}`);
    }
  }
  const lines = [
    `Logger flood: probe at ${probeRate} req/s (4 connections), flood with ${floodConnections} connections, ${duration} s each; ` +
      (canPin ? 'BFF and core on CPU 0, both load generators on CPU 1' : 'unpinned') + `, Node ${process.version}.`,
    '',
    '| Probe | Flood on /api/logger/front | probe req/s | probe p50 ms | probe p99 ms | probe max ms | flood req/s | flood answers | BFF CPU µs per flood request | core CPU ms |',
    '|---|---|---:|---:|---:|---:|---:|---|---:|---:|',
    ...rows.map(
      (r) =>
        `| ${r.probe} | ${r.flood} | ${r.probeOut.rps.toFixed(0)} | ${r.probeOut.p50} | ${r.probeOut.p99} | ${r.probeOut.max} | ${r.floodOut ? r.floodOut.rps.toFixed(0) : '-'} | ${r.floodOut ? Object.entries(r.floodOut.statusCodes).map(([c, n]) => `${c}: ${n}`).join(', ') : '-'} | ${r.bffCpuUsPerFloodRequest === null ? '-' : r.bffCpuUsPerFloodRequest.toFixed(0)} | ${r.coreCpuMs} |`,
    ),
  ];
  console.log(`\n${lines.join('\n')}\n`);
  writeFileSync(process.env.BENCH_OUT ?? join(root, 'bench-logger-results.json'), `${JSON.stringify({ date: new Date().toISOString(), pinned: canPin, duration, probeRate, floodConnections, rows }, null, 2)}\n`);
} finally {
  await stopAll();
  rmSync(dir, { recursive: true, force: true });
}
