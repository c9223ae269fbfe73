/**
 * `pnpm bench`: every benchmark, one after the other, each printing its own table:
 *   api      scripts/bench.ts          BFF vs core-direct on a small /api call, SSR page
 *   article  scripts/bench-article.ts  cached article page vs nginx, JS weight, Lighthouse
 *   money    scripts/bench-money.ts    transfers/s on PostgreSQL and PGlite, invariants after
 *   upload   scripts/bench-upload.ts   5 MB identity photos through the BFF: MB/s, core RSS peak
 *            while 20 run at once (must stay within 100 MB of idle)
 *   soak     scripts/bench-soak.ts     10 minutes of mixed load through the BFF: RSS growth of
 *                                      core and BFF < 10%, failure rate < 1%, ledger after
 *   fanout   scripts/bench-fanout.ts   2,000 websockets through the BFF /ws vs straight from the core's
 *                                      event stream: messages/s, p99, lost, BFF memory per idle socket
 *   webhooks scripts/bench-webhooks.ts  provider webhooks/s on PostgreSQL, each event delivered 5 times
 *                                      (0 double credits checked after), and the withdrawal request's p99
 * BENCH_SUITES=api,money picks some (BENCH_SUITES=soak BENCH_SOAK_DURATION=120: a short soak). The money bench uses BENCH_DATABASE_URL or
 * TEST_DATABASE_URL for PostgreSQL (default: the local server's `test` database).
 * Exit status 1 when any suite failed.
 */
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';

const SUITES = {
  api: 'bench.ts',
  article: 'bench-article.ts',
  money: 'bench-money.ts',
  upload: 'bench-upload.ts',
  soak: 'bench-soak.ts',
  fanout: 'bench-fanout.ts',
  webhooks: 'bench-webhooks.ts',
} as const;
type TSuite = keyof typeof SUITES;

const wanted = (process.env.BENCH_SUITES?.split(',')
  .map((name) => name.trim())
  .filter(Boolean) ?? Object.keys(SUITES)) as TSuite[];
const unknown = wanted.filter((name) => !(name in SUITES));
if (unknown.length) {
  console.error(`BENCH_SUITES: no suite ${unknown.join(', ')} (have: ${Object.keys(SUITES).join(', ')})`);
  process.exit(2);
}

const env = { ...process.env, TEST_DATABASE_URL: process.env.TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test' };
const failed: string[] = [];
for (const suite of wanted) {
  console.log(`\n## ${suite}\n`);
  const result = spawnSync(process.execPath, [join(import.meta.dirname, SUITES[suite])], { stdio: 'inherit', env });
  if (result.status !== 0) failed.push(suite);
}
if (failed.length) console.error(`[bench] failed: ${failed.join(', ')}`);
process.exit(failed.length ? 1 : 0);
