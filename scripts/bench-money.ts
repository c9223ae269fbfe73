/**
 * The money bench: transfers per second and p99 over HTTP, straight to the
 * core and through the BFF, on PostgreSQL and on PGlite, with 100 accounts and with 2 hot
 * accounts, and the ledger's invariants checked after every run.
 *
 * Each run: a fresh database (PostgreSQL: a new database beside BENCH_DATABASE_URL or
 * TEST_DATABASE_URL, dropped at the end; PGlite: a temporary directory), 100 users with a
 * session and 1 000 000 USDT each, then a core (and a BFF in front of it) as child processes,
 * then autocannon from 127.0.0.1 posting POST /api/transfer (form data, 0.1 USDT, a unique
 * Idempotency-Key per request) from random senders to random other users — or, "2 hot
 * accounts", only between the first two users, both ways. After the load the servers stop
 * and the bench checks: ledger rules (core/src/domains/ledger/invariants.ts), per-currency
 * sums unchanged, and as many transfers stored as 2xx answers received.
 *
 * Each run takes BENCH_MONEY_ROUNDS loads on the same servers and reports the medians: one
 * 8-second figure on this kind of machine moves by ±25% from run to run. No process is pinned
 * to a CPU unless BENCH_MONEY_PIN=true (see `pin` below).
 *
 *   node scripts/bench-money.ts                      all runs, a Markdown table on stdout
 *   import { runMoneyBench } from './bench-money.ts' the same from another script
 *
 * Knobs (environment): BENCH_MONEY_DURATION (8 s), BENCH_MONEY_WARMUP (2 s),
 * BENCH_MONEY_CONNECTIONS (64 on PostgreSQL, 16 on PGlite), BENCH_MONEY_ENGINES (postgres,pglite),
 * BENCH_MONEY_PATHS (core,bff), BENCH_MONEY_SCENARIOS (spread,hot), BENCH_MONEY_POOL (the
 * core's DB_POOL_SIZE; unset: its default), BENCH_MONEY_OUT (bench-money-results.json), SITE_DIST (the site
 * build the BFF serves; without one the BFF runs are skipped), BENCH_DATABASE_URL,
 * BENCH_MONEY_CORE_NODE_ARGS and BENCH_MONEY_BFF_NODE_ARGS (e.g. "--cpu-prof --cpu-prof-dir=/tmp/prof"
 * to profile the core or the BFF),
 * BENCH_MONEY_ROUNDS (3: each run's servers take this many loads; the table gives medians),
 * BENCH_MONEY_PIN=true (servers on CPU 0 and the load generator on CPU 1, with taskset).
 * Exit status 1 when a run saw errors or non-2xx answers, or an invariant was violated.
 */
import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import {
  QUIET,
  canPin,
  cpuMeter,
  envList,
  envNumber,
  median,
  root,
  runLoad,
  startServer,
  stopProcess,
  tempDir,
  usPer,
  type TMeasuredLoad,
  type TMeter,
  type TServer,
} from './bench-common.ts';

export type TMoneyEngine = 'postgres' | 'pglite';
export type TMoneyPath = 'core' | 'bff';
export type TMoneyScenario = 'spread' | 'hot';

export type TMoneyRun = {
  id: string;
  engine: TMoneyEngine;
  path: TMoneyPath;
  scenario: TMoneyScenario;
  /** The median of the rounds, and each round's figure. */
  transfersPerSecond: number;
  rounds: number[];
  connections: number;
  /** CPU time per transfer of the core, the BFF, the PostgreSQL server (all its processes) and the load generator, µs. */
  coreCpuUs: number | null;
  bffCpuUs: number | null;
  pgCpuUs: number | null;
  loadCpuUs: number | null;
  p50Ms: number;
  p99Ms: number;
  requests: number;
  non2xx: number;
  errors: number;
  /** 2xx answers during warm-up and measurement, and transfers of this run found in the database. */
  answered: number;
  stored: number;
  violations: string[];
  target: TMoneyTarget;
  met: boolean;
};

/**
 * What a run must reach: transfers/s (median), p99 latency, and on PostgreSQL the server's CPU
 * per transfer (half of the 1 050 µs measured before transfers were batched). PostgreSQL:
 * 2 500/s with 100 accounts and 1 200/s with 2 hot accounts, on either path (the BFF's is the
 * one that counts, the core's can only be faster); PGlite: 500/s.
 */
export type TMoneyTarget = { transfersPerSecond: number; p99Ms: number; pgCpuUs: number | null };

export function target(engine: TMoneyEngine, scenario: TMoneyScenario): TMoneyTarget {
  if (engine === 'pglite') return { transfersPerSecond: 500, p99Ms: 100, pgCpuUs: null };
  return { transfersPerSecond: scenario === 'hot' ? 1200 : 2500, p99Ms: 100, pgCpuUs: 525 };
}

/** Which parts of its target a run missed (none: met). */
export function missed(run: Pick<TMoneyRun, 'transfersPerSecond' | 'p99Ms' | 'pgCpuUs'>, goal: TMoneyTarget): string[] {
  return [
    ...(run.transfersPerSecond < goal.transfersPerSecond ? ['transfers/s'] : []),
    ...(run.p99Ms >= goal.p99Ms ? ['p99'] : []),
    ...(goal.pgCpuUs !== null && run.pgCpuUs !== null && run.pgCpuUs > goal.pgCpuUs ? ['PostgreSQL CPU'] : []),
  ];
}

const describeTarget = (goal: TMoneyTarget) =>
  `>= ${goal.transfersPerSecond}/s, p99 < ${goal.p99Ms} ms${goal.pgCpuUs === null ? '' : `, PostgreSQL <= ${goal.pgCpuUs} µs`}`;

const USERS = 100;
const FUNDS = 1_000_000_000_000n; // 1 000 000 USDT (6 decimals)
const AMOUNT = '0.1';

// ---- the load: autocannon (scripts/bench-load.ts) with requests made here -------------------

/** What the load generator needs to make transfers (sent to it as JSON). */
export type TTransferPlan = {
  /** The BFF takes the session as the remember_token cookie, the core as a Bearer token. */
  viaBff: boolean;
  tokens: string[];
  accountIds: number[];
  /** Only between the first two users, both ways. */
  hot: boolean;
  /** Prefix of the idempotency keys: the transfers of this run are found by it afterwards. */
  runId: string;
};

/** autocannon's requests for POST /api/transfer: random sender and receiver, a fresh idempotency key each (run by bench-load.ts). */
export function transferRequests(plan: TTransferPlan): object[] {
  let counter = 0;
  const users = plan.hot ? 2 : plan.tokens.length;
  const setupRequest = (request: Record<string, unknown>) => {
    const from = Math.floor(Math.random() * users);
    let to = Math.floor(Math.random() * (users - 1));
    if (to >= from) to++;
    const session = plan.viaBff ? { cookie: `remember_token=${plan.tokens[from]}` } : { authorization: `Bearer ${plan.tokens[from]}` };
    request.headers = {
      'content-type': 'application/x-www-form-urlencoded',
      'idempotency-key': `${plan.runId}-${process.pid}-${++counter}`,
      ...session,
    };
    request.body = `account_id=${plan.accountIds[to]}&currency=USDT&amount=${AMOUNT}`;
    return request;
  };
  return [{ method: 'POST', path: '/api/transfer', setupRequest }];
}

// ---- servers --------------------------------------------------------------------------------

/**
 * Not pinned by default, unlike the API bench: pinning put the core and the BFF on one CPU,
 * which on PGlite (the database inside the core's process) capped the pair at one CPU while
 * the other served only the load generator. Here every process shares both CPUs, as they
 * would on a two-CPU server.
 */
const pin = canPin && process.env.BENCH_MONEY_PIN === 'true';

/** The PostgreSQL server's CPU time (postmaster and its backends) when it runs on this machine and /proc shows it. */
export async function postgresMeter(database: TDatabase): Promise<TMeter> {
  const db = await database.open();
  try {
    const [row] = await db.query<{ dir: string }>("SELECT current_setting('data_directory') AS dir");
    const pid = Number(readFileSync(join(row!.dir, 'postmaster.pid'), 'utf8').split('\n')[0]);
    return cpuMeter([pid], true);
  } catch {
    return () => null;
  } finally {
    await db.close();
  }
}

// ---- databases ------------------------------------------------------------------------------

export type TDatabase = { env: Record<string, string>; open: () => Promise<import('../core/src/db/index.ts').Db>; drop: () => Promise<void> };

export async function freshDatabase(engine: TMoneyEngine): Promise<TDatabase> {
  const { openDb } = await import('../core/src/db/index.ts');
  const silent = { error: () => {}, warn: () => {}, info: () => {} };
  if (engine === 'pglite') {
    const dir = tempDir('obmen-bench-money-');
    const dataDir = join(dir, 'pglite');
    return {
      env: { DATA_DIR: dataDir },
      open: () => openDb({ DATA_DIR: dataDir, DB_POOL_SIZE: 1 }, silent),
      drop: async () => rmSync(dir, { recursive: true, force: true }),
    };
  }
  const adminUrl = process.env.BENCH_DATABASE_URL ?? process.env.TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
  const name = `obmen_bench_${randomBytes(5).toString('hex')}`;
  // The core's own database handle creates and drops the database (no driver of our own here).
  const admin = () => openDb({ DATABASE_URL: adminUrl, DATA_DIR: '', DB_POOL_SIZE: 1 }, silent);
  const created = await admin();
  await created.query(`CREATE DATABASE ${name}`);
  await created.close();
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  return {
    env: { DATABASE_URL: url.href },
    open: () => openDb({ DATABASE_URL: url.href, DATA_DIR: '', DB_POOL_SIZE: 4 }, silent),
    drop: async () => {
      const db = await admin();
      await db.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await db.close();
    },
  };
}

export type TPrepared = { tokens: string[]; accountIds: number[]; sums: Record<string, string> };

export async function prepare(database: TDatabase): Promise<TPrepared> {
  const { migrate } = await import('../core/src/db/migrate.ts');
  const { seedDemoData } = await import('../core/src/seed/demo.ts');
  const { createFixtureUser, fund } = await import('../core/test/fixtures.ts');
  const db = await database.open();
  try {
    await migrate(db);
    await seedDemoData(db, { demoAccount: false, sandboxCatalogue: true });
    // Every transfer of the bench is free of fees and limits but the minimum.
    await db.query(`UPDATE transfer_settings SET fee_percent = 0, fee_fixed = 0, max_amount = NULL WHERE currency = 'USDT'`);
    const tokens: string[] = [];
    const accountIds: number[] = [];
    for (let i = 0; i < USERS; i++) {
      const user = await createFixtureUser(db);
      await fund(db, user.id, 'USDT', FUNDS, 'bench');
      tokens.push(user.token);
      accountIds.push(user.accountId);
    }
    return { tokens, accountIds, sums: await sums(db) };
  } finally {
    await db.close();
  }
}

async function sums(db: import('../core/src/db/index.ts').Db): Promise<Record<string, string>> {
  const rows = await db.query<{ currency: string; total: string }>(
    'SELECT currency, sum(balance)::text AS total FROM ledger_accounts GROUP BY currency ORDER BY currency',
  );
  return Object.fromEntries(rows.map((row) => [row.currency, row.total]));
}

export async function verify(database: TDatabase, before: Record<string, string>, runId: string): Promise<{ violations: string[]; stored: number }> {
  const { checkLedger } = await import('../core/src/domains/ledger/invariants.ts');
  const db = await database.open();
  try {
    const report = await checkLedger(db);
    const violations = report.violations.map((v) => `${v.rule}: ${v.detail}`);
    const after = await sums(db);
    if (JSON.stringify(after) !== JSON.stringify(before)) violations.push(`per-currency sums changed: ${JSON.stringify(before)} → ${JSON.stringify(after)}`);
    const [row] = await db.query<{ n: number }>('SELECT count(*)::int AS n FROM transfers WHERE idempotency_key LIKE $1', [`${runId}-%`]);
    return { violations, stored: row!.n };
  } finally {
    await db.close();
  }
}

// ---- the bench ------------------------------------------------------------------------------

export type TMoneyBenchOptions = {
  engines?: TMoneyEngine[];
  paths?: TMoneyPath[];
  scenarios?: TMoneyScenario[];
  duration?: number;
  warmup?: number;
  rounds?: number;
  connections?: number;
  pool?: number;
  siteDist?: string;
  log?: (line: string) => void;
};

const number = (name: string, fallback: number) => envNumber(name, fallback, { fraction: true });

export async function runMoneyBench(options: TMoneyBenchOptions = {}): Promise<TMoneyRun[]> {
  const engines = options.engines ?? envList('BENCH_MONEY_ENGINES', ['postgres', 'pglite'] as const);
  const paths = options.paths ?? envList('BENCH_MONEY_PATHS', ['core', 'bff'] as const);
  const scenarios = options.scenarios ?? envList('BENCH_MONEY_SCENARIOS', ['spread', 'hot'] as const);
  const duration = options.duration ?? number('BENCH_MONEY_DURATION', 8);
  const warmup = options.warmup ?? number('BENCH_MONEY_WARMUP', 2);
  const rounds = Math.max(1, options.rounds ?? number('BENCH_MONEY_ROUNDS', 3));
  // PGlite runs one query at a time: beyond a few in flight, more connections only add queueing.
  const connectionsFor = (engine: TMoneyEngine) => options.connections ?? number('BENCH_MONEY_CONNECTIONS', engine === 'pglite' ? 16 : 64);
  const pool = options.pool ?? (process.env.BENCH_MONEY_POOL ? number('BENCH_MONEY_POOL', 0) : null);
  const siteDist = options.siteDist ?? process.env.SITE_DIST ?? join(root, 'site/dist');
  const log = options.log ?? ((line: string) => console.error(`[bench-money] ${line}`));
  const haveSite = existsSync(join(siteDist, 'server', 'entry.mjs'));
  if (paths.includes('bff') && !haveSite) log(`no site build at ${siteDist}: the runs through the BFF are skipped (pnpm build first)`);
  if (process.env.BENCH_MONEY_PIN === 'true' && !canPin) log('taskset or a second CPU is missing: servers and load generator share the CPUs');

  const runs: TMoneyRun[] = [];
  for (const engine of engines) {
    for (const scenario of scenarios) {
      for (const path of paths) {
        if (path === 'bff' && !haveSite) continue;
        const id = `${engine}-${path}-${scenario}`;
        const runId = `bench-${randomBytes(4).toString('hex')}`;
        const database = await freshDatabase(engine);
        let core: TServer | null = null;
        let bff: TServer | null = null;
        type TOutcome = TMeasuredLoad & { cpuUs: Array<number | null> };
        try {
          const prepared = await prepare(database);
          const nodeArgs = (name: string) => process.env[name]?.split(' ').filter(Boolean) ?? [];
          core = await startServer({
            name: 'core',
            script: 'core/src/server.ts',
            env: { ...QUIET, ...database.env, ...(pool ? { DB_POOL_SIZE: String(pool) } : {}) },
            health: '/api/health',
            nodeArgs: nodeArgs('BENCH_MONEY_CORE_NODE_ARGS'),
            pin,
          });
          if (path === 'bff') {
            bff = await startServer({
              name: 'bff',
              script: 'bff/src/server.ts',
              env: { ...QUIET, UPSTREAM_URL: core.url, SITE_DIST: siteDist },
              health: '/local/healthcheck',
              nodeArgs: nodeArgs('BENCH_MONEY_BFF_NODE_ARGS'),
              pin,
            });
          }
          const meters: TMeter[] = [core, ...(bff ? [bff] : [])].map((server) => cpuMeter([server.pid]));
          if (engine === 'postgres') meters.push(await postgresMeter(database));
          const outcomes: TOutcome[] = [];
          const transfers: TTransferPlan = { viaBff: path === 'bff', tokens: prepared.tokens, accountIds: prepared.accountIds, hot: scenario === 'hot', runId };
          const url = (bff ?? core).url;
          const measure = async (): Promise<TOutcome> => {
            const run = await runLoad(
              {
                url,
                connections: connectionsFor(engine),
                duration,
                warmup,
                requestsFrom: { module: 'scripts/bench-money.ts', name: 'transferRequests', plan: transfers },
              },
              meters,
              pin,
            );
            // Transfers per second: 2xx answers only; CPU per transfer of the measured part.
            const rps = run.ok / run.seconds;
            const done = rps * duration;
            return { ...run, rps, cpuUs: [...run.cpuSeconds, run.loadgenCpuSeconds].map((used) => usPer(used, done)) };
          };
          for (let round = 1; round <= rounds; round++) {
            const outcome = await measure();
            outcomes.push(outcome);
            log(
              `${id} round ${round}/${rounds}: ${outcome.rps.toFixed(0)} transfers/s, p99 ${outcome.latencyMs.p99} ms, ${outcome.non2xx} non-2xx, ${outcome.errors + outcome.timeouts} errors`,
            );
          }
          await stopProcess(bff);
          await stopProcess(core);
          bff = core = null;
          const { violations, stored } = await verify(database, prepared.sums, runId);
          const sum = (pick: (o: TOutcome) => number) => outcomes.reduce((total, o) => total + pick(o), 0);
          const answered = sum((o) => o.ok + o.warmupOk);
          // Requests still in flight when a timed run ends are applied but not counted: at most one per connection per run.
          if (stored < answered || stored > answered + 2 * rounds * connectionsFor(engine))
            violations.push(`${answered} transfers answered 2xx but ${stored} stored`);
          const mid = (pick: (o: (typeof outcomes)[number]) => number | null | undefined) => {
            const values = outcomes.map(pick).filter((v): v is number => v != null);
            return values.length ? median(values) : null;
          };
          const goal = target(engine, scenario);
          const transfersPerSecond = mid((o) => o.rps)!;
          const p99Ms = mid((o) => o.latencyMs.p99)!;
          const pgCpuUs = engine === 'postgres' ? mid((o) => o.cpuUs.at(-2)) : null;
          const run: TMoneyRun = {
            id,
            engine,
            path,
            scenario,
            transfersPerSecond,
            rounds: outcomes.map((o) => Math.round(o.rps)),
            connections: connectionsFor(engine),
            coreCpuUs: mid((o) => o.cpuUs[0]),
            bffCpuUs: path === 'bff' ? mid((o) => o.cpuUs[1]) : null,
            pgCpuUs,
            loadCpuUs: mid((o) => o.cpuUs.at(-1)),
            p50Ms: mid((o) => o.latencyMs.p50)!,
            p99Ms,
            requests: sum((o) => o.requests),
            non2xx: sum((o) => o.non2xx),
            errors: sum((o) => o.errors + o.timeouts),
            answered,
            stored,
            violations,
            target: goal,
            met: missed({ transfersPerSecond, p99Ms, pgCpuUs }, goal).length === 0,
          };
          runs.push(run);
          log(
            `${id}: median ${transfersPerSecond.toFixed(0)} transfers/s of ${run.rounds.join(', ')}, p99 ${run.p99Ms} ms; ` +
              `invariants ${violations.length ? `VIOLATED: ${violations.join('; ')}` : 'hold'}`,
          );
        } finally {
          await stopProcess(bff);
          await stopProcess(core);
          await database.drop();
        }
      }
    }
  }
  return runs;
}

export function moneyTable(runs: TMoneyRun[]): string {
  const label: Record<TMoneyScenario, string> = { spread: '100 accounts', hot: '2 hot accounts' };
  return [
    '| Engine | Path | Accounts | transfers/s (median) | rounds | p50 ms | p99 ms | CPU µs/transfer core + bff | PostgreSQL CPU µs | load generator CPU µs | target | verdict | non-2xx / errors | invariants |',
    '|---|---|---|---:|---|---:|---:|---:|---:|---:|---:|---|---:|---|',
    ...runs.map(
      (r) =>
        `| ${r.engine === 'postgres' ? 'PostgreSQL' : 'PGlite'} | ${r.path === 'bff' ? 'through the BFF' : 'core HTTP API'} | ${label[r.scenario]} | ` +
        `${r.transfersPerSecond.toFixed(0)} | ${r.rounds.join(', ')} | ${r.p50Ms} | ${r.p99Ms} | ${r.coreCpuUs?.toFixed(0) ?? 'n/a'}${r.bffCpuUs != null ? ` + ${r.bffCpuUs.toFixed(0)}` : ''} | ${r.pgCpuUs?.toFixed(0) ?? '-'} | ${r.loadCpuUs?.toFixed(0) ?? 'n/a'} | ${describeTarget(r.target)} | ${r.met ? 'met' : `MISSED: ${missed(r, r.target).join(', ')}`} | ${r.non2xx} / ${r.errors} | ` +
        `${r.violations.length ? 'VIOLATED' : `hold (${r.answered} answered 2xx, ${r.stored} stored)`} |`,
    ),
  ].join('\n');
}

if (import.meta.main) {
  const started = Date.now();
  const runs = await runMoneyBench();
  const header =
    `Obmen money bench: POST /api/transfer, ${number('BENCH_MONEY_ROUNDS', 3)} rounds of ${number('BENCH_MONEY_WARMUP', 2)} s warm-up + ${number('BENCH_MONEY_DURATION', 8)} s, ` +
    `${process.env.BENCH_MONEY_CONNECTIONS ?? '64 (PostgreSQL) / 16 (PGlite)'} connections, core pool ${process.env.BENCH_MONEY_POOL ?? 'the default (4 per CPU)'}, Node ${process.version}, ` +
    (pin ? 'servers on CPU 0, load generator on CPU 1' : 'all processes on all CPUs');
  console.log(`\n${header}\n\n${moneyTable(runs)}\n`);
  const out = process.env.BENCH_MONEY_OUT ?? join(root, 'bench-money-results.json');
  writeFileSync(
    out,
    `${JSON.stringify({ date: new Date().toISOString(), node: process.version, pinned: pin, runs, seconds: Math.round((Date.now() - started) / 1000) }, null, 2)}\n`,
  );
  console.error(`[bench-money] figures written to ${out}`);
  const bad = runs.filter((r) => r.non2xx + r.errors > 0 || r.violations.length);
  process.exit(bad.length ? 1 : 0);
}
