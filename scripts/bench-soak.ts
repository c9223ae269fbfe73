/**
 * The soak: steady mixed load through the BFF for BENCH_SOAK_DURATION (600 s),
 * sampling the resident memory of the core and the BFF, then:
 *   RSS growth    per process, the median of the last window of samples against the median of
 *                 the first window after the warm-up (windows: a quarter of the measured time);
 *                 must stay under 10% for each process;
 *   failure rate  non-2xx answers, errors and timeouts over all requests; under 1%;
 *   ledger        the invariants hold and per-currency sums are unchanged afterwards.
 * The load, at a fixed rate (autocannon's overallRate, over BENCH_SOAK_CONNECTIONS), cycles
 * through: the cached article page signed out, the home page signed in (SSR), GET /api/site,
 * GET /api/wallets, GET /api/transfer/history and POST /api/transfer (0.1 USDT between random
 * users of the money bench's 100, a fresh idempotency key each).
 *
 *   BENCH_SUITES=soak pnpm bench         or   node scripts/bench-soak.ts
 * Knobs: BENCH_SOAK_DURATION (600 s), BENCH_SOAK_WARMUP (a fifth of the duration; at most
 * half), BENCH_SOAK_RATE (100 req/s), BENCH_SOAK_CONNECTIONS (10), BENCH_SOAK_SAMPLE (5 s),
 * BENCH_SOAK_ENGINE (postgres: a fresh database beside BENCH_DATABASE_URL or TEST_DATABASE_URL;
 * pglite), BENCH_SOAK_OUT (bench-soak-results.json), SITE_DIST (site/dist).
 * Exit status 1 when a limit is exceeded or the ledger check fails.
 */
import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { QUIET, envList, envNumber, loadAverage, median, root, rssBytes, runLoad, startServer, stopAll, stopProcess, type TServer } from './bench-common.ts';
import { freshDatabase, prepare, transferRequests, verify, type TTransferPlan } from './bench-money.ts';

const MAX_RSS_GROWTH = 0.1;
const MAX_FAILURE_RATE = 0.01;

/** One cycle of the mix, per connection; the transfer's request comes from the money bench. */
export function soakRequests(plan: TTransferPlan): object[] {
  const [transfer] = transferRequests(plan);
  const signedIn = (request: Record<string, unknown>) => {
    const user = Math.floor(Math.random() * plan.tokens.length);
    request.headers = { cookie: `remember_token=${plan.tokens[user]}` };
    return request;
  };
  return [
    { method: 'GET', path: '/article/fees', headers: { 'accept-encoding': 'gzip' } },
    { method: 'GET', path: '/', setupRequest: signedIn },
    { method: 'GET', path: '/api/site' },
    { method: 'GET', path: '/api/wallets', setupRequest: signedIn },
    { method: 'GET', path: '/api/transfer/history', setupRequest: signedIn },
    transfer!,
  ];
}

type TSample = { at: number; core: number | null; bff: number | null };
type TGrowth = { first: number; last: number; growth: number; ok: boolean };

/** Median of the samples in the first and the last window after the warm-up. */
function growthOf(samples: TSample[], pick: (s: TSample) => number | null, from: number, to: number, window: number): TGrowth | null {
  const values = (lo: number, hi: number) =>
    samples
      .filter((s) => s.at >= lo && s.at <= hi)
      .map(pick)
      .filter((v): v is number => v !== null);
  const first = values(from, from + window);
  const last = values(to - window, to);
  if (!first.length || !last.length) return null;
  const [a, b] = [median(first), median(last)];
  return { first: a, last: b, growth: b / a - 1, ok: b / a - 1 < MAX_RSS_GROWTH };
}

const mb = (bytes: number) => (bytes / 1024 / 1024).toFixed(1);

if (import.meta.main) {
  const duration = envNumber('BENCH_SOAK_DURATION', 600, { min: 10 });
  // The BFF's resident memory fills up over its first couple of thousand page renders (V8 and
  // malloc arenas grow, its live heap stays ~40 MB) and then holds: that is not growth.
  const warmup = Math.min(envNumber('BENCH_SOAK_WARMUP', Math.floor(duration / 5)), Math.floor(duration / 2));
  const rate = envNumber('BENCH_SOAK_RATE', 100, { min: 1 });
  const connections = envNumber('BENCH_SOAK_CONNECTIONS', 10, { min: 1 });
  const sampleMs = envNumber('BENCH_SOAK_SAMPLE', 5, { min: 1 }) * 1000;
  const [engine] = envList('BENCH_SOAK_ENGINE', ['postgres', 'pglite'] as const);
  const siteDist = process.env.SITE_DIST ?? join(root, 'site', 'dist');
  const out = process.env.BENCH_SOAK_OUT ?? join(root, 'bench-soak-results.json');
  const log = (line: string) => console.error(`[bench-soak] ${line}`);
  if (!existsSync(join(siteDist, 'server', 'entry.mjs'))) {
    console.error(`[bench-soak] no site build at ${siteDist}: run "pnpm build" first`);
    process.exit(1);
  }

  const loadBefore = loadAverage();
  const database = await freshDatabase(engine!);
  let core: TServer | null = null;
  let bff: TServer | null = null;
  let failed = true;
  try {
    const prepared = await prepare(database);
    // Every process on every CPU, as on a two-CPU server (the soak measures memory, not speed).
    core = await startServer({ name: 'core', script: 'core/src/server.ts', env: { ...QUIET, ...database.env }, health: '/api/health', pin: false });
    bff = await startServer({
      name: 'bff',
      script: 'bff/src/server.ts',
      env: { ...QUIET, UPSTREAM_URL: core.url, SITE_DIST: siteDist },
      health: '/local/healthcheck',
      pin: false,
    });
    log(`${engine} core and BFF up; ${duration} s at ${rate} req/s over ${connections} connections (warm-up ${warmup} s)`);

    const runId = `soak-${randomBytes(4).toString('hex')}`;
    const plan: TTransferPlan = { viaBff: true, tokens: prepared.tokens, accountIds: prepared.accountIds, hot: false, runId };
    const samples: TSample[] = [];
    const started = Date.now();
    const sample = () => samples.push({ at: (Date.now() - started) / 1000, core: rssBytes(core?.pid), bff: rssBytes(bff?.pid) });
    sample();
    const sampler = setInterval(() => {
      sample();
      const last = samples.at(-1)!;
      if (samples.length % Math.max(1, Math.round(60_000 / sampleMs)) === 0)
        log(`${Math.round(last.at)} s: core ${mb(last.core ?? 0)} MB, BFF ${mb(last.bff ?? 0)} MB RSS`);
    }, sampleMs);
    const result = await runLoad(
      { url: bff.url, connections, duration, warmup: 0, overallRate: rate, requestsFrom: { module: 'scripts/bench-soak.ts', name: 'soakRequests', plan } },
      [],
      false,
    );
    clearInterval(sampler);
    sample();
    const end = samples.at(-1)!.at;
    const window = Math.max((3 * sampleMs) / 1000, (end - warmup) / 4);
    const growth = {
      core: growthOf(samples, (s) => s.core, warmup, end, window),
      bff: growthOf(samples, (s) => s.bff, warmup, end, window),
    };

    await stopProcess(bff);
    await stopProcess(core);
    bff = core = null;
    const { violations } = await verify(database, prepared.sums, runId);

    const attempts = result.requests + result.errors;
    const failures = result.non2xx + result.errors;
    const failureRate = attempts ? failures / attempts : 1;
    const rssOk = growth.core?.ok === true && growth.bff?.ok === true;
    const ok = rssOk && failureRate < MAX_FAILURE_RATE && violations.length === 0;
    const loadAfter = loadAverage();
    const row = (name: string, g: TGrowth | null) =>
      g
        ? `| RSS of the ${name} | ${mb(g.first)} → ${mb(g.last)} MB: ${(g.growth * 100).toFixed(1)}% | < ${MAX_RSS_GROWTH * 100}% | ${g.ok ? 'met' : 'EXCEEDED'} |`
        : `| RSS of the ${name} | n/a | < ${MAX_RSS_GROWTH * 100}% | NOT MEASURED |`;
    const codes = Object.entries(result.statusCodes)
      .map(([code, n]) => `${code}: ${n}`)
      .join(', ');
    console.log(
      [
        '',
        `Obmen soak: ${duration} s of mixed load through the BFF at ${rate} req/s (${connections} connections), core on ${engine === 'postgres' ? 'PostgreSQL' : 'PGlite'}, ` +
          `Node ${process.version}; RSS every ${sampleMs / 1000} s, compared after a ${warmup} s warm-up over ${Math.round(window)} s windows. Load average ${loadBefore} before, ${loadAfter} after.`,
        '',
        '| Soak | figure | limit | verdict |',
        '|---|---:|---:|---|',
        row('core', growth.core),
        row('BFF', growth.bff),
        `| Failed requests | ${failures} of ${attempts} (${(failureRate * 100).toFixed(3)}%; ${codes}) | < ${MAX_FAILURE_RATE * 100}% | ${failureRate < MAX_FAILURE_RATE ? 'met' : 'EXCEEDED'} |`,
        `| Throughput, latency | ${result.rps.toFixed(0)} req/s, p50 ${result.latencyMs.p50} ms, p99 ${result.latencyMs.p99} ms | | |`,
        `| Ledger afterwards | ${violations.length ? `VIOLATED: ${violations.join('; ')}` : 'invariants hold, sums unchanged'} | | ${violations.length ? 'FAILED' : 'met'} |`,
        '',
      ].join('\n'),
    );
    writeFileSync(
      out,
      `${JSON.stringify({ date: new Date().toISOString(), node: process.version, engine, duration, warmup, rate, connections, loadAverage: { before: loadBefore, after: loadAfter }, growth, failures, attempts, failureRate, statusCodes: result.statusCodes, latencyMs: result.latencyMs, violations, samples, ok }, null, 2)}\n`,
    );
    log(`figures written to ${out}`);
    failed = !ok;
  } finally {
    await stopProcess(bff);
    await stopProcess(core);
    await stopAll();
    await database.drop();
  }
  process.exit(failed ? 1 : 0);
}
