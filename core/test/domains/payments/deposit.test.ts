import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WEBHOOK_SIGNATURE_HEADER, type TDepositSystems } from '@obmen/shared';
import { build, ENGINES } from '../../helpers.ts';
import { call } from '../../auth-helpers.ts';
import { createFixtureUser, type TFixtureUser } from '../../fixtures.ts';
import { signWebhook } from '../../../src/inbox/signature.ts';
import { DEPOSIT_LIFETIME_MS, expireDeposits } from '../../../src/domains/payments/deposits.ts';
import { readEvents } from '../../../src/domains/events/service.ts';
import { forgetCurrencies } from '../../../src/domains/currencies/service.ts';
import { checkLedger } from '../../../src/domains/ledger/invariants.ts';

const SECRET = 'test-sandbox-card-secret-0123456789abcdef';
const NOW = new Date('2026-11-23T10:00:00Z');

describe.each(ENGINES)('GET /api/deposit/ps and POST /api/deposit/integration_json (%s)', (engine) => {
  let ctx: Awaited<ReturnType<typeof build>>;
  let user: TFixtureUser;

  beforeAll(async () => {
    ctx = await build(engine, { WEBHOOK_SECRET_SANDBOX_CARD: SECRET }, { now: () => NOW });
    user = await createFixtureUser(ctx.db);
  });
  afterAll(async () => ctx?.close());

  const paymentCount = async () => (await ctx.db.query<{ n: number }>('SELECT count(*)::int AS n FROM payments'))[0]!.n;

  it('lists the systems per enabled currency, named in ru and en, with their terms; signed-out callers get 401', async () => {
    expect((await call(ctx.app, '/api/deposit/ps')).statusCode).toBe(401);
    await ctx.db.query(`UPDATE currencies SET enabled = false WHERE code = 'KZT'`);
    forgetCurrencies(ctx.db);
    const res = await call(ctx.app, '/api/deposit/ps', { token: user.token });
    await ctx.db.query(`UPDATE currencies SET enabled = true WHERE code = 'KZT'`);
    forgetCurrencies(ctx.db);
    expect(res.statusCode).toBe(200);
    const body = res.json() as TDepositSystems;
    expect(body.currencies.map((entry) => entry.currency)).toEqual(['RUB', 'USD', 'EUR', 'UAH', 'BTC', 'ETH', 'USDT', 'USDC', 'TON', 'LTC', 'TRX']);
    const rub = body.currencies.find((entry) => entry.currency === 'RUB')!;
    const russian = (await call(ctx.app, '/api/deposit/ps', { token: user.token, locale: 'ru' })).json() as TDepositSystems;
    expect(russian.currencies.find((entry) => entry.currency === 'RUB')).toMatchObject({ name: 'Российский рубль', logo: expect.any(String) });
    const english = (await call(ctx.app, '/api/deposit/ps', { token: user.token, locale: 'en' })).json() as TDepositSystems;
    expect(english.currencies.find((entry) => entry.currency === 'RUB')).toMatchObject({ name: 'Russian rouble' });
    expect(rub.systems.map((system) => system.id)).toEqual(['sandbox-card', 'sandbox-bank']);
    expect(rub.systems[0]).toEqual({
      id: 'sandbox-card',
      provider: 'sandbox-card',
      direction: 'deposit',
      name: { ru: 'Банковская карта (песочница)', en: 'Bank card (sandbox)' },
      logo: '/image/payments/card.svg',
      currency: 'RUB',
      fee_percent: '1.5',
      fee_fixed: '0.00',
      min: '100.00',
      max: '300000.00',
      level: 0,
      locked: false,
      fields: [],
      confirmations: 0,
    });
    const btc = body.currencies.find((entry) => entry.currency === 'BTC')!;
    expect(btc.systems).toMatchObject([{ id: 'sandbox-chain', min: '0.00010000', confirmations: 2 }]);
  });

  it('creates a deposit in state created, which the signed paid event then credits', async () => {
    const res = await call(ctx.app, '/api/deposit/integration_json', {
      token: user.token,
      payload: { ps: 'sandbox-card', currency: 'RUB', amount: '1500.5' },
    });
    expect(res.statusCode).toBe(200);
    const { payment } = res.json();
    // 1.5% of 1500.50 is 22.5075, rounded up to 22.51.
    expect(payment).toMatchObject({ ps: 'sandbox-card', currency: 'RUB', amount: '1500.50', fee: '22.51', receive: '1477.99', state: 'created' });
    expect(payment.expires_at).toBe(new Date(NOW.getTime() + DEPOSIT_LIFETIME_MS).toISOString());
    const [stored] = await ctx.db.query<{ amount: string; fee: string; user_id: string; system_id: string }>(
      'SELECT amount::text AS amount, fee::text AS fee, user_id::text AS user_id, system_id FROM payments WHERE public_id = $1',
      [payment.id],
    );
    expect(stored).toEqual({ amount: '150050', fee: '2251', user_id: user.id, system_id: 'sandbox-card' });

    const body = JSON.stringify({ id: `evt-${engine}-1`, type: 'payment.paid', payment_id: payment.id, amount: '1500.50', currency: 'RUB' });
    const webhook = await ctx.app.inject({
      method: 'POST',
      url: '/api/payments/webhook/sandbox-card',
      payload: body,
      headers: { 'content-type': 'application/json', [WEBHOOK_SIGNATURE_HEADER]: signWebhook(SECRET, Buffer.from(body), NOW.getTime() / 1000) },
    });
    expect(webhook.json()).toMatchObject({ result: 'credited' });
    const [wallet] = await ctx.db.query<{ balance: string }>(`SELECT balance::text AS balance FROM ledger_accounts WHERE user_id = $1 AND currency = 'RUB'`, [
      user.id,
    ]);
    expect(wallet!.balance).toBe('147799');
    const [fees] = await ctx.db.query<{ total: string }>(`SELECT sum(balance)::text AS total FROM ledger_accounts WHERE kind = 'fees' AND currency = 'RUB'`);
    expect(fees!.total).toBe('2251');
    expect((await checkLedger(ctx.db)).violations).toEqual([]);
  });

  it('each move of a deposit is a live event for its user: pending, credited (with the wallets), declined, expired', async () => {
    const owner = await createFixtureUser(ctx.db);
    const events = async () => {
      const replay = await readEvents(ctx.db, owner.id, 0);
      return replay.kind === 'events' ? replay.events.map((event) => ({ type: event.type, payload: event.payload })) : [];
    };
    const open = async () =>
      (await call(ctx.app, '/api/deposit/integration_json', { token: owner.token, payload: { ps: 'sandbox-card', currency: 'RUB', amount: '500' } })).json()
        .payment.id as string;
    const hook = (id: string, type: string) => {
      const body = JSON.stringify({ id: `evt-${engine}-${id}-${type}`, type, payment_id: id, amount: '500.00', currency: 'RUB' });
      return ctx.app.inject({
        method: 'POST',
        url: '/api/payments/webhook/sandbox-card',
        payload: body,
        headers: { 'content-type': 'application/json', [WEBHOOK_SIGNATURE_HEADER]: signWebhook(SECRET, Buffer.from(body), NOW.getTime() / 1000) },
      });
    };
    const paid = await open();
    // Opening one is the user's own answer: nothing to push.
    expect(await events()).toEqual([]);
    await hook(paid, 'payment.pending');
    await hook(paid, 'payment.paid');
    const declined = await open();
    await hook(declined, 'payment.declined');
    const left = await open();
    const untouched = await open();
    await hook(untouched, 'payment.pending');
    expect(await expireDeposits(ctx.db, new Date(NOW.getTime() + DEPOSIT_LIFETIME_MS))).toBeGreaterThanOrEqual(1);
    expect(await events()).toEqual([
      { type: 'payment', payload: { id: paid, state: 'pending' } },
      { type: 'wallets', payload: null },
      { type: 'payment', payload: { id: paid, state: 'credited' } },
      { type: 'payment', payload: { id: declined, state: 'declined' } },
      { type: 'payment', payload: { id: untouched, state: 'pending' } },
      // The pending one is left for the provider's final word; the one never started expires.
      { type: 'payment', payload: { id: left, state: 'expired' } },
    ]);
  });

  it("refuses a deposit over the verification level's limits, with what is left shown; an expired one no longer counts", async () => {
    const newcomer = await createFixtureUser(ctx.db); // level 0: 1 000 USD per 24 hours, 3 000 per 30 days
    const open = (amount: string, currency = 'USD') =>
      call(ctx.app, '/api/deposit/integration_json', { token: newcomer.token, locale: 'en', payload: { ps: 'sandbox-card', currency, amount } });
    expect((await open('900')).statusCode).toBe(200);
    const before = await paymentCount();
    const over = await open('200');
    expect(over.statusCode).toBe(422);
    expect(over.json()).toMatchObject({
      code: 'deposit_limit_exceeded',
      message: 'Over the limit of your verification level: 100 USD left for 24 hours (limit 1000 USD).',
      fields: { amount: "Above your level's limit" },
    });
    // Another currency counts at the mid rate: 20 000 RUB is far over 100 USD.
    expect((await open('20000', 'RUB')).json().code).toBe('deposit_limit_exceeded');
    expect(await paymentCount()).toBe(before);
    // Unpaid in time: expired, it holds nothing of the limit.
    expect(await expireDeposits(ctx.db, new Date(NOW.getTime() + DEPOSIT_LIFETIME_MS))).toBeGreaterThan(0);
    expect((await open('1000')).statusCode).toBe(200);
    // Identity proven (level 1): 50 000 USD per 24 hours.
    await ctx.db.query('UPDATE users SET verification_level = 1 WHERE id = $1', [newcomer.id]);
    expect((await open('4000')).statusCode).toBe(200);
  });

  it('refuses bad input field by field, in the caller language, and creates nothing', async () => {
    const before = await paymentCount();
    // 422: the money refusals' status (an unknown or disabled currency, a non-positive amount).
    const cases: Array<[object, string, number]> = [
      [{ ps: 'sandbox-card', currency: 'BTC', amount: '1' }, 'currency', 400],
      [{ ps: 'sandbox-card', currency: 'XXX', amount: '1' }, 'currency', 422],
      [{ ps: 'nobody', currency: 'USD', amount: '1' }, 'ps', 400],
      [{ ps: 'sandbox-card', currency: 'USD', amount: '0' }, 'amount', 422],
      [{ ps: 'sandbox-card', currency: 'USD', amount: '1.001' }, 'amount', 400],
      [{ ps: 'sandbox-card', currency: 'USD', amount: 'ten' }, 'amount', 400],
      [{ ps: 'sandbox-card', currency: 'USD' }, 'amount', 400],
      [{ ps: 'Sandbox Card!', currency: 'USD', amount: '1' }, 'ps', 400],
      [{ ps: 'sandbox-card', currency: 'USD', amount: '0.99' }, 'amount', 422],
      [{ ps: 'sandbox-card', currency: 'USD', amount: '5000.01' }, 'amount', 422],
    ];
    for (const [payload, field, status] of cases) {
      const en = await call(ctx.app, '/api/deposit/integration_json', { token: user.token, payload, locale: 'en' });
      expect(en.statusCode, JSON.stringify(payload)).toBe(status);
      expect(Object.keys(en.json().fields ?? {}), JSON.stringify(payload)).toContain(field);
      const ru = await call(ctx.app, '/api/deposit/integration_json', { token: user.token, payload, locale: 'ru' });
      expect(ru.json().message).not.toBe(en.json().message);
    }
    const unsupported = await call(ctx.app, '/api/deposit/integration_json', {
      token: user.token,
      locale: 'en',
      payload: { ps: 'sandbox-card', currency: 'BTC', amount: '1' },
    });
    expect(unsupported.json().fields.currency).toBe('This payment system does not take this currency.');
    expect(await paymentCount()).toBe(before);
    expect((await call(ctx.app, '/api/deposit/integration_json', { payload: { ps: 'sandbox-card', currency: 'USD', amount: '1' } })).statusCode).toBe(401);
  });

  it('counts new deposits against the hourly limit, not the chain address asked for again', async () => {
    const other = await createFixtureUser(ctx.db);
    const open = (payload: object) => call(ctx.app, '/api/deposit/integration_json', { token: other.token, payload });
    for (let i = 0; i < 35; i++) expect((await open({ ps: 'sandbox-chain', currency: 'BTC' })).statusCode).toBe(200);
    for (let i = 0; i < 30; i++) expect((await open({ ps: 'sandbox-card', currency: 'USD', amount: '10' })).statusCode).toBe(200);
    expect((await open({ ps: 'sandbox-card', currency: 'USD', amount: '10' })).statusCode).toBe(429);
    expect((await open({ ps: 'sandbox-chain', currency: 'BTC' })).statusCode).toBe(200);
  });
});
