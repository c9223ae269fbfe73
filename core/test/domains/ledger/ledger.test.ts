import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ENGINES, build } from '../../helpers.ts';
import { createFixtureUser, fund, type TFixtureUser } from '../../fixtures.ts';
import { checkLedger } from '../../../src/domains/ledger/invariants.ts';
import { adjustBalance, reverseTransaction } from '../../../src/domains/ledger/service.ts';
import { getWalletEnvelope } from '../../../src/domains/wallets/service.ts';
import { makeTransfer } from '../../../src/domains/transfer/service.ts';
import { seedDemoBalances, DEMO_ACCOUNT } from '../../../src/seed/demo.ts';
import { AppError } from '../../../src/errors.ts';

/** The code of a database error, or of an AppError. */
async function failure(promise: Promise<unknown>): Promise<string> {
  try {
    await promise;
  } catch (err) {
    return err instanceof AppError ? err.code : String((err as { code?: string }).code);
  }
  return 'no error';
}

describe.each(ENGINES)('ledger on %s', (engine) => {
  let ctx: Awaited<ReturnType<typeof build>>;
  let alice: TFixtureUser;
  let bob: TFixtureUser;
  const accountOf = async (user: TFixtureUser, currency: string) =>
    (await ctx.db.query<{ id: string }>('SELECT ledger_user_account($1, $2)::text AS id', [user.id, currency]))[0]!.id;

  beforeAll(async () => {
    ctx = await build(engine);
    alice = await createFixtureUser(ctx.db, { firstName: 'Alice' });
    bob = await createFixtureUser(ctx.db);
    await fund(ctx.db, alice.id, 'USDT', 50_000_000n);
  });
  afterAll(() => ctx.close());

  it('refuses to change or remove what was posted', async () => {
    expect(await failure(ctx.db.query('UPDATE postings SET amount = amount * 2'))).toBe('OB903');
    expect(await failure(ctx.db.query('DELETE FROM postings'))).toBe('OB903');
    expect(await failure(ctx.db.query('TRUNCATE postings CASCADE'))).toBe('OB903');
    expect(await failure(ctx.db.query(`UPDATE ledger_transactions SET memo = 'x'`))).toBe('OB903');
    expect(await failure(ctx.db.query('DELETE FROM ledger_transactions'))).toBe('OB903');
  });

  it('refuses postings that do not sum to zero, and a transaction without two postings', async () => {
    const a = await accountOf(alice, 'USDT');
    const b = await accountOf(bob, 'USDT');
    const unbalanced = ctx.db.transaction(async (tx) => {
      const [t] = await tx.query<{ id: string }>(`INSERT INTO ledger_transactions (kind) VALUES ('adjustment') RETURNING id::text AS id`);
      await tx.query('INSERT INTO postings (transaction_id, account_id, currency, amount) VALUES ($1, $2, $4, -5), ($1, $3, $4, 4)', [t!.id, a, b, 'USDT']);
    });
    expect(await failure(unbalanced)).toBe('OB901');
    const lonely = ctx.db.transaction(async (tx) => {
      await tx.query(`INSERT INTO ledger_transactions (kind) VALUES ('adjustment')`);
    });
    expect(await failure(lonely)).toBe('OB901');
    const single = ctx.db.query(`SELECT ledger_post('adjustment', ARRAY[$1::bigint], ARRAY[5::numeric])`, [a]);
    expect(await failure(single)).toBe('OB902');
    const skew = ctx.db.query(`SELECT ledger_post('adjustment', ARRAY[$1::bigint, $2::bigint], ARRAY[-5, 4]::numeric[])`, [a, b]);
    expect(await failure(skew)).toBe('OB901');
    const mixed = ctx.db.query(`SELECT ledger_post('adjustment', ARRAY[$1::bigint, $2::bigint], ARRAY[-5, 5]::numeric[])`, [a, await accountOf(bob, 'BTC')]);
    expect(await failure(mixed)).toBe('OB901');
  });

  it('never takes a user balance below zero: a clear error first, a CHECK constraint last', async () => {
    const a = await accountOf(alice, 'USDT');
    const b = await accountOf(bob, 'USDT');
    const overdraw = ctx.db.query(`SELECT ledger_post('transfer', ARRAY[$1::bigint, $2::bigint], ARRAY[-50000001, 50000001]::numeric[])`, [a, b]);
    expect(await failure(overdraw)).toBe('OB000');
    expect(await failure(ctx.db.query('UPDATE ledger_accounts SET balance = -1 WHERE id = $1', [a]))).toBe('23514');
  });

  it('posts a pair of postings (the fast path of migration 005) the same whichever account comes first', async () => {
    const a = await accountOf(alice, 'USDT');
    const b = await accountOf(bob, 'USDT');
    const balances = async () =>
      (
        await ctx.db.query<{ id: string; balance: string }>('SELECT id::text, balance::text FROM ledger_accounts WHERE id = ANY ($1::bigint[]) ORDER BY id', [
          [a, b],
        ])
      ).map((row) => row.balance);
    const before = await balances();
    // Higher id first, then lower id first: each moves 7 from alice to bob and back.
    const [first, second] = Number(a) > Number(b) ? [a, b] : [b, a];
    const [t1] = await ctx.db.query<{ id: string }>(`SELECT ledger_post('adjustment', ARRAY[$1::bigint, $2::bigint], ARRAY[$3, $4]::numeric[])::text AS id`, [
      first,
      second,
      first === a ? -7 : 7,
      first === a ? 7 : -7,
    ]);
    const postings = await ctx.db.query<{ account_id: string; currency: string; amount: string }>(
      'SELECT account_id::text, currency, amount::text FROM postings WHERE transaction_id = $1 ORDER BY id',
      [t1!.id],
    );
    expect(postings).toEqual([
      { account_id: first, currency: 'USDT', amount: first === a ? '-7' : '7' },
      { account_id: second, currency: 'USDT', amount: first === a ? '7' : '-7' },
    ]);
    await ctx.db.query(`SELECT ledger_post('adjustment', ARRAY[$1::bigint, $2::bigint], ARRAY[-7, 7]::numeric[])`, [b, a]);
    expect(await balances()).toEqual(before);
    // The general path still answers what the pair cannot be.
    expect(await failure(ctx.db.query(`SELECT ledger_post('adjustment', ARRAY[$1::bigint, 999999999], ARRAY[-7, 7]::numeric[])`, [a]))).toBe('OB902');
    expect(await failure(ctx.db.query(`SELECT ledger_post('adjustment', ARRAY[$1::bigint, $2::bigint], ARRAY[0, 0]::numeric[])`, [a, b]))).toBe('OB902');
    const overdraw = ctx.db.query(`SELECT ledger_post('transfer', ARRAY[$1::bigint, $2::bigint], ARRAY[7, -7]::numeric[])`, [a, b]);
    expect(await failure(overdraw)).toBe('OB000');
    expect(await balances()).toEqual(before);
  });

  it('has one body of posting rules: ledger_post is one transaction of ledger_post_many', async () => {
    const writers = await ctx.db.query<{ name: string }>(
      `SELECT proname AS name FROM pg_proc WHERE prosrc ILIKE '%INSERT INTO postings%' AND pronamespace = 'public'::regnamespace ORDER BY proname`,
    );
    expect(writers.map((row) => row.name)).toEqual(['ledger_post_many']);
    const [post] = await ctx.db.query<{ body: string }>(`SELECT prosrc AS body FROM pg_proc WHERE proname = 'ledger_post'`);
    expect(post!.body).toContain('ledger_post_many(');
  });

  it('ledger_post_many posts many transactions at once under the same rules, overdraft checked in their order', async () => {
    // Users of its own: the tests after this one count alice's and bob's balances.
    const [carol, dave] = [await createFixtureUser(ctx.db), await createFixtureUser(ctx.db)];
    await fund(ctx.db, carol.id, 'USDT', 1_000n);
    const a = await accountOf(carol, 'USDT');
    const b = await accountOf(dave, 'USDT');
    const fees = (await ctx.db.query<{ id: string }>(`SELECT ledger_system_account('fees', 'USDT', 'shard-0')::text AS id`))[0]!.id;
    const balancesOf = async () =>
      // In the order a, b, fees.
      (
        await ctx.db.query<{ balance: string }>(
          'SELECT balance::text AS balance FROM unnest($1::bigint[]) WITH ORDINALITY AS o(id, n) JOIN ledger_accounts USING (id) ORDER BY o.n',
          [[a, b, fees]],
        )
      ).map((row) => BigInt(row.balance));
    const postMany = (of: number[], accounts: string[], amounts: bigint[], n = Math.max(...of)) =>
      ctx.db.query<{ ids: string[] }>(`SELECT ledger_post_many('adjustment', $1::int[], $2::bigint[], $3::numeric[], $4::text[], $5::text[])::text[] AS ids`, [
        of,
        accounts,
        amounts.map(String),
        Array.from({ length: n }, (_, i) => `many ${i + 1}`),
        Array.from({ length: n }, () => 'system'),
      ]);
    const before = await balancesOf();
    // 1: a → b 10 with a fee of 1 (three postings); 2: b → a 4, its zero fee dropped.
    const [row] = await postMany([1, 1, 1, 2, 2, 2], [a, b, fees, b, a, fees], [-11n, 10n, 1n, -4n, 4n, 0n]);
    const ids = row!.ids.map(Number);
    expect(ids[1]).toBeGreaterThan(ids[0]!);
    const postings = await ctx.db.query<{ transaction_id: string; account_id: string; amount: string; memo: string }>(
      `SELECT p.transaction_id::text, p.account_id::text, p.amount::text, t.memo FROM postings p JOIN ledger_transactions t ON t.id = p.transaction_id
       WHERE p.transaction_id = ANY ($1::bigint[]) ORDER BY p.id`,
      [ids],
    );
    expect(postings).toEqual([
      { transaction_id: String(ids[0]), account_id: a, amount: '-11', memo: 'many 1' },
      { transaction_id: String(ids[0]), account_id: b, amount: '10', memo: 'many 1' },
      { transaction_id: String(ids[0]), account_id: fees, amount: '1', memo: 'many 1' },
      { transaction_id: String(ids[1]), account_id: b, amount: '-4', memo: 'many 2' },
      { transaction_id: String(ids[1]), account_id: a, amount: '4', memo: 'many 2' },
    ]);
    const after = await balancesOf();
    expect([0, 1, 2].map((i) => after[i]! - before[i]!)).toEqual([-7n, 6n, 1n]);

    // Each broken rule refuses the whole call, with ledger_post's errors, and moves nothing.
    expect(await failure(postMany([1, 1], [a, '999999999'], [-1n, 1n]))).toBe('OB902');
    expect(await failure(postMany([1, 1, 2, 2], [a, b, a, b], [-1n, 1n, 0n, 0n]))).toBe('OB902');
    expect(await failure(postMany([1, 1, 2, 2], [a, b, a, b], [-1n, 1n, -2n, 1n]))).toBe('OB901');
    expect(await failure(postMany([1, 3], [a, b], [-1n, 1n], 2))).toBe('OB902');
    // b's whole balance and one more leaves, then 10 comes back: the sum would do, the order does not.
    const bBalance = after[1]!;
    const overdraw = ctx.db.query(
      `SELECT ledger_post_many('transfer', ARRAY[1, 1, 2, 2], ARRAY[$1, $2, $2, $1]::bigint[], ARRAY[$3::numeric, -$3::numeric, -10, 10], ARRAY['x', 'y'], ARRAY['system', 'system'])`,
      [a, b, String(bBalance + 1n)],
    );
    expect(await failure(overdraw)).toBe('OB000');
    expect(await balancesOf()).toEqual(after);
    // The other way round it is fine: 10 comes in first, then all of it and one more leaves.
    await ctx.db.query(
      `SELECT ledger_post_many('transfer', ARRAY[1, 1, 2, 2], ARRAY[$1, $2, $2, $1]::bigint[], ARRAY[-10, 10, -$3::numeric, $3::numeric], ARRAY['x', 'y'], ARRAY['system', 'system'])`,
      [a, b, String(bBalance + 1n)],
    );
    expect(await balancesOf()).toEqual([after[0]! + bBalance - 9n, 9n, after[2]!]);
    // Postings of interleaved transactions: the overdraft is checked in the transactions' order, not the postings'.
    expect(await failure(postMany([1, 2, 1, 2], [b, a, a, b], [-10n, -1n, 10n, 1n]))).toBe('OB000');
    const [first, second] = (await postMany([2, 1, 2, 1], [b, a, a, b], [-10n, -1n, 10n, 1n]))[0]!.ids;
    expect(await balancesOf()).toEqual([after[0]! + bBalance, 0n, after[2]!]);
    // The rows keep the caller's order.
    const interleaved = await ctx.db.query<{ transaction_id: string; account_id: string; amount: string }>(
      'SELECT transaction_id::text, account_id::text, amount::text FROM postings WHERE transaction_id = ANY ($1::bigint[]) ORDER BY id',
      [[first, second]],
    );
    expect(interleaved).toEqual([
      { transaction_id: second, account_id: b, amount: '-10' },
      { transaction_id: first, account_id: a, amount: '-1' },
      { transaction_id: second, account_id: a, amount: '10' },
      { transaction_id: first, account_id: b, amount: '1' },
    ]);
    expect((await checkLedger(ctx.db)).violations).toEqual([]);
  });

  it('credits and debits through the ledger with a reason, and reverses once', async () => {
    const credit = await adjustBalance(ctx.db, { accountId: bob.accountId, currency: 'btc', amount: '0.5', direction: 'credit', reason: 'ticket 7' });
    expect(credit).toMatchObject({ currency: 'BTC', balance: '0.50000000' });
    const [memo] = await ctx.db.query<{ memo: string; actor: string }>('SELECT memo, actor FROM ledger_transactions WHERE id = $1', [credit.transaction_id]);
    expect(memo).toEqual({ memo: 'ticket 7', actor: 'operator' });
    const debit = await adjustBalance(ctx.db, { accountId: bob.accountId, currency: 'BTC', amount: '0.2', direction: 'debit', reason: 'ticket 8' });
    expect(debit.balance).toBe('0.30000000');
    expect(await failure(adjustBalance(ctx.db, { accountId: bob.accountId, currency: 'BTC', amount: '1', direction: 'debit', reason: 'too much' }))).toBe(
      'insufficient_funds',
    );
    expect(await failure(adjustBalance(ctx.db, { accountId: bob.accountId, currency: 'BTC', amount: '1', direction: 'credit', reason: ' ' }))).toBe(
      'validation',
    );
    expect(await failure(adjustBalance(ctx.db, { accountId: 10000009, currency: 'BTC', amount: '1', direction: 'credit', reason: 'x' }))).toBe(
      'recipient_not_found',
    );

    const reversal = await reverseTransaction(ctx.db, debit.transaction_id, 'debited by mistake');
    expect(reversal.reverses).toBe(debit.transaction_id);
    expect((await getWalletEnvelope(ctx.db, bob.id)).wallets.find((w) => w.currency === 'BTC')!.balance).toBe('0.50000000');
    expect(await failure(reverseTransaction(ctx.db, debit.transaction_id, 'again'))).toBe('already_reversed');
    // Reversing the credit would take more than bob now has? No: he has 0.5, the credit was 0.5.
    const transfer = await makeTransfer(ctx.db, bob.id, 'ledger-test-1', { account_id: alice.accountId, currency: 'BTC', amount: '0.4' });
    expect(transfer.transfer.amount).toBe('0.40000000');
    expect(await failure(reverseTransaction(ctx.db, credit.transaction_id, 'spent already'))).toBe('insufficient_funds');
  });

  it('answers wallets and the total in the display currency, also on GET /api/auth/check', async () => {
    const envelope = await getWalletEnvelope(ctx.db, alice.id);
    expect(envelope.wallets.map((w) => w.currency)).toEqual(['RUB', 'USD', 'EUR', 'KZT', 'UAH', 'BTC', 'ETH', 'USDT', 'USDC', 'TON', 'LTC', 'TRX']);
    expect(envelope.wallets.find((w) => w.currency === 'USDT')).toEqual({
      number: `${alice.accountId}-USDT`,
      currency: 'USDT',
      logo: '/image/currencies/usdt.svg',
      balance: '50.000000',
      held: '0.000000',
      last_exchange: false,
    });
    // 50 USDT × 1 + 0.4 BTC × 65000 = 26050 USD at the seeded mid rates.
    expect(envelope.total_balance).toEqual({ currency: 'USD', amount: '26050.00', logo: '/image/currencies/usd.svg' });

    const check = await ctx.app.inject({ url: '/api/auth/check', headers: { authorization: `Bearer ${alice.token}` } });
    expect(check.json()).toMatchObject({ user: { is_authenticated: true, account_id: alice.accountId }, total_balance: envelope.total_balance });
    expect(check.json().wallets).toEqual(envelope.wallets);
    const anonymous = await ctx.app.inject({ url: '/api/auth/check' });
    expect(anonymous.json().wallets).toBeUndefined();

    const eur = await ctx.app.inject({
      method: 'POST',
      url: '/api/wallets/display_currency',
      headers: { authorization: `Bearer ${alice.token}` },
      payload: { currency: 'eur' },
    });
    expect(eur.json().total_balance.currency).toBe('EUR');
    expect(eur.json().total_balance.amount).toMatch(/^24\d{3}\.\d{2}$/);

    // A disabled currency still shows while it holds money.
    await ctx.db.query(`UPDATE currencies SET enabled = false WHERE code IN ('TRX', 'BTC')`);
    const codes = (await getWalletEnvelope(ctx.db, alice.id)).wallets.map((w) => w.currency);
    expect(codes).toContain('BTC');
    expect(codes).not.toContain('TRX');
    await ctx.db.query(`UPDATE currencies SET enabled = true WHERE code IN ('TRX', 'BTC')`);
  });

  it('credits the demo account once (development seed)', async () => {
    const demo = await ctx.db.query<{ id: string }>('SELECT id::text AS id FROM users WHERE email = $1', [DEMO_ACCOUNT.email]);
    expect(demo).toHaveLength(1);
    expect(await seedDemoBalances(ctx.db)).toBe(true);
    expect(await seedDemoBalances(ctx.db)).toBe(false);
    const wallets = (await getWalletEnvelope(ctx.db, demo[0]!.id)).wallets;
    expect(wallets.find((w) => w.currency === 'USDT')!.balance).toBe('1000.000000');
    expect(wallets.find((w) => w.currency === 'BTC')!.balance).toBe('0.05000000');
  });

  it('two hot accounts sending to each other concurrently never deadlock', async () => {
    const x = await createFixtureUser(ctx.db);
    const y = await createFixtureUser(ctx.db);
    await fund(ctx.db, x.id, 'USDT', 100_000_000n);
    await fund(ctx.db, y.id, 'USDT', 100_000_000n);
    const results = await Promise.allSettled(
      Array.from({ length: 200 }, (_, i) =>
        i % 2
          ? makeTransfer(ctx.db, x.id, `hot-${i}`, { account_id: y.accountId, currency: 'USDT', amount: '0.1' })
          : makeTransfer(ctx.db, y.id, `hot-${i}`, { account_id: x.accountId, currency: 'USDT', amount: '0.1' }),
      ),
    );
    expect(results.filter((r) => r.status === 'rejected')).toEqual([]);
    const both = await Promise.all([getWalletEnvelope(ctx.db, x.id), getWalletEnvelope(ctx.db, y.id)]);
    expect(both.map((e) => e.wallets.find((w) => w.currency === 'USDT')!.balance)).toEqual(['100.000000', '100.000000']);
  });

  it('leaves a consistent ledger', async () => {
    expect((await checkLedger(ctx.db)).violations).toEqual([]);
  });
});
