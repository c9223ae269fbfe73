import { randomInt } from 'node:crypto';
import { isDeepStrictEqual } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { formatAmount } from '@obmen/shared';
import { ENGINES, openTestDb, type TEngine } from '../../helpers.ts';
import type { Db } from '../../../src/db/index.ts';
import { migrate } from '../../../src/db/migrate.ts';
import { seedDemoData } from '../../../src/seed/demo.ts';
import { AppError } from '../../../src/errors.ts';
import { createFixtureUser, fund, type TFixtureUser } from '../../fixtures.ts';
import { checkLedger, type TLedgerReport } from '../../../src/domains/ledger/invariants.ts';
import { makeTransfer } from '../../../src/domains/transfer/service.ts';
import { createQuote, executeExchange, type TExchangeDeps } from '../../../src/domains/exchange/service.ts';
import { TableRateSource } from '../../../src/domains/rates/source.ts';

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
const CURRENCIES = ['USDT', 'BTC', 'RUB'] as const;
type TCode = (typeof CURRENCIES)[number];
const PRECISION: Record<TCode, number> = { USDT: 6, BTC: 8, RUB: 2 };
/** What each user starts with, minor units. */
const INITIAL: Record<TCode, bigint> = { USDT: 1_000_000_000n, BTC: 2_000_000n, RUB: 10_000_000n };
/**
 * Refusals a client may see; anything else (a deadlock, "busy", a crash) fails the run. A quote
 * expires when a repeat of a refused exchange comes after its 30 seconds.
 */
const EXPECTED_REFUSALS = new Set(['insufficient_funds', 'amount_too_small', 'amount_too_large', 'quote_expired']);

console.log(`invariants seed: ${SEED} (replay with INVARIANTS_SEED=${SEED})`);

/** mulberry32: a small seeded PRNG, one stream per worker. */
function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

async function setup(engine: TEngine) {
  const opened = await openTestDb(engine, WORKERS);
  await migrate(opened.db);
  await seedDemoData(opened.db, { demoAccount: false });
  const users: TFixtureUser[] = [];
  for (let i = 0; i < USERS; i++) {
    const user = await createFixtureUser(opened.db);
    for (const code of CURRENCIES) await fund(opened.db, user.id, code, INITIAL[code]);
    users.push(user);
  }
  return { ...opened, users };
}

async function currencySums(db: Db): Promise<Record<string, string>> {
  const rows = await db.query<{ currency: string; total: string }>('SELECT currency, sum(balance)::text AS total FROM ledger_accounts GROUP BY currency');
  return Object.fromEntries(rows.map((row) => [row.currency, row.total]));
}

type TOutcome = { ok: true; id: string; replayed: boolean; body: unknown } | { ok: false; code: string };

async function outcome(work: () => Promise<{ id: string; replayed: boolean; body: unknown }>): Promise<TOutcome> {
  try {
    return { ok: true, ...(await work()) };
  } catch (err) {
    return { ok: false, code: err instanceof AppError ? err.code : `${(err as { code?: string }).code ?? 'error'}: ${(err as Error).message}` };
  }
}

describe.each(ENGINES)('ledger invariants under concurrency on %s', (engine) => {
  let ctx: Awaited<ReturnType<typeof setup>>;
  const ops = engine === 'postgres' ? PG_OPS : Math.ceil(PG_OPS / 10);
  beforeAll(async () => {
    ctx = await setup(engine);
  }, 120_000);
  afterAll(() => ctx.drop());

  it(`${ops} random transfers and exchanges from ${WORKERS} workers keep every rule (seed ${SEED})`, async () => {
    const deps: TExchangeDeps = { db: ctx.db, rates: new TableRateSource(ctx.db) };
    const before = await currencySums(ctx.db);
    const unexpected: string[] = [];
    /** key → how many times it was applied (a non-replayed success), and its first answer. */
    const applied = new Map<string, { count: number; body: unknown }>();
    const replayMismatch: string[] = [];
    const quoteMismatch: string[] = [];
    let overdraws = 0;
    let repeats = 0;
    let transfers = 0;
    let exchanges = 0;
    let refused = 0;

    const record = (key: string, result: TOutcome) => {
      if (!result.ok) {
        if (EXPECTED_REFUSALS.has(result.code)) refused++;
        else unexpected.push(`${key}: ${result.code}`);
        return;
      }
      const seen = applied.get(key);
      if (!result.replayed) {
        if (seen) seen.count++;
        else applied.set(key, { count: 1, body: result.body });
      } else if (seen && !isDeepStrictEqual(seen.body, result.body)) {
        replayMismatch.push(key);
      }
    };

    const worker = async (index: number) => {
      const random = prng(SEED + index * 7919);
      const pick = <T>(list: readonly T[]) => list[Math.floor(random() * list.length)]!;
      const done: Array<() => Promise<TOutcome>> = [];
      const share = Math.ceil(ops / WORKERS);
      for (let n = 0; n < share && index * share + n < ops; n++) {
        // 10 %: repeat an earlier request with its key: half again later, half twice at once.
        if (done.length && random() < 0.1) {
          repeats++;
          const again = pick(done);
          if (random() < 0.5) await again();
          else await Promise.all([again(), again()]);
          continue;
        }
        const overdraw = random() < 0.2;
        if (overdraw) overdraws++;
        const user = pick(ctx.users);
        const key = `inv-${SEED}-${index}-${n}`;
        if (random() < 0.7) {
          transfers++;
          let recipient = pick(ctx.users);
          while (recipient === user) recipient = pick(ctx.users);
          const code = pick(CURRENCIES);
          const amount = overdraw ? INITIAL[code] * 20n : BigInt(Math.floor(1 + random() * 20)) * (INITIAL[code] / 1000n);
          const body = { account_id: recipient.accountId, currency: code, amount: formatAmount(amount, PRECISION[code]) };
          const run = async () => {
            const result = await outcome(async () => {
              const r = await makeTransfer(ctx.db, user.id, key, body);
              return { id: r.transfer.id, replayed: r.replayed, body: r.transfer };
            });
            record(key, result);
            return result;
          };
          await run();
          done.push(run);
        } else {
          exchanges++;
          const src = pick(CURRENCIES);
          let dst = pick(CURRENCIES);
          while (dst === src) dst = pick(CURRENCIES);
          const amount = overdraw ? INITIAL[src] * 20n : BigInt(Math.floor(5 + random() * 20)) * (INITIAL[src] / 1000n);
          let quote;
          try {
            quote = await createQuote(deps, user.id, { src, dst, amount: formatAmount(amount, PRECISION[src]) });
          } catch (err) {
            record(key, { ok: false, code: err instanceof AppError ? err.code : String(err) });
            continue;
          }
          const run = async () => {
            const result = await outcome(async () => {
              const r = await executeExchange(deps, user.id, key, { src, dst }, quote.token!);
              if (r.exchange.amount_receive !== (BigInt(quote.amount_receive.replace('.', '')) ).toString()) {
                quoteMismatch.push(`${key}: quoted ${quote.amount_receive}, credited ${r.exchange.amount_receive}`);
              }
              return { id: r.exchange.id, replayed: r.replayed, body: r.exchange };
            });
            record(key, result);
            return result;
          };
          await run();
          done.push(run);
        }
      }
    };

    const started = Date.now();
    await Promise.all(Array.from({ length: WORKERS }, (_, index) => worker(index)));
    const seconds = (Date.now() - started) / 1000;

    const report = await checkLedger(ctx.db);
    const [stored] = await ctx.db.query<{ transfers: number; exchanges: number }>(
      `SELECT (SELECT count(*) FROM transfers WHERE idempotency_key LIKE $1)::int AS transfers,
              (SELECT count(*) FROM exchanges WHERE idempotency_key LIKE $1)::int AS exchanges`,
      [`inv-${SEED}-%`],
    );
    const twice = [...applied.entries()].filter(([, v]) => v.count > 1).map(([k]) => k);
    console.log(
      `[invariants ${engine}] seed ${SEED}: ${ops} operations (${transfers} transfers, ${exchanges} exchanges, ${overdraws} overdraw attempts, ` +
        `${repeats} repeated keys) in ${seconds.toFixed(1)} s; ${applied.size} applied, ${refused} refused; ` +
        `${report.counts.transactions} ledger transactions, ${report.counts.postings} postings`,
    );

    expect(unexpected, 'errors that must never reach a client (deadlocks, busy, crashes)').toEqual([]);
    expect(report.violations, 'ledger rules').toEqual([]);
    expect(await currencySums(ctx.db), 'per-currency sums over all accounts').toEqual(before);
    expect(Object.values(before).every((sum) => sum === '0')).toBe(true);
    expect(twice, 'keys applied more than once').toEqual([]);
    expect(replayMismatch, 'replays that differ from the first answer').toEqual([]);
    expect(quoteMismatch, 'exchanges that credited other than the quote').toEqual([]);
    expect(stored!.transfers + stored!.exchanges, 'stored operations = applied keys').toBe(applied.size);
    const [negative] = await ctx.db.query<{ n: number }>(`SELECT count(*)::int AS n FROM ledger_accounts WHERE kind = 'user' AND balance < 0`);
    expect(negative!.n).toBe(0);
    expect(refused).toBeGreaterThan(0);
    expect(applied.size).toBeGreaterThan(ops / 3);
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
