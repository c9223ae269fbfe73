/**
 * Does a flood on POST /api/logger/front slow the BFF's other routes?
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
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { TLoadOptions, TLoadResult } from './bench-load.ts';
import { QUIET, canPin, cpuSeconds, envNumber, root, runLoad, startServer, stopAll, tempDir } from './bench-common.ts';

const duration = envNumber('BENCH_DURATION', 8, { min: 1 });
const probeRate = envNumber('BENCH_PROBE_RATE', 200, { min: 1 });
const floodConnections = envNumber('BENCH_FLOOD_CONNECTIONS', 50, { min: 1 });
const floodRate = envNumber('BENCH_FLOOD_RATE', 2000, { min: 1 });

/** CPU seconds a process has used, NaN when unknown (so a missing figure never looks like 0). */
const cpuSecondsOrNaN = (pid: number | undefined) => cpuSeconds(pid) ?? NaN;

/** One load without warm-up (probe and flood run side by side, each in its own process). */
const load = (options: Omit<TLoadOptions, 'warmup'>): Promise<TLoadResult> => runLoad({ ...options, warmup: 0 });

const report = (message: string) =>
  JSON.stringify({
    type: 'window',
    message,
    stack: 'Error: x\n    at f (https://obmen.local/_astro/a.js:1:1)',
    url: 'https://obmen.local/exchanges',
    user_agent: 'bench',
    time: new Date().toISOString(),
  });

const dir = tempDir('obmen-bench-logger-');
const rows: Array<{
  probe: string;
  flood: string;
  probeOut: TLoadResult;
  floodOut: TLoadResult | null;
  bffCpuUsPerFloodRequest: number | null;
  coreCpuMs: number;
}> = [];
try {
  const core = await startServer({ name: 'core', script: 'core/src/server.ts', env: { ...QUIET, DATA_DIR: join(dir, 'pglite') }, health: '/api/health' });
  // Two BFFs: the default limit, and one with the limit lifted (their warn lines are not shown).
  const bffEnv = { ...QUIET, UPSTREAM_URL: core.url };
  const bff = await startServer({ name: 'bff', script: 'bff/src/server.ts', env: bffEnv, health: '/local/healthcheck' });
  const bffOpen = await startServer({
    name: 'bff-open',
    script: 'bff/src/server.ts',
    env: { ...bffEnv, FRONT_LOG_PER_MINUTE: '1000000' },
    health: '/local/healthcheck',
  });
  const BFF_PORT = bff.port;
  const BFF_OPEN_PORT = bffOpen.port;
  const pidOf = (port: number) => (port === BFF_PORT ? bff.pid : bffOpen.pid);
  for (const port of [BFF_PORT, BFF_OPEN_PORT]) {
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
    {
      name: `accepted, every report different (logged), ${floodRate} req/s`,
      port: BFF_OPEN_PORT,
      body: report('flood [<id>]'),
      idReplacement: true,
      rate: floodRate,
    },
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
      const probeCpu = probeOnly ? ((probeOnly as { bffCpuS?: number }).bffCpuS ?? 0) : 0;
      const floodRequests = floodOut ? floodOut.rps * (duration + 1) : 0;
      const bffCpuUsPerFloodRequest = floodOut && floodRequests > 0 ? Math.max(0, ((bffCpu - probeCpu) * 1e6) / floodRequests) : null;
      rows.push(
        Object.assign({ probe: probe.name, flood: flood?.name ?? 'none', probeOut, floodOut, bffCpuUsPerFloodRequest, coreCpuMs }, { bffCpuS: bffCpu }),
      );
      console.error(
        `[bench-logger] ${probe.name} | flood ${flood?.name ?? 'none'}: probe p50 ${probeOut.latencyMs.p50} p99 ${probeOut.latencyMs.p99} ms; flood ${floodOut ? `${floodOut.rps.toFixed(0)} req/s ${JSON.stringify(floodOut.statusCodes)}` : '-'}`,
      );
    }
  }
  const lines = [
    `Logger flood: probe at ${probeRate} req/s (4 connections), flood with ${floodConnections} connections, ${duration} s each; ` +
      (canPin ? 'BFF and core on CPU 0, both load generators on CPU 1' : 'unpinned') +
      `, Node ${process.version}.`,
    '',
    '| Probe | Flood on /api/logger/front | probe req/s | probe p50 ms | probe p99 ms | probe max ms | flood req/s | flood answers | BFF CPU µs per flood request | core CPU ms |',
    '|---|---|---:|---:|---:|---:|---:|---|---:|---:|',
    ...rows.map(
      (r) =>
        `| ${r.probe} | ${r.flood} | ${r.probeOut.rps.toFixed(0)} | ${r.probeOut.latencyMs.p50} | ${r.probeOut.latencyMs.p99} | ${r.probeOut.latencyMs.max} | ${r.floodOut ? r.floodOut.rps.toFixed(0) : '-'} | ${
          r.floodOut
            ? Object.entries(r.floodOut.statusCodes)
                .map(([c, n]) => `${c}: ${n}`)
                .join(', ')
            : '-'
        } | ${r.bffCpuUsPerFloodRequest === null ? '-' : r.bffCpuUsPerFloodRequest.toFixed(0)} | ${r.coreCpuMs} |`,
    ),
  ];
  console.log(`\n${lines.join('\n')}\n`);
  writeFileSync(
    process.env.BENCH_OUT ?? join(root, 'bench-logger-results.json'),
    `${JSON.stringify({ date: new Date().toISOString(), pinned: canPin, duration, probeRate, floodConnections, rows }, null, 2)}\n`,
  );
} finally {
  await stopAll();
}
