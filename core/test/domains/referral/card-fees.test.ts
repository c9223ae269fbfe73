import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ENGINES, build } from '../../helpers.ts';
import { call } from '../../auth-helpers.ts';
import { createFixtureUser, fund, type TFixtureUser } from '../../fixtures.ts';
import { chargeMonthlyFees } from '../../../src/domains/cards/fees.ts';
import { SANDBOX_ISSUE_DELAY_MS } from '../../../src/providers/sandbox/issuer.ts';
import { checkLedger } from '../../../src/domains/ledger/invariants.ts';
import { bindReferee, mainCode, setReferralTerms, settleReferralBonuses } from '../../../src/domains/referral/service.ts';
import { CARD_OVERRIDES, cardStatus, placeOrder, post, sandboxOf, verifyUser, walletMinor, type TCtx } from '../cards/helpers.ts';

/*
 * Card fees: the issue fee (captured at confirm) and the monthly fee each earn the
 * referee's referrer the share in the fee's own transaction; a failed order's refund reverses
 * the accrual in the refund's transaction: a pending one is never paid, a paid one is clawed back
 * from the next settlement. The seeded `virtual` product: issue fee 5.00 USD, monthly 1.00 USD.
 */

const NOW = new Date('2026-11-23T10:00:00Z');
/** After any accrual's hold (the terms' hold is 0; accruals are dated by the database clock). */
const later = () => new Date(Date.now() + 60_000);

type TAccrual = { id: string; source: string; source_id: string; fee: string; amount: string; settled: boolean; reversed: boolean; clawed: boolean };

async function accrualsOf(ctx: TCtx, referrer: TFixtureUser): Promise<TAccrual[]> {
  return ctx.db.query<TAccrual>(
    `SELECT id::text, source, source_id::text, fee::text, amount::text, settlement_id IS NOT NULL AS settled,
            reversal_transaction_id IS NOT NULL AS reversed, clawed_by IS NOT NULL AS clawed
     FROM referral_accruals WHERE referrer_id = $1 ORDER BY id`,
    [referrer.id],
  );
}

/** A verified referee of `referrer` with `usd` minor units. */
async function refereeOf(ctx: TCtx, referrer: TFixtureUser, usd: bigint): Promise<TFixtureUser> {
  const user = await createFixtureUser(ctx.db);
  await verifyUser(ctx.db, user.id);
  expect(await bindReferee(ctx.db, user.id, await mainCode(ctx.db, referrer.id))).toBe(true);
  await fund(ctx.db, user.id, 'USD', usd);
  return user;
}

async function confirmedOrder(ctx: TCtx, user: TFixtureUser, name = 'IVAN PETROV'): Promise<{ id: string; feeTx: string }> {
  const order = await placeOrder(ctx, user.token, { product: 'virtual', currency: 'USD', name_on_card: name });
  const res = await post(ctx, '/api/card/order/confirm', user.token, { card: order.id });
  expect(res.statusCode, res.body).toBe(200);
  const [row] = await ctx.db.query<{ tx: string }>('SELECT fee_transaction_id::text AS tx FROM cards WHERE public_id::text = $1', [order.id]);
  return { id: order.id, feeTx: row!.tx };
}

describe.each(ENGINES)('referral accruals of card fees (%s)', (engine) => {
  let ctx: TCtx;
  let clock = NOW;
  let issuer: ReturnType<typeof sandboxOf>;
  const deps = () => ({ db: ctx.db, publicUrl: 'https://obmen.test' });
  const totals = async (user: TFixtureUser) => (await call(ctx.app, '/api/referral/info', { token: user.token })).json().totals;

  beforeAll(async () => {
    ctx = await build(engine, CARD_OVERRIDES, { now: () => clock });
    issuer = sandboxOf(ctx, CARD_OVERRIDES);
    await setReferralTerms(ctx.db, { share: '0.2', currency: 'USD', hold: '0', min: '0' });
  });
  afterAll(async () => ctx?.close());

  it('the issue fee and the monthly fee each accrue the share in the fee transaction; the checker agrees', async () => {
    const anna = await createFixtureUser(ctx.db);
    const bob = await refereeOf(ctx, anna, 20_00n);
    const order = await confirmedOrder(ctx, bob);
    expect(await walletMinor(ctx.db, bob.id, 'USD')).toBe(15_00n);
    expect(await accrualsOf(ctx, anna)).toEqual([
      { id: expect.any(String), source: 'card', source_id: order.feeTx, fee: '500', amount: '100', settled: false, reversed: false, clawed: false },
    ]);
    // The accrual's ledger transaction moves the share out of the very card-fees account the fee went to.
    const [moved] = await ctx.db.query<{ kind: string; from: string }>(
      `SELECT t.kind, (SELECT a.kind FROM postings p JOIN ledger_accounts a ON a.id = p.account_id WHERE p.transaction_id = t.id AND p.amount < 0) AS from
       FROM referral_accruals r JOIN ledger_transactions t ON t.id = r.transaction_id WHERE r.source_id = $1`,
      [order.feeTx],
    );
    expect(moved).toEqual({ kind: 'referral', from: 'card_fees' });

    await issuer.advance(clock);
    clock = new Date(clock.getTime() + SANDBOX_ISSUE_DELAY_MS);
    await issuer.advance(clock);
    expect(await cardStatus(ctx.db, order.id)).toBe('active');
    await chargeMonthlyFees(ctx.db, new Date('2026-12-01T00:05:00Z'));
    const [monthly] = await ctx.db.query<{ tx: string }>(
      `SELECT f.ledger_transaction_id::text AS tx FROM card_monthly_fees f JOIN cards c ON c.id = f.card_id WHERE c.public_id::text = $1`,
      [order.id],
    );
    expect((await accrualsOf(ctx, anna)).map((a) => [a.source_id, a.fee, a.amount])).toEqual([
      [order.feeTx, '500', '100'],
      [monthly!.tx, '100', '20'],
    ]);
    // Pending: the core's clock (NOW) is before the database's, which dated the accruals.
    expect(await totals(anna)).toMatchObject({ currency: 'USD', pending: '1.20', available: '0.00', paid: '0.00' });
    expect((await checkLedger(ctx.db)).violations).toEqual([]);
  });

  it('a failed order reverses its pending accrual with the refund; settlement skips it', async () => {
    const anna = await createFixtureUser(ctx.db);
    const bob = await refereeOf(ctx, anna, 20_00n);
    const kept = await confirmedOrder(ctx, bob);
    const declined = await confirmedOrder(ctx, bob, 'DECLINE ME');
    expect(await walletMinor(ctx.db, bob.id, 'USD')).toBe(10_00n);
    await issuer.advance(clock);
    expect(await cardStatus(ctx.db, declined.id)).toBe('failed');
    expect(await walletMinor(ctx.db, bob.id, 'USD')).toBe(15_00n);
    const accruals = await accrualsOf(ctx, anna);
    expect(accruals.map((a) => [a.source_id, a.reversed])).toEqual([
      [kept.feeTx, false],
      [declined.feeTx, true],
    ]);
    // A reversal: the accrual's own postings with the opposite sign, in the refund's database transaction.
    const [reversal] = await ctx.db.query<{ kind: string; same_postings: boolean; with_refund: boolean }>(
      `SELECT t.kind,
              (SELECT array_agg((p.account_id, -p.amount) ORDER BY p.account_id) FROM postings p WHERE p.transaction_id = a.transaction_id)
                = (SELECT array_agg((p.account_id, p.amount) ORDER BY p.account_id) FROM postings p WHERE p.transaction_id = t.id) AS same_postings,
              t.created_at = (SELECT r.created_at FROM ledger_transactions r JOIN cards c ON c.refund_transaction_id = r.id WHERE c.public_id::text = $2) AS with_refund
       FROM referral_accruals a JOIN ledger_transactions t ON t.id = a.reversal_transaction_id AND t.reverses = a.transaction_id WHERE a.id = $1`,
      [accruals[1]!.id, declined.id],
    );
    expect(reversal).toEqual({ kind: 'reversal', same_postings: true, with_refund: true });
    expect(await totals(anna)).toMatchObject({ pending: '1.00', available: '0.00' });
    expect(await checkLedger(ctx.db)).toMatchObject({ violations: [] });

    const before = await walletMinor(ctx.db, anna.id, 'USD');
    const settled = (await settleReferralBonuses(deps(), later())).filter((s) => s.referrer_id === anna.id);
    expect(settled).toEqual([{ referrer_id: anna.id, currency: 'USD', id: expect.any(String), amount: '100', clawed: '0', accruals: 1 }]);
    expect(await walletMinor(ctx.db, anna.id, 'USD')).toBe(before + 100n);
    expect((await accrualsOf(ctx, anna)).map((a) => [a.settled, a.reversed])).toEqual([
      [true, false],
      [false, true],
    ]);
    const history = (await call(ctx.app, '/api/referral/bonus/history', { token: anna.token })).json();
    expect(history.items.map((item: { amount: string }) => item.amount)).toEqual(['1.00']);
    expect((await checkLedger(ctx.db)).violations).toEqual([]);
  });

  it('a paid accrual whose fee is refunded is clawed back from the next settlement', async () => {
    const anna = await createFixtureUser(ctx.db);
    const bob = await refereeOf(ctx, anna, 30_00n);
    await confirmedOrder(ctx, bob, 'DECLINE ME');
    // Paid before the issuer fails the order (a hold shorter than the issuer's answer).
    expect((await settleReferralBonuses(deps(), later())).filter((s) => s.referrer_id === anna.id)).toMatchObject([{ amount: '100', clawed: '0' }]);
    await issuer.advance(clock);
    expect((await accrualsOf(ctx, anna)).map((a) => [a.settled, a.reversed, a.clawed])).toEqual([[true, true, false]]);
    expect(await totals(anna)).toMatchObject({ pending: '0.00', available: '-1.00', paid: '1.00' });
    expect((await checkLedger(ctx.db)).violations).toEqual([]);

    // One more fee (1.00 accrued) only cancels the debt: nothing is paid.
    await confirmedOrder(ctx, bob);
    expect((await settleReferralBonuses(deps(), later())).filter((s) => s.referrer_id === anna.id)).toEqual([]);
    // A second one: the settlement pays 1.00 of the 2.00 due and takes the clawback.
    await confirmedOrder(ctx, bob);
    const before = await walletMinor(ctx.db, anna.id, 'USD');
    const settled = (await settleReferralBonuses(deps(), later())).filter((s) => s.referrer_id === anna.id);
    expect(settled).toMatchObject([{ amount: '100', clawed: '100', accruals: 2 }]);
    expect(await walletMinor(ctx.db, anna.id, 'USD')).toBe(before + 100n);
    expect((await accrualsOf(ctx, anna)).map((a) => [a.settled, a.reversed, a.clawed])).toEqual([
      [true, true, true],
      [true, false, false],
      [true, false, false],
    ]);
    expect(await totals(anna)).toMatchObject({ available: '0.00', paid: '2.00' });
    expect((await settleReferralBonuses(deps(), later())).filter((s) => s.referrer_id === anna.id)).toEqual([]);
    expect((await checkLedger(ctx.db)).violations).toEqual([]);
  });

  it('the checker finds an accrual reversed behind its back (no record on the accrual)', async () => {
    const anna = await createFixtureUser(ctx.db);
    const bob = await refereeOf(ctx, anna, 10_00n);
    const order = await confirmedOrder(ctx, bob);
    const rolledBack = new Error('rolled back');
    const rules = await ctx.db
      .transaction(async (tx) => {
        await tx.query(`SELECT ledger_reverse(transaction_id, 'forged', 'test') FROM referral_accruals WHERE source = 'card' AND source_id = $1`, [
          order.feeTx,
        ]);
        const found = (await checkLedger(tx)).violations.map((v) => v.rule);
        throw Object.assign(rolledBack, { found });
      })
      .catch((err: Error & { found?: string[] }) => err.found ?? []);
    expect(rules).toContain('each reversed referral accrual is reversed by its own transaction, and only accruals are');
    expect(rules).toContain('the referral liability holds exactly the unsettled accruals less the clawbacks owed');
    expect((await checkLedger(ctx.db)).violations).toEqual([]);
  });
});

/*
 * PostgreSQL only (PGlite runs one statement at a time): fifty card fees of one referrer's
 * referees at once give exactly fifty accruals; failures refunded while two cores settle give
 * each accrual one fate (paid, reversed unpaid, or paid and clawed back) and the checker agrees.
 */
describe.skipIf(!process.env.TEST_DATABASE_URL)('referral accruals of card fees under concurrency (postgres)', () => {
  let ctx: TCtx;
  const clock = NOW;

  beforeAll(async () => {
    ctx = await build('postgres', CARD_OVERRIDES, { now: () => clock });
    await setReferralTerms(ctx.db, { share: '0.2', currency: 'USD', hold: '0', min: '0' });
  });
  afterAll(async () => ctx?.close());

  it('50 concurrent card fees for one referrer give exactly 50 accruals; refunds racing two settlement runs keep every rule', async () => {
    const anna = await createFixtureUser(ctx.db);
    const referees: TFixtureUser[] = [];
    for (let i = 0; i < 25; i++) referees.push(await refereeOf(ctx, anna, 10_00n));
    // Two orders per referee, one in five to be declined by the issuer.
    const orders: Array<{ user: TFixtureUser; id: string }> = [];
    for (const [i, user] of referees.entries()) {
      for (let n = 0; n < 2; n++) {
        const order = await placeOrder(ctx, user.token, {
          product: 'virtual',
          currency: 'USD',
          name_on_card: (i * 2 + n) % 5 === 0 ? 'DECLINE ME' : 'IVAN PETROV',
        });
        orders.push({ user, id: order.id });
      }
    }
    const answers = await Promise.all(orders.map((order) => post(ctx, '/api/card/order/confirm', order.user.token, { card: order.id })));
    expect(answers.map((res) => res.statusCode)).toEqual(Array(50).fill(200));
    const accruals = await accrualsOf(ctx, anna);
    expect(accruals).toHaveLength(50);
    expect(new Set(accruals.map((a) => a.source_id)).size).toBe(50);
    expect(accruals.every((a) => a.source === 'card' && a.amount === '100')).toBe(true);
    expect((await checkLedger(ctx.db)).violations).toEqual([]);

    const issuer = sandboxOf(ctx, CARD_OVERRIDES);
    const deps = { db: ctx.db, publicUrl: 'https://obmen.test' };
    const [, first, second] = await Promise.all([issuer.advance(clock), settleReferralBonuses(deps, later()), settleReferralBonuses(deps, later())]);
    const rest = await settleReferralBonuses(deps, later());
    const after = await accrualsOf(ctx, anna);
    expect(after.filter((a) => a.reversed)).toHaveLength(10);
    // Whichever came first for each declined order: paid then clawed back (or still owed), or reversed unpaid.
    const count = (pick: (a: TAccrual) => boolean) => BigInt(after.filter(pick).length);
    const paid = [...first, ...second, ...rest].reduce((sum, s) => sum + BigInt(s.amount), 0n);
    expect(paid).toBe((count((a) => a.settled) - count((a) => a.clawed)) * 100n);
    expect(count((a) => !a.settled && !a.reversed)).toBe(0n);
    expect(await walletMinor(ctx.db, anna.id, 'USD')).toBe(paid);
    expect((await checkLedger(ctx.db)).violations).toEqual([]);
  });
});
