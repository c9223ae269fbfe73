import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TDepositPayment, TPaymentSystem, TPurchaseQuote } from '@obmen/shared';
import { build, ENGINES } from '../../helpers.ts';
import { call } from '../../auth-helpers.ts';
import { createFixtureUser, type TFixtureUser } from '../../fixtures.ts';
import { checkLedger } from '../../../src/domains/ledger/invariants.ts';
import { setRate } from '../../../src/domains/rates/service.ts';
import { PURCHASE_QUOTE_TTL_MS } from '../../../src/domains/payments/purchase.ts';

const NOW = new Date('2026-11-23T10:00:00Z');
const FORM = { 'content-type': 'application/x-www-form-urlencoded' };
const CARD = 'action=pay&card_number=4242424242424242&expiry=12%2F30&cvc=123';

describe.each(ENGINES)('purchase: buy a currency by card (%s)', (engine) => {
  let ctx: Awaited<ReturnType<typeof build>>;
  let user: TFixtureUser;
  let clock = NOW;

  beforeAll(async () => {
    ctx = await build(engine, {}, { now: () => clock });
    user = await createFixtureUser(ctx.db);
  });
  afterAll(async () => ctx?.close());

  const balance = async (currency: string) => {
    const [row] = await ctx.db.query<{ balance: string }>(
      "SELECT coalesce((SELECT balance::text FROM ledger_accounts WHERE user_id = $1 AND currency = $2), '0') AS balance",
      [user.id, currency],
    );
    return BigInt(row!.balance);
  };
  const buy = async (payload: object) => {
    const res = await call(ctx.app, '/api/purchase/integration_json', { token: user.token, payload, locale: 'en' });
    expect(res.statusCode, res.body).toBe(200);
    return res.json() as { payment: TDepositPayment; quote: TPurchaseQuote };
  };
  const pay = (payment: TDepositPayment) => ctx.app.inject({ method: 'POST', url: payment.pay_url!, headers: FORM, payload: CARD });
  const check = async (url: string) => (await call(ctx.app, '/api/deposit/integration_json/check', { token: user.token, payload: { url } })).json();

  it('lists the ways to buy a currency; refuses unknown ones', async () => {
    const res = await call(ctx.app, '/api/purchase/ps/BTC', { token: user.token });
    expect(res.statusCode).toBe(200);
    const systems = res.json().systems as TPaymentSystem[];
    expect(systems.map((system) => `${system.id}/${system.currency}`)).toEqual(['sandbox-card/RUB', 'sandbox-card/USD', 'sandbox-card/EUR']);
    expect(systems[0]).toMatchObject({ direction: 'purchase', fee_percent: '2.5', locked: false });
    expect((await call(ctx.app, '/api/purchase/ps/XYZ', { token: user.token })).statusCode).toBe(422);
    expect((await call(ctx.app, '/api/purchase/ps/b!', { token: user.token })).statusCode).toBe(404);
    expect((await call(ctx.app, '/api/purchase/ps/BTC')).statusCode).toBe(401);
  });

  it('locks a quote, opens the hosted card page; paid in time, the fiat and the exchange are one ledger transaction at the locked rate', async () => {
    const { payment, quote } = await buy({ ps: 'sandbox-card', currency: 'USD', buy: 'BTC', amount: '100' });
    expect(payment).toMatchObject({ direction: 'purchase', state: 'created', amount: '100.00', fee: '2.50', receive: '97.50' });
    expect(payment.url).toBe(`/purchase/form/sandbox-card/BTC?payment=${payment.id}`);
    expect(quote).toMatchObject({ buy: 'BTC', outcome: null, tolerance_percent: '2' });
    expect(Date.parse(quote.expires_at)).toBe(NOW.getTime() + PURCHASE_QUOTE_TTL_MS);
    const beforeUsd = await balance('USD');
    const beforeBtc = await balance('BTC');
    const paid = await pay(payment);
    expect(paid.statusCode).toBe(303);
    expect(paid.headers.location).toBe(payment.url);
    const checked = await check(payment.url);
    expect(checked.payment).toMatchObject({ state: 'credited', reason: null });
    expect(checked.quote).toMatchObject({ outcome: 'exchanged', final_receive: quote.receive, final_rate: quote.rate });
    expect(await balance('USD')).toBe(beforeUsd);
    expect((await balance('BTC')) - beforeBtc).toBe(BigInt(quote.receive.replace('.', '')));
    const [posted] = await ctx.db.query<{ n: number; kinds: string }>(
      `SELECT count(*)::int AS n, string_agg(DISTINCT t.kind, ',') AS kinds FROM ledger_transactions t JOIN payments p ON p.ledger_transaction_id = t.id WHERE p.public_id = $1`,
      [payment.id],
    );
    expect(posted).toEqual({ n: 1, kinds: 'purchase' });
    expect((await checkLedger(ctx.db)).violations).toEqual([]);
  });

  it('paid after the quote expired: re-quoted within the tolerance, or the fiat kept; the check says which', async () => {
    const requoted = await buy({ ps: 'sandbox-card', currency: 'EUR', buy: 'ETH', amount: '200' });
    clock = new Date(NOW.getTime() + PURCHASE_QUOTE_TTL_MS + 1000);
    await pay(requoted.payment);
    const first = await check(requoted.payment.url);
    expect(first.payment).toMatchObject({ state: 'credited', reason: 'purchase.requoted' });
    expect(first.quote).toMatchObject({ outcome: 'requoted', final_receive: requoted.quote.receive });

    clock = NOW;
    const kept = await buy({ ps: 'sandbox-card', currency: 'RUB', buy: 'TON', amount: '10000' });
    // The market moved against the buyer by far more than the tolerance before the payment came.
    const [pair] = await ctx.db.query<{ rate: string }>(`SELECT rate::text AS rate FROM rates WHERE src = 'RUB' AND dst = 'TON'`);
    await setRate(ctx.db, { src: 'RUB', dst: 'TON', rate: (Number(pair!.rate) / 2).toPrecision(8) }, new Date());
    clock = new Date(NOW.getTime() + PURCHASE_QUOTE_TTL_MS + 1000);
    const beforeRub = await balance('RUB');
    const beforeTon = await balance('TON');
    await pay(kept.payment);
    const second = await check(kept.payment.url);
    expect(second.payment).toMatchObject({ state: 'credited', reason: 'purchase.kept_fiat' });
    expect(second.quote).toMatchObject({ outcome: 'kept_fiat', final_receive: null });
    expect((await balance('RUB')) - beforeRub).toBe(975_000n);
    expect(await balance('TON')).toBe(beforeTon);
    expect((await checkLedger(ctx.db)).violations).toEqual([]);
  });

  it('accepts the minimum each way to buy states; below it, refused with that minimum', async () => {
    const systems = (await call(ctx.app, '/api/purchase/ps/BTC', { token: user.token })).json().systems as TPaymentSystem[];
    expect(systems.length).toBeGreaterThan(0);
    for (const system of systems) {
      const { payment } = await buy({ ps: system.id, currency: system.currency, buy: 'BTC', amount: system.min });
      expect(payment.amount).toBe(system.min);
      const below = (Number(system.min) - 0.01).toFixed(2);
      const res = await call(ctx.app, '/api/purchase/integration_json', {
        token: user.token,
        payload: { ps: system.id, currency: system.currency, buy: 'BTC', amount: below },
        locale: 'en',
      });
      expect(res.statusCode, below).toBe(422);
      expect(res.json()).toMatchObject({ code: 'amount_too_small', fields: { amount: expect.any(String) } });
      expect(res.json().message).toContain(system.min.replace(/\.00$/, ''));
    }
  });

  it('refuses bad input field by field and opens nothing', async () => {
    const [{ n: before }] = (await ctx.db.query<{ n: number }>(`SELECT count(*)::int AS n FROM payments WHERE direction = 'purchase'`)) as [{ n: number }];
    const cases: Array<[object, string, number]> = [
      [{ ps: 'sandbox-card', currency: 'USD', buy: 'USD', amount: '10' }, 'buy', 422],
      [{ ps: 'sandbox-card', currency: 'USD', buy: 'XYZ', amount: '10' }, 'buy', 422],
      [{ ps: 'sandbox-card', currency: 'BTC', buy: 'ETH', amount: '1' }, 'currency', 400],
      [{ ps: 'sandbox-bank', currency: 'USD', buy: 'BTC', amount: '10' }, 'ps', 400],
      [{ ps: 'sandbox-card', currency: 'USD', buy: 'BTC', amount: '0.5' }, 'amount', 422],
      [{ ps: 'sandbox-card', currency: 'USD', buy: 'BTC' }, 'amount', 400],
      [{ currency: 'USD', buy: 'BTC', amount: '10' }, 'ps', 400],
    ];
    for (const [payload, field, status] of cases) {
      const res = await call(ctx.app, '/api/purchase/integration_json', { token: user.token, payload, locale: 'en' });
      expect(res.statusCode, JSON.stringify(payload)).toBe(status);
      expect(Object.keys(res.json().fields ?? {}), JSON.stringify(payload)).toContain(field);
    }
    const [{ n: after }] = (await ctx.db.query<{ n: number }>(`SELECT count(*)::int AS n FROM payments WHERE direction = 'purchase'`)) as [{ n: number }];
    expect(after).toBe(before);
    expect(
      (await call(ctx.app, '/api/purchase/integration_json', { payload: { ps: 'sandbox-card', currency: 'USD', buy: 'BTC', amount: '10' } })).statusCode,
    ).toBe(401);
  });

  it('counts against the deposit limits of the verification level: over them, refused and nothing opened', async () => {
    const newcomer = await createFixtureUser(ctx.db); // level 0: 1 000 USD per 24 hours
    const open = (amount: string) =>
      call(ctx.app, '/api/purchase/integration_json', {
        token: newcomer.token,
        locale: 'en',
        payload: { ps: 'sandbox-card', currency: 'USD', buy: 'BTC', amount },
      });
    expect((await open('900')).statusCode).toBe(200);
    const over = await open('200');
    expect(over.statusCode).toBe(422);
    expect(over.json()).toMatchObject({ code: 'deposit_limit_exceeded', fields: { amount: "Above your level's limit" } });
    const rows = await ctx.db.query<{ n: number; quotes: number }>(
      `SELECT count(*)::int AS n, count(q.payment_id)::int AS quotes FROM payments p LEFT JOIN purchases q ON q.payment_id = p.id WHERE p.user_id = $1`,
      [newcomer.id],
    );
    expect(rows[0]).toEqual({ n: 1, quotes: 1 });
  });
});
