import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ENGINES, build } from '../../helpers.ts';
import { createFixtureUser, fund, type TFixtureUser } from '../../fixtures.ts';
import { checkLedger } from '../../../src/domains/ledger/invariants.ts';
import { captureHold, getHold, heldBalance, placeHold, releaseHold } from '../../../src/domains/ledger/holds.ts';
import { userBalance } from '../../../src/domains/ledger/service.ts';
import { getWalletEnvelope } from '../../../src/domains/wallets/service.ts';
import { AppError } from '../../../src/errors.ts';

async function failure(promise: Promise<unknown>): Promise<AppError | string> {
  try {
    await promise;
  } catch (err) {
    return err instanceof AppError ? err : String((err as { code?: string }).code);
  }
  return 'no error';
}

describe.each(ENGINES)('holds on %s', (engine) => {
  let ctx: Awaited<ReturnType<typeof build>>;
  let alice: TFixtureUser;

  beforeAll(async () => {
    ctx = await build(engine);
    alice = await createFixtureUser(ctx.db);
    await fund(ctx.db, alice.id, 'USDT', 100_000_000n); // 100 USDT
  });
  afterAll(() => ctx.close());

  const balances = async () => ({ available: await userBalance(ctx.db, alice.id, 'USDT'), held: await heldBalance(ctx.db, alice.id, 'USDT') });

  it('places a hold (available → held) as one ledger transaction; wallets show both, the total counts both', async () => {
    const hold = await ctx.db.transaction((tx) => placeHold(tx, { userId: alice.id, currency: 'USDT', amount: 30_000_000n, purpose: 'test:1' }));
    expect(hold).toMatchObject({ user_id: alice.id, currency: 'USDT', amount: '30000000', state: 'held', final_transaction_id: null });
    expect(await balances()).toEqual({ available: 70_000_000n, held: 30_000_000n });
    const postings = await ctx.db.query<{ kind: string; amount: string }>(
      `SELECT a.kind, p.amount::text AS amount FROM postings p JOIN ledger_accounts a ON a.id = p.account_id WHERE p.transaction_id = $1 ORDER BY a.kind`,
      [hold.place_transaction_id],
    );
    expect(postings).toEqual([
      { kind: 'hold', amount: '30000000' },
      { kind: 'user', amount: '-30000000' },
    ]);
    const envelope = await getWalletEnvelope(ctx.db, alice.id);
    expect(envelope.wallets.find((w) => w.currency === 'USDT')).toMatchObject({ balance: '70.000000', held: '30.000000' });
    expect(envelope.wallets.find((w) => w.currency === 'BTC')).toMatchObject({ balance: '0.00000000', held: '0.00000000' });
    expect(envelope.total_balance.amount).toBe('100.00');
    expect((await checkLedger(ctx.db)).violations).toEqual([]);
  });

  it('refuses an overdraft clearly, and a user without the currency, moving nothing', async () => {
    const before = await balances();
    const over = await failure(ctx.db.transaction((tx) => placeHold(tx, { userId: alice.id, currency: 'USDT', amount: 70_000_001n, purpose: 'test:2' })));
    expect(over).toBeInstanceOf(AppError);
    expect((over as AppError).code).toBe('insufficient_funds');
    expect((over as AppError).vars).toMatchObject({ currency: 'USDT', balance: '70', needed: '70.000001' });
    const none = await failure(ctx.db.transaction((tx) => placeHold(tx, { userId: alice.id, currency: 'BTC', amount: 1n, purpose: 'test:3' })));
    expect((none as AppError).code).toBe('insufficient_funds');
    const zero = await failure(ctx.db.transaction((tx) => placeHold(tx, { userId: alice.id, currency: 'USDT', amount: 0n, purpose: 'test:4' })));
    expect((zero as AppError).code).toBe('amount_not_positive');
    expect(await balances()).toEqual(before);
  });

  it('releases a hold once: the second release and a later capture are refused', async () => {
    const hold = await ctx.db.transaction((tx) => placeHold(tx, { userId: alice.id, currency: 'USDT', amount: 5_000_000n, purpose: 'test:5' }));
    const before = await balances();
    const tx = await ctx.db.transaction((t) => releaseHold(t, hold.id, { actor: 'test' }));
    expect(await getHold(ctx.db, hold.id)).toMatchObject({ state: 'released', final_transaction_id: tx });
    expect(await balances()).toEqual({ available: before.available + 5_000_000n, held: before.held - 5_000_000n });
    const again = await failure(ctx.db.transaction((t) => releaseHold(t, hold.id)));
    expect((again as AppError).code).toBe('hold_not_held');
    expect((again as AppError).vars).toMatchObject({ state: 'released' });
    const capture = await failure(
      ctx.db.transaction((t) => captureHold(t, hold.id, { kind: 'withdrawal', destinations: [{ kind: 'fees', amount: 5_000_000n }] })),
    );
    expect((capture as AppError).code).toBe('hold_not_held');
    expect(await balances()).toEqual({ available: before.available + 5_000_000n, held: before.held - 5_000_000n });
    expect((await failure(ctx.db.transaction((t) => releaseHold(t, '999999')))) as AppError).toMatchObject({ code: 'hold_not_found' });
  });

  it('captures a hold to house accounts split as asked (clearing + fees), once, never to a user, never more or less', async () => {
    const hold = await ctx.db.transaction((tx) => placeHold(tx, { userId: alice.id, currency: 'USDT', amount: 10_000_000n, purpose: 'test:6' }));
    const before = await balances();
    const wrongSum = await failure(
      ctx.db.transaction((t) =>
        captureHold(t, hold.id, { kind: 'withdrawal', destinations: [{ kind: 'clearing', name: 'sandbox-card', amount: 9_000_000n }] }),
      ),
    );
    expect(wrongSum).toBe('OB902');
    const toUser = await failure(
      ctx.db.transaction(async (t) => {
        const [acc] = await t.query<{ id: string }>(`SELECT ledger_user_account($1, 'USDT')::text AS id`, [alice.id]);
        await t.query(`SELECT ledger_hold_capture($1, ARRAY[$2::bigint], ARRAY[10000000::numeric], 'withdrawal')`, [hold.id, acc!.id]);
      }),
    );
    expect(toUser).toBe('OB902');
    const tx = await ctx.db.transaction((t) =>
      captureHold(t, hold.id, {
        kind: 'withdrawal',
        destinations: [
          { kind: 'clearing', name: 'sandbox-card', amount: 9_500_000n },
          { kind: 'fees', amount: 500_000n },
        ],
      }),
    );
    expect(await getHold(ctx.db, hold.id)).toMatchObject({ state: 'captured', final_transaction_id: tx });
    expect(await balances()).toEqual({ available: before.available, held: before.held - 10_000_000n });
    const [clearing] = await ctx.db.query<{ balance: string }>(
      `SELECT balance::text AS balance FROM ledger_accounts WHERE kind = 'clearing' AND name = 'sandbox-card' AND currency = 'USDT'`,
    );
    expect(clearing!.balance).toBe('9500000');
    const again = await failure(ctx.db.transaction((t) => releaseHold(t, hold.id)));
    expect((again as AppError).code).toBe('hold_not_held');
    expect((await checkLedger(ctx.db)).violations).toEqual([]);
  });

  it('ends a hold once when a release and a capture race', async () => {
    const hold = await ctx.db.transaction((tx) => placeHold(tx, { userId: alice.id, currency: 'USDT', amount: 1_000_000n, purpose: 'test:7' }));
    const results = await Promise.allSettled([
      ctx.db.transaction((t) => releaseHold(t, hold.id)),
      ctx.db.transaction((t) => captureHold(t, hold.id, { kind: 'withdrawal', destinations: [{ kind: 'fees', amount: 1_000_000n }] })),
      ctx.db.transaction((t) => releaseHold(t, hold.id)),
    ]);
    expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
    for (const r of results) if (r.status === 'rejected') expect((r.reason as AppError).code).toBe('hold_not_held');
    expect((await checkLedger(ctx.db)).violations).toEqual([]);
  });

  it('the checker finds a held balance moved behind the holds table', async () => {
    const [fees] = await ctx.db.query<{ id: string }>(`SELECT ledger_house_account('fees', 'USDT', $1)::text AS id`, [alice.id]);
    await ctx.db.query(`SELECT ledger_post('adjustment', ARRAY[ledger_hold_account($1, 'USDT'), $2::bigint], ARRAY[1, -1]::numeric[])`, [alice.id, fees!.id]);
    const report = await checkLedger(ctx.db);
    expect(report.violations.map((v) => v.rule)).toContain('each held balance equals its open holds');
  });
});
