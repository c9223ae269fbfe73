import { randomInt } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openTestDb } from './helpers.ts';
import { openDb, type Db } from '../src/db/index.ts';
import type { TFixtureUser } from './fixtures.ts';
import { batchedTransfers, currencySums, seedLedgerUsers } from './domains/ledger/ledger-workload.ts';
import { expectTransfersExactlyOnce, newHttpRun, runHttpTransfers, settleUnknown } from './domains/ledger/http-transfers.ts';
import { startCore, type TCoreProcess } from './core-process.ts';
import { createDatabase, startThrowawayPostgres, type TThrowawayPostgres } from './pg-throwaway.ts';

/*
 * The core process under faults, with transfers over HTTP from many clients:
 *  - `kill -9` of the core twice mid-run, a new core started each time: every acknowledged key
 *    is applied exactly once, every unknown one is settled by retrying its key;
 *  - the database restarted mid-run (a throw-away server, never the shared one): 503 JSON while
 *    it is down, the core healthy within 10 s of the database being back, the ledger intact.
 *   FAULTS_SEED=<n>  replays a run (the seed is printed);  FAULTS_HTTP_OPS=<n>  transfers per run
 */
const SEED = Number(process.env.FAULTS_SEED ?? randomInt(1, 2 ** 31));
const OPS = Number(process.env.FAULTS_HTTP_OPS ?? 600);
const USERS = 30;
const WORKERS = 12;
const silent = { error: () => {}, warn: () => {}, info: () => {} };
console.log(`core faults seed: ${SEED} (replay with FAULTS_SEED=${SEED})`);

/** Polls `url` until it answers 200; the milliseconds that took (bounded by `limitMs`). */
async function healthyAfter(url: string, limitMs: number): Promise<number> {
  const started = Date.now();
  while (Date.now() - started < limitMs) {
    const res = await fetch(url, { signal: AbortSignal.timeout(2_000) }).catch(() => null);
    if (res?.status === 200) return Date.now() - started;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`${url} not healthy within ${limitMs} ms`);
}

describe.skipIf(!process.env.TEST_DATABASE_URL)('the core under faults (PostgreSQL)', () => {
  describe('kill -9 of the core during the workload', () => {
    let ctx: Awaited<ReturnType<typeof openTestDb>> & { users: TFixtureUser[] };
    let core: TCoreProcess | undefined;
    beforeAll(async () => {
      const opened = await openTestDb('postgres', 4);
      ctx = { ...opened, users: await seedLedgerUsers(opened.db, USERS) };
    }, 120_000);
    afterAll(async () => {
      await core?.stop();
      await ctx.drop();
    });

    it(`${OPS} transfers, the core killed twice: each acknowledged key applied exactly once (seed ${SEED})`, async () => {
      const before = await currencySums(ctx.db);
      const prefix = `kill-${SEED}`;
      const env = { DATABASE_URL: ctx.url! };
      core = await startCore(env);
      const run = newHttpRun();
      const kills = [Math.floor(OPS / 3), Math.floor((2 * OPS) / 3)];
      let restarting: Promise<void> | null = null;
      const started = Date.now();
      await runHttpTransfers(run, () => core!.url, ctx.users, {
        ops: OPS,
        workers: WORKERS,
        seed: SEED,
        prefix,
        onOperation: async (done) => {
          if (kills.includes(done)) {
            restarting = (async () => {
              await core!.kill();
              core = await startCore(env);
            })();
          }
          // Requests to the dead core fail at once; wait for the new one rather than spin through the run.
          if (restarting) await restarting;
        },
      });
      const retried = await settleUnknown(run, core.url);
      console.log(
        `[kill -9] seed ${SEED}: ${OPS} transfers, 2 kills, in ${((Date.now() - started) / 1000).toFixed(1)} s; answers ${JSON.stringify(run.answers)}; ` +
          `${retried} unknown outcomes settled by retrying the key`,
      );
      expect(run.answers.network ?? 0, 'requests cut by the kills').toBeGreaterThan(0);
      await expectTransfersExactlyOnce(ctx.db, run, prefix, before);
      // The kills met transfers gathered in batches: a batch is one transaction, all or nothing.
      expect(await batchedTransfers(ctx.db, prefix), 'transfers committed in batches').toBeGreaterThan(0);
    }, 180_000);
  });

  describe('a database restart during the workload', () => {
    let server: TThrowawayPostgres | null;
    let db: Db;
    let users: TFixtureUser[];
    let core: TCoreProcess | undefined;
    let url: string;
    beforeAll(async () => {
      server = await startThrowawayPostgres();
      if (!server) return;
      url = await createDatabase(server.url, 'restart');
      db = await openDb({ DATABASE_URL: url, DATA_DIR: '', DB_POOL_SIZE: 2 }, silent);
      users = await seedLedgerUsers(db, USERS);
    }, 120_000);
    afterAll(async () => {
      await core?.stop();
      await db?.close();
      server?.dispose();
    });

    it(`${OPS} transfers, the database down mid-run: 503 meanwhile, healthy within 10 s, ledger intact (seed ${SEED})`, async (test) => {
      if (!server) return test.skip('no PostgreSQL server binaries to run a throw-away server');
      const before = await currencySums(db);
      const prefix = `restart-${SEED}`;
      core = await startCore({ DATABASE_URL: url, DB_CONNECT_TIMEOUT_MS: '2000' });
      const run = newHttpRun();
      let outage: Promise<number> | null = null;
      const started = Date.now();
      await runHttpTransfers(run, () => core!.url, users, {
        ops: OPS,
        workers: WORKERS,
        seed: SEED,
        prefix,
        onOperation: (done) => {
          if (done !== Math.floor(OPS / 3)) return;
          outage = (async () => {
            server!.stop();
            // Down long enough for many requests to meet it; the workers keep sending meanwhile.
            await new Promise((resolve) => setTimeout(resolve, 1_500));
            server!.start();
            return healthyAfter(`${core!.url}/api/health`, 10_000);
          })();
        },
      });
      const recoveryMs = await outage!;
      const retried = await settleUnknown(run, core.url);
      console.log(
        `[database restart] seed ${SEED}: ${OPS} transfers in ${((Date.now() - started) / 1000).toFixed(1)} s; answers ${JSON.stringify(run.answers)}; ` +
          `core healthy ${recoveryMs} ms after the database was back; ${retried} unknown outcomes settled by retrying the key`,
      );
      expect(run.answers['503 database_unavailable'] ?? 0, '503 answers during the outage').toBeGreaterThan(0);
      expect(recoveryMs).toBeLessThan(10_000);
      await expectTransfersExactlyOnce(db, run, prefix, before);
      const failures = core.lines.filter((line) => line.level >= 50);
      expect(
        failures.map((line) => line.msg),
        'error lines in the core log',
      ).toEqual([]);
    }, 180_000);
  });
});
