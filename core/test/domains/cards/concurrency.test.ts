import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { build } from '../../helpers.ts';
import { createFixtureUser, fund } from '../../fixtures.ts';
import { openDb, type Db } from '../../../src/db/index.ts';
import { chargeMonthlyFees } from '../../../src/domains/cards/fees.ts';
import { SANDBOX_ISSUE_DELAY_MS } from '../../../src/providers/sandbox/issuer.ts';
import { checkLedger } from '../../../src/domains/ledger/invariants.ts';
import { CARD_OVERRIDES, makeProduct, placeOrder, post, sandboxOf, verifyUser, walletMinor, type TCtx } from './helpers.ts';

const NOW = new Date('2026-11-23T10:00:00Z');
const silent = { error: () => {}, warn: () => {}, info: () => {} };

/** PostgreSQL only: real concurrency (PGlite runs one statement at a time). */
describe.skipIf(!process.env.TEST_DATABASE_URL)('cards under concurrency (postgres)', () => {
  let ctx: TCtx;
  let clock = NOW;

  beforeAll(async () => {
    ctx = await build('postgres', CARD_OVERRIDES, { now: () => clock });
  });
  afterAll(async () => ctx?.close());

  it('the monthly-fee job run by two cores at once charges each card once; an unpaid month is taken once funded', async () => {
    await makeProduct(ctx.db, { id: 'monthly', monthly_fee: '1' });
    const issuer = sandboxOf(ctx, CARD_OVERRIDES);
    const owners: Array<{ id: string }> = [];
    for (let i = 0; i < 20; i++) {
      const user = await createFixtureUser(ctx.db);
      await verifyUser(ctx.db, user.id);
      // The last owner has nothing: that month stays unpaid.
      if (i < 19) await fund(ctx.db, user.id, 'USD', 3_00n);
      const order = await placeOrder(ctx, user.token, { product: 'monthly', currency: 'USD', name_on_card: 'IVAN PETROV' });
      await post(ctx, '/api/card/order/confirm', user.token, { card: order.id });
      owners.push(user);
    }
    await issuer.advance(clock);
    clock = new Date(clock.getTime() + SANDBOX_ISSUE_DELAY_MS);
    await issuer.advance(clock);
    const [active] = await ctx.db.query<{ n: number }>(`SELECT count(*)::int AS n FROM cards WHERE product_id = 'monthly' AND status = 'active'`);
    expect(active!.n).toBe(20);

    // Issued in November: nothing is due in November (the issue fee covers it).
    expect(await chargeMonthlyFees(ctx.db, clock)).toEqual({ charged: 0, unpaid: 0, settled: 0 });

    const december = new Date('2026-12-01T00:05:00Z');
    const second: Db = await openDb({ DATABASE_URL: ctx.url!, DATA_DIR: '', DB_POOL_SIZE: 8 }, silent);
    try {
      const [a, b] = await Promise.all([chargeMonthlyFees(ctx.db, december), chargeMonthlyFees(second, december)]);
      expect(a.charged + b.charged).toBe(19);
      expect(a.unpaid + b.unpaid).toBe(1);
      // Again, on both cores: nothing more.
      const again = await Promise.all([chargeMonthlyFees(ctx.db, december), chargeMonthlyFees(second, december)]);
      expect(again.map((r) => r.charged + r.unpaid + r.settled)).toEqual([0, 0]);
    } finally {
      await second.close();
    }
    for (const owner of owners.slice(0, 19)) expect(await walletMinor(ctx.db, owner.id, 'USD')).toBe(2_00n);
    const [rows] = await ctx.db.query<{ paid: number; unpaid: number }>(
      `SELECT count(*) FILTER (WHERE f.state = 'paid')::int AS paid, count(*) FILTER (WHERE f.state = 'unpaid')::int AS unpaid
       FROM card_monthly_fees f JOIN cards c ON c.id = f.card_id WHERE c.product_id = 'monthly' AND f.period = '2026-12'`,
    );
    expect(rows).toEqual({ paid: 19, unpaid: 1 });

    await fund(ctx.db, owners[19]!.id, 'USD', 1_50n);
    expect(await chargeMonthlyFees(ctx.db, new Date('2026-12-02T00:05:00Z'))).toEqual({ charged: 0, unpaid: 0, settled: 1 });
    expect(await walletMinor(ctx.db, owners[19]!.id, 'USD')).toBe(50n);
    expect((await checkLedger(ctx.db)).violations).toEqual([]);
  });

  it('100 orders, each confirmed and cancelled at once: each ends in one state, its fee moved once', async () => {
    const orders: Array<{ id: string; userId: string; token: string }> = [];
    for (let i = 0; i < 100; i++) {
      const user = await createFixtureUser(ctx.db);
      await verifyUser(ctx.db, user.id);
      await fund(ctx.db, user.id, 'USD', 5_00n);
      const order = await placeOrder(ctx, user.token, { product: 'virtual', currency: 'USD', name_on_card: 'IVAN PETROV' });
      orders.push({ id: order.id, userId: user.id, token: user.token });
    }
    const answers = await Promise.all(
      orders.flatMap((order) => [
        post(ctx, '/api/card/order/confirm', order.token, { card: order.id }),
        post(ctx, '/api/card/order/cancel', order.token, { card: order.id }),
      ]),
    );
    let confirmed = 0;
    for (const [i, order] of orders.entries()) {
      const [confirm, cancel] = [answers[2 * i]!, answers[2 * i + 1]!];
      // Exactly one of the two wins; the other finds its state and is refused.
      expect([confirm.statusCode, cancel.statusCode].sort()).toEqual([200, 409]);
      const [row] = await ctx.db.query<{ status: string; hold: string }>(
        'SELECT c.status, h.state AS hold FROM cards c JOIN holds h ON h.id = c.hold_id WHERE c.public_id::text = $1',
        [order.id],
      );
      const wallet = await walletMinor(ctx.db, order.userId, 'USD');
      if (confirm.statusCode === 200) {
        confirmed++;
        expect([row!.status, row!.hold, wallet]).toEqual(['confirmed', 'captured', 0n]);
      } else {
        expect([row!.status, row!.hold, wallet]).toEqual(['cancelled', 'released', 5_00n]);
      }
    }
    // Every movement into card fees of these orders, whatever the rows say: one capture per confirmed order.
    const [fees] = await ctx.db.query<{ total: string; captures: number }>(
      `SELECT coalesce(sum(p.amount), 0)::text AS total, count(*)::int AS captures FROM postings p
       JOIN ledger_accounts a ON a.id = p.account_id JOIN ledger_transactions t ON t.id = p.transaction_id
       WHERE a.kind = 'card_fees' AND t.memo = ANY (SELECT 'card issue fee ' || id FROM unnest($1::text[]) AS id)`,
      [orders.map((order) => order.id)],
    );
    expect(fees).toEqual({ total: String(confirmed * 500), captures: confirmed });
    console.log(`confirm/cancel races: ${confirmed} confirmed, ${100 - confirmed} cancelled`);
    expect((await checkLedger(ctx.db)).violations).toEqual([]);
  });
});
