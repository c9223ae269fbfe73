import { randomInt } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ENGINES, openTestDb } from '../../helpers.ts';
import type { TFixtureUser } from '../../fixtures.ts';
import { checkLedger, type TLedgerReport } from '../../../src/domains/ledger/invariants.ts';
import { currencySums, describeRun, expectWorkloadKeptEveryRule, runLedgerWorkload, seedLedgerUsers } from './ledger-workload.ts';

/*
 * Issue 5 point 11: random transfers and exchanges from 16 concurrent workers, with overdraw
 * attempts and repeated idempotency keys, then the ledger's rules checked from the stored data.
 * On PostgreSQL this proves the locking; on PGlite (one connection) the rules only.
 *   INVARIANTS_SEED=<n>  replays a run (the seed is printed)
 *   INVARIANTS_OPS=<n>   operations on PostgreSQL (default 10 000; PGlite runs a tenth)
 */
const SEED = Number(process.env.INVARIANTS_SEED ?? randomInt(1, 2 ** 31));
const PG_OPS = Number(process.env.INVARIANTS_OPS ?? 10_000);
const USERS = 50;
const WORKERS = 16;

console.log(`invariants seed: ${SEED} (replay with INVARIANTS_SEED=${SEED})`);

describe.each(ENGINES)('ledger invariants under concurrency on %s', (engine) => {
  let ctx: Awaited<ReturnType<typeof openTestDb>> & { users: TFixtureUser[] };
  const ops = engine === 'postgres' ? PG_OPS : Math.ceil(PG_OPS / 10);
  beforeAll(async () => {
    const opened = await openTestDb(engine, WORKERS);
    ctx = { ...opened, users: await seedLedgerUsers(opened.db, USERS) };
  }, 120_000);
  afterAll(() => ctx.drop());

  it(`${ops} random transfers and exchanges from ${WORKERS} workers keep every rule (seed ${SEED})`, async () => {
    const before = await currencySums(ctx.db);
    const prefix = `inv-${SEED}`;
    const result = await runLedgerWorkload(ctx.db, ctx.users, { ops, workers: WORKERS, seed: SEED, prefix });
    const report = await checkLedger(ctx.db);
    console.log(
      `${describeRun(`invariants ${engine}`, SEED, ops, result)}; ${report.counts.transactions} ledger transactions, ${report.counts.postings} postings`,
    );
    await expectWorkloadKeptEveryRule(ctx.db, result, before, prefix, ops);
  }, 300_000);

  it('the same checker catches a deliberately unlocked transfer (the suite can fail)', async () => {
    // Read the balance without a lock, check, then write an absolute balance: lost updates.
    const unlockedTransfer = async (from: TFixtureUser, to: TFixtureUser, amount: bigint) => {
      const [a] = await ctx.db.query<{ id: string; balance: string }>(
        `SELECT id::text AS id, balance::text AS balance FROM ledger_accounts WHERE user_id = $1 AND currency = 'USDT'`,
        [from.id],
      );
      const [b] = await ctx.db.query<{ id: string; balance: string }>(
        `SELECT id::text AS id, balance::text AS balance FROM ledger_accounts WHERE id = ledger_user_account($1, 'USDT')`,
        [to.id],
      );
      if (BigInt(a!.balance) < amount) return;
      await new Promise((resolve) => setTimeout(resolve, Math.random() * 3));
      await ctx.db.query(
        `WITH t AS (INSERT INTO ledger_transactions (kind, memo) VALUES ('transfer', 'unlocked variant') RETURNING id)
         INSERT INTO postings (transaction_id, account_id, currency, amount)
         SELECT t.id, x.account_id, 'USDT', x.amount FROM t, (VALUES ($1::bigint, -$3::numeric), ($2::bigint, $3::numeric)) AS x(account_id, amount)`,
        [a!.id, b!.id, amount.toString()],
      );
      await ctx.db.query('UPDATE ledger_accounts SET balance = $2 WHERE id = $1', [a!.id, (BigInt(a!.balance) - amount).toString()]);
      await ctx.db.query('UPDATE ledger_accounts SET balance = $2 WHERE id = $1', [b!.id, (BigInt(b!.balance) + amount).toString()]);
    };
    const few = ctx.users.slice(0, 4);
    let report: TLedgerReport = await checkLedger(ctx.db);
    expect(report.ok).toBe(true);
    for (let round = 0; round < 20 && report.ok; round++) {
      await Promise.all(
        Array.from({ length: WORKERS }, async (_, i) => {
          for (let n = 0; n < 10; n++) await unlockedTransfer(few[(i + n) % 4]!, few[(i + n + 1) % 4]!, 1_000_000n);
        }),
      );
      report = await checkLedger(ctx.db);
    }
    expect(report.ok).toBe(false);
    expect(report.violations.map((v) => v.rule)).toContain('stored balance equals the sum of postings');
  }, 120_000);
});
