import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { build, ENGINES } from '../../helpers.ts';
import { call } from '../../auth-helpers.ts';
import { createFixtureUser, type TFixtureUser } from '../../fixtures.ts';

const NOW = new Date('2026-11-23T10:00:00Z');

/* POST /api/{x}/check (spec §7) for the deposit and purchase forms: figures, limits left, field messages; nothing is created. */
describe.each(ENGINES)('payment form check (%s)', (engine) => {
  let ctx: Awaited<ReturnType<typeof build>>;
  let user: TFixtureUser;

  beforeAll(async () => {
    ctx = await build(engine, {}, { now: () => NOW });
    user = await createFixtureUser(ctx.db);
  });
  afterAll(async () => ctx?.close());

  const check = (flow: string, payload: object, locale: 'ru' | 'en' = 'en') => call(ctx.app, `/api/${flow}/check`, { token: user.token, payload, locale });
  const payments = async () => (await ctx.db.query<{ n: number }>('SELECT count(*)::int AS n FROM payments WHERE user_id = $1', [user.id]))[0]!.n;

  it('needs a session; an unknown flow is a missing route; withdraw keeps its own check', async () => {
    expect((await call(ctx.app, '/api/deposit/check', { payload: { ps: 'sandbox-card', currency: 'USD', amount: '10' } })).statusCode).toBe(401);
    const unknown = await check('teleport', { ps: 'sandbox-card', currency: 'USD', amount: '10' });
    expect(unknown.statusCode).toBe(404);
    expect(unknown.json().code).toBe('route_not_found');
    const withdraw = await check('withdraw', { ps: 'sandbox-card', currency: 'USD', amount: '10' });
    expect(withdraw.statusCode).toBe(200);
    expect(withdraw.json()).not.toHaveProperty('quote');
  });

  it('deposit: the fee, the amount credited and the deposit limits left, which an open deposit uses up', async () => {
    const before = await payments();
    const ok = await check('deposit', { ps: 'sandbox-card', currency: 'USD', amount: '100' });
    expect(ok.statusCode).toBe(200);
    expect(ok.json()).toMatchObject({
      ok: true,
      currency: 'USD',
      fields: {},
      message: null,
      quote: null,
      limits: { level: 0, currency: 'USD', per_24h: '1000.00', per_30d: '3000.00', left_24h: '1000.00', left_30d: '3000.00' },
    });
    const { fee, receive } = ok.json();
    expect(Number(fee) + Number(receive)).toBe(100);
    expect(await payments()).toBe(before);
    const opened = await call(ctx.app, '/api/deposit/integration_json', { token: user.token, payload: { ps: 'sandbox-card', currency: 'USD', amount: '250' } });
    expect(opened.statusCode).toBe(200);
    expect((await check('deposit', { ps: 'sandbox-card', currency: 'USD', amount: '100' })).json().limits).toMatchObject({
      left_24h: '750.00',
      left_30d: '2750.00',
    });
  });

  it('deposit: refusals are field messages in the reader language, always 200', async () => {
    const small = await check('deposit', { ps: 'sandbox-card', currency: 'USD', amount: '0.5' });
    expect(small.statusCode).toBe(200);
    expect(small.json()).toMatchObject({ ok: false, fee: null, receive: null, fields: { amount: 'The minimum is 1 USD' } });
    const ru = await check('deposit', { ps: 'sandbox-card', currency: 'USD', amount: '0.5' }, 'ru');
    expect(ru.json().fields.amount).toBe('Минимальная сумма — 1 USD');
    const unknown = await check('deposit', { ps: 'no-such-system', currency: 'USD', amount: '10' });
    expect(unknown.json()).toMatchObject({ ok: false, fields: { ps: 'Choose a payment system from the list.' } });
    const malformed = await check('deposit', { ps: 'sandbox-card', currency: 'USD', amount: 'ten' });
    expect(malformed.statusCode).toBe(400);
    expect(malformed.json().fields).toHaveProperty('amount');
  });

  it('deposit and purchase: with nothing of the limit left, or less than the minimum, the check refuses as the create does', async () => {
    const spender = await createFixtureUser(ctx.db);
    const open = (amount: string) =>
      call(ctx.app, '/api/deposit/integration_json', { token: spender.token, payload: { ps: 'sandbox-card', currency: 'USD', amount } });
    const checkAs = (flow: string, payload: object) => call(ctx.app, `/api/${flow}/check`, { token: spender.token, payload, locale: 'en' });
    // 999.50 of the level's 1000 USD a day used: 0.50 left, below the system's minimum of 1 USD.
    for (const amount of ['500', '499.50']) expect((await open(amount)).statusCode).toBe(200);
    const below = await checkAs('deposit', { ps: 'sandbox-card', currency: 'USD', amount: '1' });
    const created = await open('1');
    expect(created.statusCode).toBe(422);
    expect(created.json().code).toBe('deposit_limit_exceeded');
    expect(below.statusCode).toBe(200);
    // The create's refusal, on the amount field (as the check gives every refusal: its message).
    const refusal = created.json().message;
    expect(below.json()).toMatchObject({ ok: false, message: refusal, fields: { amount: refusal }, limits: { left_24h: '0.50' } });
    // Nothing left.
    expect((await open('0.50')).statusCode).toBe(422);
    expect((await checkAs('deposit', { ps: 'sandbox-card', currency: 'USD', amount: '1' })).json()).toMatchObject({
      ok: false,
      message: created.json().message,
    });
    expect((await open('0.5')).statusCode).toBe(422);
    const purchase = { ps: 'sandbox-card', currency: 'USD', buy: 'BTC', amount: '100' };
    const purchased = await call(ctx.app, '/api/purchase/integration_json', { token: spender.token, payload: purchase });
    expect(purchased.json().code).toBe('deposit_limit_exceeded');
    const checkedPurchase = (await checkAs('purchase', purchase)).json();
    expect(checkedPurchase).toMatchObject({ ok: false, message: purchased.json().message, fields: { amount: purchased.json().message } });
  });

  it('purchase: the quote of what the rest buys is the one the purchase then locks', async () => {
    const body = { ps: 'sandbox-card', currency: 'USD', buy: 'BTC', amount: '100' };
    const checked = await check('purchase', body);
    expect(checked.statusCode).toBe(200);
    // 2.5 % of 100 USD off first; the rest is quoted as exchange quotes it.
    expect(checked.json()).toMatchObject({ ok: true, fee: '2.50', receive: '97.50', quote: { buy: 'BTC' } });
    const opened = await call(ctx.app, '/api/purchase/integration_json', { token: user.token, payload: body });
    expect(opened.statusCode).toBe(200);
    const { quote } = opened.json();
    expect(checked.json().quote).toMatchObject({ receive: quote.receive, rate: quote.rate });
  });

  it('purchase: the currency to buy is asked for, and may not be the one paid with', async () => {
    const missing = await check('purchase', { ps: 'sandbox-card', currency: 'USD', amount: '100' });
    expect(missing.json()).toMatchObject({ ok: false, quote: null, fields: { buy: 'This field is required.' } });
    const same = await check('purchase', { ps: 'sandbox-card', currency: 'USD', buy: 'USD', amount: '100' });
    expect(same.json().ok).toBe(false);
    expect(same.json().fields).toHaveProperty('buy');
    const large = await check('purchase', { ps: 'sandbox-card', currency: 'USD', buy: 'BTC', amount: '999999' });
    expect(large.json()).toMatchObject({ ok: false, fields: { amount: 'The maximum is 5000 USD' } });
  });
});
