import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { formatAmount } from '@obmen/shared';
import { ENGINES, openTestDb } from '../../helpers.ts';
import type { Db } from '../../../src/db/index.ts';
import type { TFixtureUser } from '../../fixtures.ts';
import { AppError } from '../../../src/errors.ts';
import { batchedCall } from '../../../src/domains/ledger/batch.ts';
import { checkLedger } from '../../../src/domains/ledger/invariants.ts';
import { makeTransfer } from '../../../src/domains/transfer/service.ts';
import { INITIAL, PRECISION, currencySums, seedLedgerUsers } from './ledger-workload.ts';

/*
 * Transfers made together (ledger/batch.ts, money_transfer_many): calls started in the same
 * turn of the event loop share one statement and one commit, and each still answers as if it
 * had been alone. That they shared a transaction is read from the rows: created_at is the
 * transaction's start time.
 */

const usdt = (minor: bigint) => formatAmount(minor, PRECISION.USDT);
const settled = <T>(work: Promise<T>) =>
  work.then(
    (value) => ({ ok: true as const, value }),
    (error: unknown) => ({ ok: false as const, code: error instanceof AppError ? error.code : String(error) }),
  );

describe.each(ENGINES)('transfers in one batch on %s', (engine) => {
  let ctx: Awaited<ReturnType<typeof openTestDb>> & { users: TFixtureUser[] };
  beforeAll(async () => {
    const opened = await openTestDb(engine, 4);
    ctx = { ...opened, users: await seedLedgerUsers(opened.db, 6) };
  }, 120_000);
  afterAll(() => ctx.drop());

  const send = (from: TFixtureUser, to: TFixtureUser, key: string, amount: bigint) =>
    settled(makeTransfer(ctx.db, from.id, key, { account_id: to.accountId, currency: 'USDT', amount: usdt(amount) }));

  const batchesOf = async (prefix: string) =>
    (await ctx.db.query<{ n: number }>('SELECT count(DISTINCT created_at)::int AS n FROM transfers WHERE idempotency_key LIKE $1', [`${prefix}-%`]))[0]!.n;

  it('a refusal inside a batch leaves its neighbours applied and itself without a trace', async () => {
    const [a, b, c, d] = ctx.users;
    const before = await currencySums(ctx.db);
    const answers = await Promise.all([
      send(a!, b!, 'refusal-1', 1_000_000n),
      send(b!, c!, 'refusal-2', INITIAL.USDT * 2n),
      send(c!, d!, 'refusal-3', 2_000_000n),
      send(d!, a!, 'refusal-4', 3_000_000n),
    ]);
    expect(answers.map((answer) => (answer.ok ? 'applied' : answer.code))).toEqual(['applied', 'insufficient_funds', 'applied', 'applied']);
    expect(await batchesOf('refusal'), 'the three applied transfers committed together').toBe(1);
    const [refusedKey] = await ctx.db.query('SELECT 1 FROM idempotency_keys WHERE user_id = $1 AND key = $2', [b!.id, 'refusal-2']);
    expect(refusedKey, 'the refused key is free again').toBeUndefined();
    // Each answer carries its sender's wallets as its own item left them, the batch's items being
    // taken in the order of their senders: a's 3 from d came after a's transfer, d's 2 from c before d's.
    const usdtOf = (answer: (typeof answers)[number]) => (answer.ok ? answer.value.wallets.find((wallet) => wallet.currency === 'USDT')?.balance : null);
    expect(usdtOf(answers[0]!)).toBe(usdt(INITIAL.USDT - 1_000_000n));
    expect(usdtOf(answers[3]!)).toBe(usdt(INITIAL.USDT + 2_000_000n - 3_000_000n));
    expect(await currencySums(ctx.db)).toEqual(before);
    expect((await checkLedger(ctx.db)).violations).toEqual([]);
  });

  it('a key sent twice in one batch applies once and answers the same twice; the same key with another body is refused', async () => {
    const [a, b, c] = ctx.users;
    const answers = await Promise.all([
      send(a!, b!, 'twice-1', 1_000_000n),
      send(a!, b!, 'twice-1', 1_000_000n),
      send(a!, c!, 'twice-1', 5_000_000n),
      send(c!, b!, 'twice-2', 1_000_000n),
    ]);
    const [original, repeat, reused, other] = answers;
    if (!original!.ok || !repeat!.ok || !other!.ok) throw new Error(`not applied: ${JSON.stringify(answers)}`);
    expect(reused).toEqual({ ok: false, code: 'idempotency_key_reused' });
    expect(repeat.value.transfer).toEqual(original.value.transfer);
    expect([original.value.replayed, repeat.value.replayed].sort()).toEqual([false, true]);
    expect(await batchesOf('twice')).toBe(1);
    const [stored] = await ctx.db.query<{ n: number }>("SELECT count(*)::int AS n FROM transfers WHERE idempotency_key = 'twice-1'");
    expect(stored!.n).toBe(1);
  });

  it("a sender's two transfers in one batch each answer with the balance their own transfer left", async () => {
    const [, , , , e, f] = ctx.users;
    const answers = await Promise.all([send(e!, f!, 'own-1', 1_000_000n), send(e!, f!, 'own-2', 2_000_000n)]);
    expect(await batchesOf('own')).toBe(1);
    const balances = answers.map((answer) => (answer.ok ? answer.value.wallets.find((wallet) => wallet.currency === 'USDT')?.balance : answer.code));
    expect(balances).toEqual([usdt(INITIAL.USDT - 1_000_000n), usdt(INITIAL.USDT - 3_000_000n)]);
  });
});

describe('batchedCall', () => {
  const db = {} as Db;

  it('gathers the calls of one turn into one run, up to its size', async () => {
    const runs: number[][] = [];
    const call = batchedCall<number, number>({
      max: 3,
      slots: 1,
      run: async (_db, items) => {
        runs.push([...items]);
        return items.map((item) => ({ value: item * 10 }));
      },
    });
    expect(await Promise.all([1, 2, 3, 4, 5].map((item) => call(db, item)))).toEqual([10, 20, 30, 40, 50]);
    expect(runs).toEqual([
      [1, 2, 3],
      [4, 5],
    ]);
  });

  it('answers each item its own error, and runs a failed batch again item by item', async () => {
    const runs: number[][] = [];
    const call = batchedCall<number, number>({
      max: 10,
      slots: 2,
      run: async (_db, items) => {
        runs.push([...items]);
        if (items.includes(3)) throw new Error('three breaks any batch');
        return items.map((item) => (item === 2 ? { error: new Error('two is refused') } : { value: item }));
      },
    });
    const answers = await Promise.all([1, 2, 3, 4].map((item) => settled(call(db, item))));
    expect(answers).toEqual([
      { ok: true, value: 1 },
      { ok: false, code: 'Error: two is refused' },
      { ok: false, code: 'Error: three breaks any batch' },
      { ok: true, value: 4 },
    ]);
    expect(runs).toEqual([[1, 2, 3, 4], [1], [2], [3], [4]]);
  });

  it('gives every item of a batch the error any of them would meet alone (an AppError), without running them again', async () => {
    let runs = 0;
    const call = batchedCall<number, number>({
      max: 10,
      slots: 1,
      run: async () => {
        runs++;
        throw new AppError('database_unavailable');
      },
    });
    const answers = await Promise.all([1, 2, 3].map((item) => settled(call(db, item))));
    expect(answers).toEqual([1, 2, 3].map(() => ({ ok: false, code: 'database_unavailable' })));
    expect(runs).toBe(1);
  });
});
