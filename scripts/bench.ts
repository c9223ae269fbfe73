/**
 * `pnpm bench`: throughput and tail latency of the BFF against the core, measured side by side
 * in one run, on loopback only.
 *
 * It starts its own servers as child processes (Node 26, this process's own binary): the core on
 * PGlite in a throw-away data directory, the BFF in front of it, and for the proxy-only figures a
 * stub upstream with a second BFF in front of it. The servers share CPU 0 and the load generator
 * (scripts/bench-load.ts, autocannon) runs alone on CPU 1 (`taskset`, when there is one and the
 * machine has two CPUs or more), so "through the BFF" pays for the BFF and the core on one CPU
 * while "straight to the core" pays for the core alone: the ratio is the price of the BFF hop.
 *
 * Scenarios run in rounds (each scenario once per round, in order), so slow drift of the machine
 * hits all of them alike; the table shows the median of the rounds, and a comparison the median
 * of its per-round ratios. Besides requests/s and latency it reports the CPU time the server
 * processes used per request (from /proc), which other load on the machine disturbs far less
 * than requests/s, and from it the "CPU ratio": the req/s ratio on a CPU of their own.
 *
 * The transfer rows post POST /api/transfer between 100 prepared users (bench-money.ts makes the
 * requests) straight to the core and through the BFF: the BFF's own CPU per transfer has a target.
 *
 * Output: a Markdown table on stdout, the figures as JSON in bench-results.json.
 * Knobs (environment): BENCH_ROUNDS (3), BENCH_DURATION (8 s), BENCH_WARMUP (2 s),
 * BENCH_CONNECTIONS (50), BENCH_ONLY (comma-separated scenario ids), BENCH_OUT (file),
 * BENCH_DATABASE_URL (run the core on PostgreSQL instead of PGlite), SITE_DIST (site build).
 * Exit status 1 when a scenario saw errors or non-2xx answers, or a server failed to start.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  LOADGEN_CPU,
  QUIET,
  SERVER_CPU,
  canPin,
  cpuMeter,
  envNumber,
  loadAverage,
  median,
  root,
  runLoad,
  startServer,
  stopAll,
  tempDir,
  usPer,
  type TMeasuredLoad,
  type TServer as TStarted,
} from './bench-common.ts';
import { freshDatabase, prepare, type TDatabase, type TTransferPlan } from './bench-money.ts';

// ---------------------------------------------------------------------------------------------
// What is measured. Later issues add scenarios (article page against nginx, transfers/s, …):
// a server here, a scenario and perhaps a comparison below.

type TServerId = 'core' | 'bff' | 'stub' | 'bff-stub';

type TServer = {
  id: TServerId;
  script: string;
  health: string;
  /** Started first; their URL is available to env(). */
  needs?: TServerId[];
  env: (url: (id: TServerId) => string) => Record<string, string>;
};

type TScenario = {
  id: string;
  title: string;
  server: TServerId;
  path: string;
  method?: string;
  headers?: Record<string, string>;
  body?: string;
  connections?: number;
  /**
   * Checked once before the load: a benchmark of error pages measures nothing. Without one (the
   * transfers, each request its own), a non-2xx answer during the load fails the bench instead.
   */
  check?: (response: { status: number; type: string; body: string }) => string | null;
  /** POST /api/transfer between the bench's users (bench-money.ts makes the requests), through the BFF or not. */
  transfers?: 'core' | 'bff';
};

type TComparison = {
  id: string;
  title: string;
  /** The slower path, e.g. through the BFF. */
  subject: string;
  /** The path it is measured against, e.g. straight to the core. */
  baseline: string;
  /** subject req/s must reach at least this share of the baseline's (unset: shown for scale only). */
  minRpsRatio?: number;
  /** subject p99 at most this multiple of the baseline's. */
  maxP99Ratio?: number;
  /** At most this much CPU of one server of the subject's path per request (the hop's own cost). */
  maxCpuUs?: { server: TServerId; us: number };
};

const dataDir = tempDir('obmen-bench-');
/** The core's database when transfers are measured: 100 users with sessions and balances (bench-money.ts). */
let moneyDb: TDatabase | null = null;
let transferUsers: { tokens: string[]; accountIds: number[] } | null = null;
const quiet = { ...QUIET, NODE_ENV: process.env.BENCH_NODE_ENV ?? 'production' };
// The servers measured against targets run as the README's start ships them: a log line per request.
const shipped = { ...quiet, LOG_LEVEL: 'info', LOG_REQUESTS: 'true' };
const siteDist: Record<string, string> = process.env.SITE_DIST ? { SITE_DIST: process.env.SITE_DIST } : {};

const SERVERS: TServer[] = [
  {
    id: 'core',
    script: 'core/src/server.ts',
    health: '/api/health',
    env: () => ({
      ...shipped,
      ...(moneyDb?.env ?? (process.env.BENCH_DATABASE_URL ? { DATABASE_URL: process.env.BENCH_DATABASE_URL } : { DATA_DIR: join(dataDir, 'pglite') })),
    }),
  },
  {
    id: 'bff',
    script: 'bff/src/server.ts',
    health: '/local/healthcheck',
    needs: ['core'],
    env: (url) => ({ ...shipped, ...siteDist, UPSTREAM_URL: url('core') }),
  },
  { id: 'stub', script: 'scripts/bench-stub.ts', health: '/api/health', env: () => ({}) },
  {
    id: 'bff-stub',
    script: 'bff/src/server.ts',
    health: '/local/healthcheck',
    needs: ['stub'],
    env: (url) => ({ ...shipped, ...siteDist, UPSTREAM_URL: url('stub') }),
  },
];

const isJsonObject = (expectFv: boolean) => (r: { status: number; type: string; body: string }) => {
  if (r.status !== 200) return `status ${r.status}`;
  if (!r.type.startsWith('application/json')) return `content-type ${r.type}`;
  const parsed = JSON.parse(r.body) as Record<string, unknown>;
  if (expectFv && typeof parsed.fv !== 'string') return 'no fv in the proxied answer';
  return null;
};
const isHtml = (r: { status: number; type: string; body: string }) =>
  r.status !== 200 ? `status ${r.status}` : r.type.startsWith('text/html') ? null : `content-type ${r.type}`;

/** GET /api/site: the smallest JSON answer of the core (site settings, about 100 bytes). */
const API_PATH = '/api/site';

const SCENARIOS: TScenario[] = [
  { id: 'core-api', title: `GET ${API_PATH} straight to the core`, server: 'core', path: API_PATH, check: isJsonObject(false) },
  { id: 'bff-api', title: `GET ${API_PATH} through the BFF`, server: 'bff', path: API_PATH, check: isJsonObject(true) },
  { id: 'stub-api', title: `GET ${API_PATH} straight to a stub upstream (no database)`, server: 'stub', path: API_PATH, check: isJsonObject(false) },
  { id: 'bff-stub-api', title: `GET ${API_PATH} through the BFF to the stub`, server: 'bff-stub', path: API_PATH, check: isJsonObject(true) },
  { id: 'bff-ssr', title: 'GET / (SSR page) through the BFF', server: 'bff', path: '/', check: isHtml },
  { id: 'core-transfer', title: 'POST /api/transfer straight to the core', server: 'core', path: '/api/transfer', transfers: 'core', connections: 16 },
  { id: 'bff-transfer', title: 'POST /api/transfer through the BFF', server: 'bff', path: '/api/transfer', transfers: 'bff', connections: 16 },
];

const COMPARISONS: TComparison[] = [
  {
    id: 'api',
    title: '/api through the BFF vs straight to the core',
    subject: 'bff-api',
    baseline: 'core-api',
    minRpsRatio: 0.8,
    maxP99Ratio: 2,
    maxCpuUs: { server: 'bff', us: 60 },
  },
  // No target: a database-free upstream answers in ~25 µs of CPU, less than any HTTP hop costs;
  // this row shows what the proxy itself costs (server CPU µs/req of bff-stub above).
  { id: 'proxy', title: '/api through the BFF vs straight to the stub (proxy cost alone)', subject: 'bff-stub-api', baseline: 'stub-api' },
  // A money call through the BFF: its own CPU per transfer (the database's time is the core's).
  {
    id: 'transfer',
    title: 'POST /api/transfer through the BFF vs straight to the core',
    subject: 'bff-transfer',
    baseline: 'core-transfer',
    maxCpuUs: { server: 'bff', us: 100 },
  },
];

// ---------------------------------------------------------------------------------------------

const settings = {
  rounds: envNumber('BENCH_ROUNDS', 3, { min: 1 }),
  duration: envNumber('BENCH_DURATION', 8, { min: 1 }),
  warmup: envNumber('BENCH_WARMUP', 2),
  connections: envNumber('BENCH_CONNECTIONS', 50, { min: 1 }),
  out: process.env.BENCH_OUT ?? join(root, 'bench-results.json'),
};

const only = process.env.BENCH_ONLY?.split(',')
  .map((id) => id.trim())
  .filter(Boolean);
const scenarios = only ? SCENARIOS.filter((s) => only.includes(s.id)) : SCENARIOS;
if (only) {
  const unknown = only.filter((id) => !SCENARIOS.some((s) => s.id === id));
  if (unknown.length) throw new Error(`BENCH_ONLY: no scenario ${unknown.join(', ')} (have: ${SCENARIOS.map((s) => s.id).join(', ')})`);
}

// ---------------------------------------------------------------------------------------------
// Servers (each after those it needs) and one measured run per scenario

const running = new Map<TServerId, TStarted>();
const serverById = (id: TServerId) => SERVERS.find((s) => s.id === id)!;
const urlOf = (id: TServerId) => running.get(id)!.url;

async function start(id: TServerId): Promise<void> {
  if (running.has(id)) return;
  const server = serverById(id);
  for (const need of server.needs ?? []) await start(need);
  const started = await startServer({ name: id, script: server.script, env: server.env(urlOf), health: server.health });
  running.set(id, started);
  console.error(`[bench] ${id} up at ${started.url} (pid ${started.pid})`);
}

type TRun = TMeasuredLoad & { cpuUsPerRequest: Partial<Record<TServerId, number>> };

async function measure(scenario: TScenario): Promise<TRun> {
  const ids = [...running.keys()];
  const run = await runLoad(
    {
      url: urlOf(scenario.server) + scenario.path,
      method: scenario.method,
      headers: scenario.headers,
      body: scenario.body,
      connections: scenario.connections ?? settings.connections,
      duration: settings.duration,
      warmup: settings.warmup,
      ...(scenario.transfers ? { requestsFrom: { module: 'scripts/bench-money.ts', name: 'transferRequests', plan: transferPlan(scenario.transfers) } } : {}),
    },
    ids.map((id) => cpuMeter([running.get(id)!.pid])),
  );
  const cpuUsPerRequest: Partial<Record<TServerId, number>> = {};
  ids.forEach((id, i) => {
    const us = usPer(run.cpuSeconds[i] ?? null, run.requests);
    if (us !== null) cpuUsPerRequest[id] = us;
  });
  return { ...run, cpuUsPerRequest };
}

/** Transfers of 0.1 USDT between random users, a fresh idempotency key each. */
function transferPlan(path: 'core' | 'bff'): TTransferPlan {
  return { viaBff: path === 'bff', tokens: transferUsers!.tokens, accountIds: transferUsers!.accountIds, hot: false, runId: `bench-api-${path}-${Date.now()}` };
}

async function checkOnce(scenario: TScenario): Promise<void> {
  if (!scenario.check) return;
  const res = await fetch(urlOf(scenario.server) + scenario.path, {
    method: scenario.method ?? 'GET',
    headers: scenario.headers,
    body: scenario.body,
  });
  const problem = scenario.check({ status: res.status, type: res.headers.get('content-type') ?? '', body: await res.text() });
  if (problem) throw new Error(`${scenario.id}: ${urlOf(scenario.server)}${scenario.path} answered wrongly before the load: ${problem}`);
}

async function shutdown(code: number): Promise<never> {
  await stopAll();
  await moneyDb?.drop();
  process.exit(code);
}

// ---------------------------------------------------------------------------------------------
// Summaries

type TSummary = {
  id: string;
  title: string;
  rps: number;
  p50Ms: number;
  p99Ms: number;
  cpuUsPerRequest: number | null;
  cpuUsPerRequestByServer: Partial<Record<TServerId, number>>;
  loadgenCpu: number;
  errors: number;
  non2xx: number;
  runs: TRun[];
};

function summarize(scenario: TScenario, runs: TRun[]): TSummary {
  const servers = [...new Set(runs.flatMap((run) => Object.keys(run.cpuUsPerRequest) as TServerId[]))];
  const byServer: Partial<Record<TServerId, number>> = {};
  for (const id of servers) {
    const values = runs.map((run) => run.cpuUsPerRequest[id]).filter((v): v is number => v !== undefined);
    if (values.length) byServer[id] = median(values);
  }
  // Only the processes this scenario goes through; the idle ones add noise, not cost.
  const path = chain(scenario.server);
  const totals = runs.map((run) => path.reduce((sum, id) => sum + (run.cpuUsPerRequest[id] ?? NaN), 0));
  return {
    id: scenario.id,
    title: scenario.title,
    rps: median(runs.map((r) => r.rps)),
    p50Ms: median(runs.map((r) => r.latencyMs.p50)),
    p99Ms: median(runs.map((r) => r.latencyMs.p99)),
    // A run that completed no request (a very slow page on a busy machine) has no CPU figure.
    cpuUsPerRequest: totals.some(Number.isFinite) ? median(totals.filter(Number.isFinite)) : null,
    cpuUsPerRequestByServer: byServer,
    loadgenCpu: median(runs.map((r) => r.loadgenCpu)),
    errors: runs.reduce((sum, r) => sum + r.errors + r.timeouts, 0),
    non2xx: runs.reduce((sum, r) => sum + r.non2xx, 0),
    runs,
  };
}

function chain(id: TServerId): TServerId[] {
  return [id, ...(serverById(id).needs ?? []).flatMap(chain)];
}

const fmt = (value: number | null, digits = 0) => (value === null || !Number.isFinite(value) ? 'n/a' : value.toFixed(digits));

type TCompared = { c: TComparison; rpsRatio: number; p99Ratio: number; cpuRatio: number | null; hopCpuUs: number | null; ok: boolean | null };

function table(summaries: TSummary[], comparisons: TCompared[]): string {
  const lines = [
    `| Scenario | req/s | p50 ms | p99 ms | server CPU µs/req | load gen CPU | errors |`,
    `|---|---:|---:|---:|---:|---:|---:|`,
    ...summaries.map((s) => {
      const parts = chain(serverById(SCENARIOS.find((x) => x.id === s.id)!.server).id)
        .map((id) => `${id} ${fmt(s.cpuUsPerRequestByServer[id] ?? null)}`)
        .join(' + ');
      return `| ${s.title} | ${fmt(s.rps)} | ${fmt(s.p50Ms)} | ${fmt(s.p99Ms)} | ${fmt(s.cpuUsPerRequest)} (${parts}) | ${fmt(s.loadgenCpu * 100)}% | ${s.errors + s.non2xx} |`;
    }),
  ];
  if (comparisons.length) {
    lines.push(
      '',
      `| Comparison | req/s ratio | target | p99 ratio | target | hop CPU µs/req | target | verdict | CPU ratio |`,
      `|---|---:|---:|---:|---:|---:|---:|---|---:|`,
    );
    for (const { c, rpsRatio, p99Ratio, cpuRatio, hopCpuUs, ok } of comparisons) {
      const rpsTarget = c.minRpsRatio === undefined ? '–' : `>= ${c.minRpsRatio}x`;
      const p99Target = c.maxP99Ratio === undefined ? '–' : `<= ${c.maxP99Ratio}x`;
      const cpuTarget = c.maxCpuUs === undefined ? '–' : `${c.maxCpuUs.server} <= ${c.maxCpuUs.us}`;
      const verdict = ok === null ? 'for scale' : ok ? 'met' : 'MISSED';
      lines.push(
        `| ${c.title} | ${fmt(rpsRatio, 2)}x | ${rpsTarget} | ${fmt(p99Ratio, 2)}x | ${p99Target} | ${fmt(hopCpuUs)} | ${cpuTarget} | ${verdict} | ${fmt(cpuRatio, 2)}x |`,
      );
    }
  }
  return lines.join('\n');
}

// ---------------------------------------------------------------------------------------------

try {
  const started = Date.now();
  const loadBefore = loadAverage();
  if (loadBefore !== null && loadBefore > 1) {
    console.error(`[bench] the machine is busy before the bench starts (load average ${loadBefore}): expect noisy req/s; the CPU µs/req figures suffer less`);
  }
  if (!canPin) console.error('[bench] taskset or a second CPU is missing: servers and load generator share the CPUs (figures are rougher)');
  if (scenarios.some((s) => s.transfers)) {
    // Before the core starts (PGlite is one process's): the users the transfers move money between.
    moneyDb = await freshDatabase(process.env.BENCH_DATABASE_URL ? 'postgres' : 'pglite');
    transferUsers = await prepare(moneyDb);
  }
  for (const scenario of scenarios) await start(scenario.server);
  for (const scenario of scenarios) await checkOnce(scenario);

  const runs = new Map<string, TRun[]>(scenarios.map((s) => [s.id, []]));
  for (let round = 1; round <= settings.rounds; round++) {
    for (const scenario of scenarios) {
      const run = await measure(scenario);
      runs.get(scenario.id)!.push(run);
      console.error(
        `[bench] round ${round}/${settings.rounds} ${scenario.id}: ${fmt(run.rps)} req/s, p99 ${run.latencyMs.p99} ms` +
          (run.errors + run.non2xx + run.timeouts ? `, ${run.errors} errors, ${run.timeouts} timeouts, ${run.non2xx} non-2xx` : ''),
      );
    }
  }

  const summaries = scenarios.map((s) => summarize(s, runs.get(s.id)!));
  const find = (id: string) => summaries.find((s) => s.id === id);
  // Ratios per round (the two runs of a round are back to back, so they share the machine's
  // state), then the median of those: steadier than the ratio of two medians on a busy machine.
  // The CPU ratio (baseline's server CPU per request / subject's) is what the req/s ratio would
  // be with the server CPU to themselves; other load on the machine disturbs it much less.
  const comparisons = COMPARISONS.flatMap((c): TCompared[] => {
    const subject = find(c.subject);
    const baseline = find(c.baseline);
    if (!subject || !baseline) return [];
    const rounds = subject.runs.map((run, i) => ({ subject: run, baseline: baseline.runs[i]! }));
    const rpsRatio = median(rounds.map((r) => r.subject.rps / r.baseline.rps));
    const p99Ratio = median(rounds.map((r) => r.subject.latencyMs.p99 / Math.max(r.baseline.latencyMs.p99, 1)));
    const cpuRatio = subject.cpuUsPerRequest && baseline.cpuUsPerRequest ? baseline.cpuUsPerRequest / subject.cpuUsPerRequest : null;
    const hopCpuUs = c.maxCpuUs ? (subject.cpuUsPerRequestByServer[c.maxCpuUs.server] ?? null) : null;
    const targeted = c.minRpsRatio !== undefined || c.maxP99Ratio !== undefined || c.maxCpuUs !== undefined;
    const cpuOk = c.maxCpuUs === undefined || (hopCpuUs !== null && hopCpuUs <= c.maxCpuUs.us);
    const ok = targeted ? rpsRatio >= (c.minRpsRatio ?? 0) && p99Ratio <= (c.maxP99Ratio ?? Infinity) && cpuOk : null;
    return [{ c, rpsRatio, p99Ratio, cpuRatio, hopCpuUs, ok }];
  });

  const node = process.version;
  const header =
    `Obmen bench: ${settings.rounds} rounds x (${settings.warmup} s warm-up + ${settings.duration} s), ` +
    `${settings.connections} connections, Node ${node}, ` +
    (canPin ? `servers on CPU ${SERVER_CPU}, load generator on CPU ${LOADGEN_CPU}` : 'unpinned') +
    `, core on ${process.env.BENCH_DATABASE_URL ? 'PostgreSQL' : 'PGlite'}; medians of the rounds (ratios: median of per-round ratios).`;
  const loadAfter = loadAverage();
  const busy = loadBefore === null ? '' : ` Load average ${loadBefore} before, ${loadAfter} after (the bench itself adds about 2).`;
  console.log(`\n${header}${busy}\n\n${table(summaries, comparisons)}\n`);

  writeFileSync(
    settings.out,
    `${JSON.stringify(
      {
        date: new Date().toISOString(),
        node,
        pinned: canPin,
        loadAverage: { before: loadBefore, after: loadAfter },
        settings,
        scenarios: summaries,
        comparisons: comparisons.map(({ c, ...figures }) => ({ ...c, ...figures })),
        seconds: Math.round((Date.now() - started) / 1000),
      },
      null,
      2,
    )}\n`,
  );
  console.error(`[bench] figures written to ${settings.out} (${Math.round((Date.now() - started) / 1000)} s)`);
  const failed = summaries.filter((s) => s.errors + s.non2xx > 0);
  if (failed.length) console.error(`[bench] errors or non-2xx answers in: ${failed.map((s) => s.id).join(', ')}`);
  await shutdown(failed.length ? 1 : 0);
} catch (err) {
  console.error(`[bench] ${err instanceof Error ? err.message : String(err)}`);
  await shutdown(1);
}
