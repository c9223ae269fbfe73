import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TDepositPayment, TPaymentRecord } from '@obmen/shared';
import { build, ENGINES } from '../../helpers.ts';
import { call } from '../../auth-helpers.ts';
import { createFixtureUser, type TFixtureUser } from '../../fixtures.ts';

const NOW = new Date('2026-11-23T10:00:00Z');
const FORM = { 'content-type': 'application/x-www-form-urlencoded' };
const card = (number: string) => `action=pay&card_number=${number}&expiry=12%2F30&cvc=123`;

describe.each(ENGINES)('GET /api/deposit/history and /api/payment/history (%s)', (engine) => {
  let ctx: Awaited<ReturnType<typeof build>>;
  let alice: TFixtureUser;
  let bob: TFixtureUser;
  const ids: Record<string, string> = {};

  const open = async (user: TFixtureUser, url: string, payload: object) => {
    const res = await call(ctx.app, url, { token: user.token, payload, locale: 'en' });
    expect(res.statusCode, res.body).toBe(200);
    return res.json().payment as TDepositPayment;
  };
  const pay = async (payment: TDepositPayment, number: string) => {
    const res = await ctx.app.inject({ method: 'POST', url: payment.pay_url!, headers: FORM, payload: card(number) });
    expect(res.statusCode, res.body).toBe(303);
  };
  const get = (user: TFixtureUser | null, url: string, locale: 'ru' | 'en' = 'en') =>
    ctx.app.inject({ url, headers: { ...(user ? { authorization: `Bearer ${user.token}` } : {}), 'x-obmen-locale': locale } });
  const list = async (user: TFixtureUser, url: string) => {
    const res = await get(user, url);
    expect(res.statusCode, res.body).toBe(200);
    return res.json() as { items: TPaymentRecord[]; page: number; per_page: number; total: number; pages: number };
  };

  beforeAll(async () => {
    ctx = await build(engine, {}, { now: () => NOW });
    alice = await createFixtureUser(ctx.db);
    bob = await createFixtureUser(ctx.db);
    // Alice, oldest first: a card deposit paid, one declined, one left open, a bank transfer; a purchase paid.
    const paid = await open(alice, '/api/deposit/integration_json', { ps: 'sandbox-card', currency: 'RUB', amount: '1000' });
    await pay(paid, '4242424242424242');
    const declined = await open(alice, '/api/deposit/integration_json', { ps: 'sandbox-card', currency: 'RUB', amount: '200' });
    await pay(declined, '4000000000000002');
    const created = await open(alice, '/api/deposit/integration_json', { ps: 'sandbox-card', currency: 'EUR', amount: '50' });
    const bank = await open(alice, '/api/deposit/integration_json', { ps: 'sandbox-bank', currency: 'USD', amount: '300' });
    const purchase = await open(alice, '/api/purchase/integration_json', { ps: 'sandbox-card', currency: 'USD', buy: 'BTC', amount: '100' });
    await pay(purchase, '4242424242424242');
    Object.assign(ids, { paid: paid.id, declined: declined.id, created: created.id, bank: bank.id, purchase: purchase.id });
    await open(bob, '/api/deposit/integration_json', { ps: 'sandbox-card', currency: 'RUB', amount: '500' });
    // The n-th newest payment is n days old.
    await ctx.db.query(`UPDATE payments SET created_at = $1::timestamptz - ((SELECT max(id) FROM payments) - id) * interval '1 day'`, [NOW]);
  });
  afterAll(async () => ctx?.close());

  it('pages deposits newest first, each linking to its status page; purchases stay out', async () => {
    const first = await list(alice, '/api/deposit/history?per_page=3');
    expect(first).toMatchObject({ page: 1, per_page: 3, total: 4, pages: 2 });
    expect(first.items.map((item) => item.id)).toEqual([ids.bank, ids.created, ids.declined]);
    expect(first.items[0]).toMatchObject({
      direction: 'deposit',
      ps: 'sandbox-bank',
      system: 'Bank transfer (sandbox)',
      currency: 'USD',
      amount: '300.00',
      state: 'created',
      quote: null,
    });
    expect(first.items[0]!.bank?.reference).toMatch(/^OBM-/);
    expect(first.items[2]).toMatchObject({
      state: 'declined',
      reason: 'payments.declined_by_provider',
      url: `/deposit/form/sandbox-card/RUB?payment=${ids.declined}`,
    });
    const second = await list(alice, '/api/deposit/history?per_page=3&page=2');
    expect(second.items).toHaveLength(1);
    expect(second.items[0]).toMatchObject({ id: ids.paid, state: 'credited', amount: '1000.00', fee: '15.00', receive: '985.00' });
  });

  it('filters deposits by state, currency and dates', async () => {
    expect((await list(alice, '/api/deposit/history?status=credited')).items.map((item) => item.id)).toEqual([ids.paid]);
    expect((await list(alice, '/api/deposit/history?currency=rub')).total).toBe(2);
    expect((await list(alice, '/api/deposit/history?currency=BTC')).total).toBe(0);
    // Alice's deposits are 5, 4, 3 and 2 days old (her purchase 1 day, Bob's deposit today).
    const day = (daysAgo: number) => new Date(NOW.getTime() - daysAgo * 86_400_000).toISOString().slice(0, 10);
    expect((await list(alice, `/api/deposit/history?from=${day(3)}&to=${day(2)}`)).items.map((item) => item.id)).toEqual([ids.bank, ids.created]);
    const bad = await get(alice, '/api/deposit/history?status=completed');
    expect(bad.statusCode).toBe(400);
    expect(bad.json().fields).toHaveProperty('status');
    expect((await get(alice, '/api/deposit/history?from=2026-02-30')).statusCode).toBe(400);
  });

  it('lists purchases with their quote; the currency filter matches the one paid with or bought', async () => {
    const page = await list(alice, '/api/payment/history');
    expect(page.total).toBe(1);
    expect(page.items[0]).toMatchObject({
      id: ids.purchase,
      direction: 'purchase',
      currency: 'USD',
      state: 'credited',
      url: `/purchase/form/sandbox-card/BTC?payment=${ids.purchase}`,
      quote: { buy: 'BTC', outcome: 'exchanged' },
    });
    expect((await list(alice, '/api/payment/history?currency=BTC')).total).toBe(1);
    expect((await list(alice, '/api/payment/history?currency=USD')).total).toBe(1);
    expect((await list(alice, '/api/payment/history?currency=RUB')).total).toBe(0);
    expect((await list(alice, '/api/payment/history?status=declined')).total).toBe(0);
  });

  it("exports the filtered rows as CSV, reasons in the reader's language", async () => {
    const res = await get(alice, '/api/deposit/history?format=csv&currency=RUB', 'ru');
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toBe('text/csv; charset=utf-8');
    expect(res.headers['content-disposition']).toBe('attachment; filename="deposit-history.csv"');
    const lines = res.body.trimEnd().split('\r\n');
    expect(lines[0]).toBe('id,created_at,system,currency,amount,fee,receive,state,reason');
    expect(lines).toHaveLength(3);
    expect(lines[1]).toContain(`${ids.declined},`);
    expect(lines[1]).toContain(',Банковская карта (песочница),RUB,200.00,');
    expect(lines[1]).toContain(',declined,Платёжная система отклонила платёж.');
    const purchases = await get(alice, '/api/payment/history?format=csv');
    expect(purchases.headers['content-disposition']).toBe('attachment; filename="payment-history.csv"');
    const [header, row] = purchases.body.trimEnd().split('\r\n');
    expect(header).toBe('id,created_at,system,currency,amount,fee,buy,buy_receive,rate,state,reason');
    expect(row).toMatch(new RegExp(`^${ids.purchase},.*,Bank card \\(sandbox\\),USD,100.00,2.50,BTC,0\\.\\d{8},[\\d.]+,credited,$`));
  });

  it("shows only the caller's payments; another user's payment answers like a missing one", async () => {
    const bobs = await list(bob, '/api/deposit/history');
    expect(bobs.total).toBe(1);
    expect(bobs.items[0]!.id).not.toBe(ids.paid);
    expect((await list(bob, '/api/payment/history')).total).toBe(0);
    const check = (url: string) => call(ctx.app, '/api/deposit/integration_json/check', { token: bob.token, payload: { url } });
    const foreign = await check(`/deposit/form/sandbox-card/RUB?payment=${ids.paid}`);
    const missing = await check('/deposit/form/sandbox-card/RUB?payment=00000000-0000-4000-8000-000000000000');
    expect(foreign.statusCode).toBe(404);
    expect(foreign.json()).toEqual(missing.json());
    expect(foreign.json().code).toBe('payment_not_found');
    expect((await get(null, '/api/deposit/history')).statusCode).toBe(401);
    expect((await get(null, '/api/payment/history')).statusCode).toBe(401);
  });
});
