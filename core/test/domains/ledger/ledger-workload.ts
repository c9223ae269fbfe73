import { isDeepStrictEqual } from 'node:util';
import { expect } from 'vitest';
import { formatAmount } from '@obmen/shared';
import type { Db } from '../../../src/db/index.ts';
import { migrate } from '../../../src/db/migrate.ts';
import { seedDemoData } from '../../../src/seed/demo.ts';
import { AppError } from '../../../src/errors.ts';
import { createFixtureUser, fund, type TFixtureUser } from '../../fixtures.ts';
import { makeTransfer } from '../../../src/domains/transfer/service.ts';
import { createQuote, executeExchange, type TExchangeDeps } from '../../../src/domains/exchange/service.ts';
import { TableRateSource } from '../../../src/domains/rates/source.ts';
import { checkLedger } from '../../../src/domains/ledger/invariants.ts';

/*
 * The random money workload of the invariants suite, shared by the tests that
 * run it under faults: transfers and exchanges from concurrent workers, with
 * overdraw attempts and repeated idempotency keys, each outcome recorded for the checks after.
 */
export const CURRENCIES = ['USDT', 'BTC', 'RUB'] as const;
export type TCode = (typeof CURRENCIES)[number];
export const PRECISION: Record<TCode, number> = { USDT: 6, BTC: 8, RUB: 2 };
/** What each user starts with, minor units. */
export const INITIAL: Record<TCode, bigint> = { USDT: 1_000_000_000n, BTC: 2_000_000n, RUB: 10_000_000n };
/**
 * Refusals a client may see; anything else (a deadlock, "busy", a crash) fails the run. A quote
 * expires when a repeat of a refused exchange comes after its 30 seconds.
 */
export const EXPECTED_REFUSALS = new Set(['insufficient_funds', 'amount_too_small', 'amount_too_large', 'quote_expired']);

/** mulberry32: a small seeded PRNG, one stream per worker. */
export function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** A migrated, seeded database with `count` funded users. */
export async function seedLedgerUsers(db: Db, count: number): Promise<TFixtureUser[]> {
  await migrate(db);
  await seedDemoData(db, { demoAccount: false, sandboxCatalogue: true });
  const users: TFixtureUser[] = [];
  for (let i = 0; i < count; i++) {
    const user = await createFixtureUser(db);
    for (const code of CURRENCIES) await fund(db, user.id, code, INITIAL[code]);
    users.push(user);
  }
  return users;
}

export async function currencySums(db: Db): Promise<Record<string, string>> {
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

export type TWorkloadResult = {
  seconds: number;
  transfers: number;
  exchanges: number;
  overdraws: number;
  repeats: number;
  refused: number;
  /** Errors that must never reach a client (deadlocks, busy, crashes). */
  unexpected: string[];
  /** key → how many times it was applied (a non-replayed success), and its first answer. */
  applied: Map<string, { count: number; body: unknown }>;
  replayMismatch: string[];
  quoteMismatch: string[];
};

/** Runs `ops` random operations from `workers` workers through the services; keys are `${prefix}-${worker}-${n}`. */
export async function runLedgerWorkload(
  db: Db,
  users: TFixtureUser[],
  options: { ops: number; workers: number; seed: number; prefix: string },
): Promise<TWorkloadResult> {
  const { ops, workers, seed, prefix } = options;
  const deps: TExchangeDeps = { db, rates: new TableRateSource(db) };
  const result: TWorkloadResult = {
    seconds: 0,
    transfers: 0,
    exchanges: 0,
    overdraws: 0,
    repeats: 0,
    refused: 0,
    unexpected: [],
    applied: new Map(),
    replayMismatch: [],
    quoteMismatch: [],
  };

  const record = (key: string, answer: TOutcome) => {
    if (!answer.ok) {
      if (EXPECTED_REFUSALS.has(answer.code)) result.refused++;
      else result.unexpected.push(`${key}: ${answer.code}`);
      return;
    }
    const seen = result.applied.get(key);
    if (!answer.replayed) {
      if (seen) seen.count++;
      else result.applied.set(key, { count: 1, body: answer.body });
    } else if (seen && !isDeepStrictEqual(seen.body, answer.body)) {
      result.replayMismatch.push(key);
    }
  };

  const worker = async (index: number) => {
    const random = prng(seed + index * 7919);
    const pick = <T>(list: readonly T[]) => list[Math.floor(random() * list.length)]!;
    const done: Array<() => Promise<TOutcome>> = [];
    const share = Math.ceil(ops / workers);
    for (let n = 0; n < share && index * share + n < ops; n++) {
      // 10 %: repeat an earlier request with its key: half again later, half twice at once.
      if (done.length && random() < 0.1) {
        result.repeats++;
        const again = pick(done);
        if (random() < 0.5) await again();
        else await Promise.all([again(), again()]);
        continue;
      }
      const overdraw = random() < 0.2;
      if (overdraw) result.overdraws++;
      const user = pick(users);
      const key = `${prefix}-${index}-${n}`;
      if (random() < 0.7) {
        result.transfers++;
        let recipient = pick(users);
        while (recipient === user) recipient = pick(users);
        const code = pick(CURRENCIES);
        const amount = overdraw ? INITIAL[code] * 20n : BigInt(Math.floor(1 + random() * 20)) * (INITIAL[code] / 1000n);
        const body = { account_id: recipient.accountId, currency: code, amount: formatAmount(amount, PRECISION[code]) };
        const run = async () => {
          const answer = await outcome(async () => {
            const r = await makeTransfer(db, user.id, key, body);
            return { id: r.transfer.id, replayed: r.replayed, body: r.transfer };
          });
          record(key, answer);
          return answer;
        };
        // 5 %: the first attempt sent twice at once (a client's double submit): both in one batch
        // as a rule, where the second must replay the first.
        if (random() < 0.05) {
          result.repeats++;
          await Promise.all([run(), run()]);
        } else await run();
        done.push(run);
      } else {
        result.exchanges++;
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
          const answer = await outcome(async () => {
            const r = await executeExchange(deps, user.id, key, { src, dst }, quote.token!);
            if (r.exchange.amount_receive !== BigInt(quote.amount_receive.replace('.', '')).toString()) {
              result.quoteMismatch.push(`${key}: quoted ${quote.amount_receive}, credited ${r.exchange.amount_receive}`);
            }
            return { id: r.exchange.id, replayed: r.replayed, body: r.exchange };
          });
          record(key, answer);
          return answer;
        };
        await run();
        done.push(run);
      }
    }
  };

  const started = Date.now();
  await Promise.all(Array.from({ length: workers }, (_, index) => worker(index)));
  result.seconds = (Date.now() - started) / 1000;
  return result;
}

/**
 * Transfers under `prefix` committed together with others (ledger/batch.ts): a batch is one
 * transaction, and created_at is its start time.
 */
export async function batchedTransfers(db: Db, prefix: string): Promise<number> {
  const [row] = await db.query<{ n: number }>(
    'SELECT coalesce(sum(n), 0)::int AS n FROM (SELECT count(*) AS n FROM transfers WHERE idempotency_key LIKE $1 GROUP BY created_at HAVING count(*) > 1) AS b',
    [`${prefix}-%`],
  );
  return row!.n;
}

/** How many transfers and exchanges the database holds under keys starting with `prefix`. */
export async function storedOperations(db: Db, prefix: string): Promise<number> {
  const [stored] = await db.query<{ n: number }>(
    `SELECT ((SELECT count(*) FROM transfers WHERE idempotency_key LIKE $1) + (SELECT count(*) FROM exchanges WHERE idempotency_key LIKE $1))::int AS n`,
    [`${prefix}-%`],
  );
  return stored!.n;
}

export function describeRun(label: string, seed: number, ops: number, r: TWorkloadResult): string {
  return (
    `[${label}] seed ${seed}: ${ops} operations (${r.transfers} transfers, ${r.exchanges} exchanges, ${r.overdraws} overdraw attempts, ` +
    `${r.repeats} repeated keys) in ${r.seconds.toFixed(1)} s; ${r.applied.size} applied, ${r.refused} refused`
  );
}

/** Every check of the invariants suite on a finished run: ledger rules, sums, keys applied once, replays equal. */
export async function expectWorkloadKeptEveryRule(db: Db, r: TWorkloadResult, before: Record<string, string>, prefix: string, ops: number): Promise<void> {
  const report = await checkLedger(db);
  const twice = [...r.applied.entries()].filter(([, v]) => v.count > 1).map(([k]) => k);
  expect(r.unexpected, 'errors that must never reach a client (deadlocks, busy, crashes)').toEqual([]);
  expect(report.violations, 'ledger rules').toEqual([]);
  expect(await currencySums(db), 'per-currency sums over all accounts').toEqual(before);
  expect(Object.values(before).every((sum) => sum === '0')).toBe(true);
  expect(twice, 'keys applied more than once').toEqual([]);
  expect(r.replayMismatch, 'replays that differ from the first answer').toEqual([]);
  expect(r.quoteMismatch, 'exchanges that credited other than the quote').toEqual([]);
  expect(await storedOperations(db, prefix), 'stored operations = applied keys').toBe(r.applied.size);
  const [negative] = await db.query<{ n: number }>(`SELECT count(*)::int AS n FROM ledger_accounts WHERE kind = 'user' AND balance < 0`);
  expect(negative!.n).toBe(0);
  expect(r.refused).toBeGreaterThan(0);
  expect(r.applied.size).toBeGreaterThan(ops / 3);
}
