import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WEBHOOK_SIGNATURE_HEADER, type TCard, type TCardCatalogue, type TCardDetails } from '@obmen/shared';
import { build, ENGINES, testConfig } from '../../helpers.ts';
import { makeCardCommands } from '../../../src/cli/cards.ts';
import { call } from '../../auth-helpers.ts';
import { createFixtureUser, fund, type TFixtureUser } from '../../fixtures.ts';
import { signWebhook } from '../../../src/inbox/signature.ts';
import { hashPassword } from '../../../src/domains/auth/passwords.ts';
import { hotp, newTotpSecret, totpStep } from '../../../src/domains/security/totp.ts';
import { enrolSoftPasskey, softSecondFactor } from '../../passkey-authenticator.ts';
import { passesLuhn, SANDBOX_BINS, SANDBOX_ISSUE_DELAY_MS, SANDBOX_SHIP_DELAY_MS } from '../../../src/providers/sandbox/issuer.ts';
import { checkLedger } from '../../../src/domains/ledger/invariants.ts';
import { readEvents } from '../../../src/domains/events/service.ts';
import { CARD_OVERRIDES, CARD_SECRET, cardStatus, makeProduct, placeOrder, post, sandboxOf, verifyUser, walletMinor, type TCtx } from './helpers.ts';
import { REFUSED_SAMPLE_SIZE } from '../../../src/inbox/refusals.ts';
import { RATE_LIMITS } from '../../../src/rate-limit.ts';

const NOW = new Date('2026-11-23T10:00:00Z');
const PASSWORD = 'card-owner-password-1';

describe.each(ENGINES)('cards: catalogue, orders, the sandbox issuer, my cards (%s)', (engine) => {
  let ctx: TCtx;
  let user: TFixtureUser;
  let other: TFixtureUser;
  let clock = NOW;
  let issuer: ReturnType<typeof sandboxOf>;

  beforeAll(async () => {
    ctx = await build(engine, CARD_OVERRIDES, { now: () => clock });
    issuer = sandboxOf(ctx, CARD_OVERRIDES);
    user = await createFixtureUser(ctx.db);
    other = await createFixtureUser(ctx.db);
    await verifyUser(ctx.db, user.id);
    await verifyUser(ctx.db, other.id);
    await ctx.db.query('UPDATE users SET password_hash = $2 WHERE id = $1', [user.id, await hashPassword(PASSWORD)]);
    await makeProduct(ctx.db, { id: 'free-virtual' });
    await makeProduct(ctx.db, { id: 'free-plastic', kind: 'physical', delivery_days: '5' });
    await fund(ctx.db, user.id, 'USD', 100_00n);
  });
  afterAll(async () => ctx?.close());

  /** An issued, active virtual card of `user`, the clock moved past the sandbox's steps. */
  async function activeCard(name = 'IVAN PETROV'): Promise<string> {
    const order = await placeOrder(ctx, user.token, { product: 'free-virtual', currency: 'USD', name_on_card: name });
    expect((await post(ctx, '/api/card/order/confirm', user.token, { card: order.id })).statusCode).toBe(200);
    await issuer.advance(clock);
    clock = new Date(clock.getTime() + SANDBOX_ISSUE_DELAY_MS);
    await issuer.advance(clock);
    expect(await cardStatus(ctx.db, order.id)).toBe('active');
    return order.id;
  }

  it('GET /api/card lists the enabled products with fees, limits and delivery, and what ordering needs', async () => {
    expect((await call(ctx.app, '/api/card')).statusCode).toBe(401);
    const stranger = await createFixtureUser(ctx.db);
    const res = await call(ctx.app, '/api/card', { token: stranger.token });
    expect(res.statusCode).toBe(200);
    const body = res.json() as TCardCatalogue;
    expect(body.requirements).toEqual({ verification_level: 1, user_level: 0, met: false });
    const virtual = body.products.find((p) => p.id === 'virtual')!;
    expect(virtual).toMatchObject({
      kind: 'virtual',
      name: { ru: 'Виртуальная карта', en: 'Virtual card' },
      currencies: ['USD', 'EUR'],
      fee_currency: 'USD',
      issue_fee: '5.00',
      monthly_fee: '1.00',
      delivery_days: null,
      image: '/image/cards/virtual.svg',
    });
    expect(virtual.limits).toEqual([
      { currency: 'USD', day: '5000.00', month: '20000.00' },
      { currency: 'EUR', day: '4500.00', month: '18000.00' },
    ]);
    expect(body.products.find((p) => p.id === 'physical')).toMatchObject({ kind: 'physical', delivery_days: 10, issue_fee: '15.00' });
    // A disabled product leaves the catalogue.
    await ctx.db.query(`UPDATE card_products SET enabled = false WHERE id = 'physical'`);
    const after = (await call(ctx.app, '/api/card', { token: user.token })).json() as TCardCatalogue;
    await ctx.db.query(`UPDATE card_products SET enabled = true WHERE id = 'physical'`);
    expect(after.products.map((p) => p.id)).not.toContain('physical');
    expect(after.requirements.met).toBe(true);
  });

  it('refuses an order without verification, a Cyrillic name, an unknown product or currency, a plastic card without address; nothing is created', async () => {
    const count = async () => (await ctx.db.query<{ n: number }>('SELECT count(*)::int AS n FROM cards'))[0]!.n;
    const before = await count();
    const unverified = await createFixtureUser(ctx.db);
    const refused = await post(
      ctx,
      '/api/card/order',
      unverified.token,
      { product: 'free-virtual', currency: 'USD', name_on_card: 'IVAN PETROV' },
      { locale: 'en' },
    );
    expect(refused.statusCode).toBe(403);
    expect(refused.json()).toMatchObject({ code: 'card_verification_required', message: 'Verify your identity (level 1) to order a card' });

    const cases: Array<[object, string, string]> = [
      [{ product: 'free-virtual', currency: 'USD', name_on_card: 'Иван Петров' }, 'name_on_card', 'Напишите имя латинскими буквами, как в загранпаспорте'],
      [{ product: 'free-virtual', currency: 'USD', name_on_card: 'I' }, 'name_on_card', 'Имя на карте — от 2 до 26 символов'],
      [{ product: 'free-virtual', currency: 'USD', name_on_card: '' }, 'name_on_card', 'Заполните это поле.'],
      [{ product: 'nothing-here', currency: 'USD', name_on_card: 'IVAN PETROV' }, 'product', 'Выберите карту из списка'],
      [{ product: 'free-virtual', currency: 'RUB', name_on_card: 'IVAN PETROV' }, 'currency', 'Эта карта не выпускается в такой валюте'],
      [{ product: 'free-plastic', currency: 'USD', name_on_card: 'IVAN PETROV', address_city: 'Riga' }, 'address_line', 'Заполните это поле.'],
    ];
    for (const [payload, field, message] of cases) {
      const res = await post(ctx, '/api/card/order', user.token, payload, { locale: 'ru' });
      expect(res.statusCode, JSON.stringify(payload)).toBe(400);
      expect(res.json().fields?.[field], JSON.stringify(res.json())).toBe(message);
    }
    expect(await count()).toBe(before);
  });

  const held = async (userId: string, currency = 'USD') => {
    const [row] = await ctx.db.query<{ balance: string }>(
      `SELECT balance::text AS balance FROM ledger_accounts WHERE kind = 'hold' AND holder_id = $1 AND currency = $2`,
      [userId, currency],
    );
    return BigInt(row?.balance ?? '0');
  };
  const cardFees = async () => {
    const [row] = await ctx.db.query<{ total: string }>(
      `SELECT coalesce(sum(balance), 0)::text AS total FROM ledger_accounts WHERE kind = 'card_fees' AND currency = 'USD'`,
    );
    return BigInt(row!.total);
  };

  it('the issue fee: held when placed, captured into card fees on confirm, released on cancel; confirm after cancel and cancel after confirm are refused', async () => {
    const buyer = await createFixtureUser(ctx.db);
    await verifyUser(ctx.db, buyer.id);
    await fund(ctx.db, buyer.id, 'USD', 12_00n);
    const fees = await cardFees();

    const placed = await post(ctx, '/api/card/order', buyer.token, { product: 'virtual', currency: 'EUR', name_on_card: 'IVAN PETROV' }, { locale: 'en' });
    expect(placed.statusCode, placed.body).toBe(200);
    expect(placed.json().message).toBe('Order placed: 5.00 USD is held for the issue fee');
    expect(placed.json().wallets.find((w: { currency: string }) => w.currency === 'USD').balance).toBe('7.00');
    const order = placed.json().order;
    expect(order).toMatchObject({ status: 'placed', issue_fee: '5.00', fee_currency: 'USD', monthly_fee: '1.00' });
    expect([await walletMinor(ctx.db, buyer.id, 'USD'), await held(buyer.id)]).toEqual([700n, 500n]);

    // Not enough left for a second fee of 5: refused, nothing created or held.
    const second = await placeOrder(ctx, buyer.token, { product: 'virtual', currency: 'USD', name_on_card: 'IVAN PETROV' }).catch(() => null);
    expect(second).not.toBeNull();
    const third = await post(ctx, '/api/card/order', buyer.token, { product: 'virtual', currency: 'USD', name_on_card: 'IVAN PETROV' }, { locale: 'en' });
    expect(third.statusCode).toBe(422);
    expect(third.json()).toMatchObject({ code: 'insufficient_funds' });
    expect([await walletMinor(ctx.db, buyer.id, 'USD'), await held(buyer.id)]).toEqual([200n, 1000n]);

    const cancelled = await post(ctx, '/api/card/order/cancel', buyer.token, { card: second!.id }, { locale: 'en' });
    expect(cancelled.json()).toMatchObject({ message: 'Order cancelled: 5.00 USD is back in your wallet', order: { status: 'cancelled', can_confirm: false } });
    expect([await walletMinor(ctx.db, buyer.id, 'USD'), await held(buyer.id)]).toEqual([700n, 500n]);
    const late = await post(ctx, '/api/card/order/confirm', buyer.token, { card: second!.id }, { locale: 'en' });
    expect(late.statusCode).toBe(409);
    expect(late.json()).toMatchObject({ code: 'card_state', message: 'This order was cancelled: it can no longer be confirmed' });
    expect((await post(ctx, '/api/card/order/cancel', buyer.token, { card: second!.id })).statusCode).toBe(409);

    const confirmed = await post(ctx, '/api/card/order/confirm', buyer.token, { card: order.id }, { locale: 'en' });
    expect(confirmed.json().message).toBe('Order confirmed: the issue fee of 5.00 USD is paid and the card is being made');
    expect([await walletMinor(ctx.db, buyer.id, 'USD'), await held(buyer.id), (await cardFees()) - fees]).toEqual([700n, 0n, 500n]);
    const tooLate = await post(ctx, '/api/card/order/cancel', buyer.token, { card: order.id }, { locale: 'en' });
    expect(tooLate.json()).toMatchObject({ code: 'card_state', message: 'This order is already with the issuer: it can no longer be cancelled' });
    expect((await post(ctx, '/api/card/order/confirm', buyer.token, { card: order.id })).statusCode).toBe(409);
    // Once issued, still no cancel; the fee stays charged.
    await issuer.advance(clock);
    clock = new Date(clock.getTime() + SANDBOX_ISSUE_DELAY_MS);
    await issuer.advance(clock);
    expect(await cardStatus(ctx.db, order.id)).toBe('active');
    expect((await post(ctx, '/api/card/order/cancel', buyer.token, { card: order.id })).statusCode).toBe(409);
    expect([await walletMinor(ctx.db, buyer.id, 'USD'), (await cardFees()) - fees]).toEqual([700n, 500n]);

    const list = (await call(ctx.app, '/api/card/order', { token: buyer.token })).json().orders;
    expect(list.map((o: { status: string }) => o.status)).toEqual(['cancelled', 'active']);
    expect((await checkLedger(ctx.db)).violations).toEqual([]);
  });

  it('an order the issuer fails is refunded exactly once; at most three orders wait for confirmation', async () => {
    const buyer = await createFixtureUser(ctx.db);
    await verifyUser(ctx.db, buyer.id);
    await fund(ctx.db, buyer.id, 'USD', 20_00n);
    const order = await placeOrder(ctx, buyer.token, { product: 'virtual', currency: 'USD', name_on_card: 'DECLINE ME' });
    await post(ctx, '/api/card/order/confirm', buyer.token, { card: order.id });
    expect(await walletMinor(ctx.db, buyer.id, 'USD')).toBe(15_00n);
    expect(await issuer.advance(clock)).toEqual(['applied', 'applied']);
    const failed = (await call(ctx.app, `/api/card/order/${order.id}`, { token: buyer.token })).json().order;
    expect(failed).toMatchObject({ status: 'failed', reason: 'cards.failed_by_issuer' });
    expect(await walletMinor(ctx.db, buyer.id, 'USD')).toBe(20_00n);

    for (let i = 0; i < 3; i++) await placeOrder(ctx, buyer.token, { product: 'virtual', currency: 'USD', name_on_card: 'IVAN PETROV' });
    const fourth = await post(ctx, '/api/card/order', buyer.token, { product: 'virtual', currency: 'USD', name_on_card: 'IVAN PETROV' });
    expect(fourth.statusCode).toBe(409);
    expect(await walletMinor(ctx.db, buyer.id, 'USD')).toBe(5_00n);
    expect((await checkLedger(ctx.db)).violations).toEqual([]);
  });

  it('a virtual card: placed, confirmed, accepted, issued and activated by the sandbox through signed callbacks', async () => {
    const order = await placeOrder(ctx, user.token, { product: 'free-virtual', currency: 'USD', name_on_card: ' ivan   petrov ' });
    expect(order).toMatchObject({ status: 'placed', name_on_card: 'IVAN PETROV', can_confirm: true, can_cancel: true, address: null });
    const confirmed = await post(ctx, '/api/card/order/confirm', user.token, { card: order.id });
    expect(confirmed.json().order).toMatchObject({ status: 'confirmed', can_cancel: false });
    // Not a card yet: my cards do not list it, its details are a 404.
    expect(((await call(ctx.app, '/api/card/my', { token: user.token })).json().cards as TCard[]).map((c) => c.id)).not.toContain(order.id);
    expect((await call(ctx.app, `/api/card/details/${order.id}`, { token: user.token })).statusCode).toBe(404);

    expect(await issuer.advance(clock)).toEqual(['applied']);
    expect(await cardStatus(ctx.db, order.id)).toBe('issuing');
    expect(await issuer.advance(clock)).toEqual([]);
    clock = new Date(clock.getTime() + SANDBOX_ISSUE_DELAY_MS);
    expect(await issuer.advance(clock)).toEqual(['applied', 'applied']);

    const mine = (await call(ctx.app, '/api/card/my', { token: user.token })).json().cards as TCard[];
    const card = mine.find((c) => c.id === order.id)!;
    expect(card).toMatchObject({ status: 'active', currency: 'USD', balance: '0.00', kind: 'virtual' });
    expect(card.masked).toMatch(/^4000 1\d•• •••• \d{4}$/);
    expect(card.expiry).toBe('11/29');
    const stored = await ctx.db.query<{ pan_enc: Buffer; bin: string }>('SELECT pan_enc, bin FROM card_sandbox_orders WHERE order_ref = $1', [order.id]);
    // Sealed at rest: the stored bytes do not contain the number's digits in clear.
    expect(Buffer.from(stored[0]!.pan_enc).toString('latin1')).not.toMatch(/\d{12}/);
    expect(SANDBOX_BINS).toContain(stored[0]!.bin as (typeof SANDBOX_BINS)[number]);

    const details = (await call(ctx.app, `/api/card/details/${order.id}`, { token: user.token })).json().card as TCardDetails;
    expect(details.activity.map((a) => a.kind)).toEqual(['activated', 'issued', 'issuing', 'confirmed', 'placed']);
    expect(details.can).toMatchObject({ reveal: true, freeze: true, unfreeze: false, close: true, topup: true, withdraw: false });
    expect(details.limits).toBeNull();
    // Each step reached the user's browsers live (a `card` event in the step's transaction).
    const replay = await readEvents(ctx.db, user.id, 0);
    const steps = replay.kind === 'events' ? replay.events.filter((e) => e.type === 'card' && (e.payload as { id: string }).id === order.id) : [];
    expect(steps.map((e) => (e.payload as { state: string }).state)).toEqual(['placed', 'confirmed', 'issuing', 'issued', 'activated']);
  });

  it('a plastic card is shipped and delivered over time, then active; events out of order move nothing', async () => {
    const order = await placeOrder(ctx, user.token, {
      product: 'free-plastic',
      currency: 'EUR',
      name_on_card: "ANNA-MARIA O'NEIL",
      address_country: 'Latvia',
      address_city: 'Riga',
      address_postcode: 'LV-1010',
      address_line: 'Brivibas iela 1',
    });
    expect(order.address).toEqual({ country: 'Latvia', city: 'Riga', postcode: 'LV-1010', line: 'Brivibas iela 1' });
    await post(ctx, '/api/card/order/confirm', user.token, { card: order.id });
    await issuer.advance(clock);
    clock = new Date(clock.getTime() + SANDBOX_ISSUE_DELAY_MS);
    await issuer.advance(clock);
    expect(await cardStatus(ctx.db, order.id)).toBe('issued');
    // An activation before delivery is refused by the state machine, and kept in the inbox.
    const early = JSON.stringify({ id: `early-${engine}`, type: 'card.activated', order: order.id });
    const res = await ctx.app.inject({
      method: 'POST',
      url: '/api/card/issuer/sandbox/callback',
      payload: early,
      headers: { 'content-type': 'application/json', [WEBHOOK_SIGNATURE_HEADER]: signWebhook(CARD_SECRET, Buffer.from(early), clock.getTime() / 1000) },
    });
    expect(res.json()).toMatchObject({ result: 'wrong_state' });
    clock = new Date(clock.getTime() + SANDBOX_SHIP_DELAY_MS);
    expect(await issuer.advance(clock)).toEqual(['applied']);
    expect(await cardStatus(ctx.db, order.id)).toBe('shipped');
    clock = new Date(clock.getTime() + 4 * 24 * 3600_000);
    expect(await issuer.advance(clock)).toEqual(['applied', 'applied']);
    expect(await cardStatus(ctx.db, order.id)).toBe('active');
  });

  it('issuer callbacks: forged, stale or duplicate deliveries move nothing; an unknown issuer is a 404', async () => {
    const id = await activeCard();
    const event = JSON.stringify({ id: `frozen-${engine}`, type: 'order.failed', order: id, reason: 'x' });
    const send = (signature: string, issuerName = 'sandbox') =>
      ctx.app.inject({
        method: 'POST',
        url: `/api/card/issuer/${issuerName}/callback`,
        payload: event,
        headers: { 'content-type': 'application/json', [WEBHOOK_SIGNATURE_HEADER]: signature },
      });
    const unix = clock.getTime() / 1000;
    expect((await send(signWebhook('another-secret-of-enough-length-000000', Buffer.from(event), unix))).statusCode).toBe(401);
    expect((await send(signWebhook(CARD_SECRET, Buffer.from(event), unix - 301))).statusCode).toBe(401);
    expect((await send(signWebhook(CARD_SECRET, Buffer.from(event), unix), 'acme')).json()).toMatchObject({ code: 'card_issuer_not_found' });
    expect((await send(signWebhook(CARD_SECRET, Buffer.from(event), unix))).json()).toMatchObject({ result: 'wrong_state' });
    expect((await send(signWebhook(CARD_SECRET, Buffer.from(event), unix))).json()).toMatchObject({ result: 'duplicate' });
    expect(await cardStatus(ctx.db, id)).toBe('active');
    const results = await ctx.db.query<{ result: string }>('SELECT result FROM card_issuer_callbacks ORDER BY id DESC LIMIT 2');
    expect(results.map((r) => r.result)).toEqual(['duplicate', 'wrong_state']);
    // The forged and the stale one were refused before storing: counted and sampled only.
    expect(await ctx.db.query('SELECT 1 FROM card_issuer_callbacks WHERE NOT signature_valid')).toEqual([]);
    const refused = await ctx.db.query<{ reason: string }>(
      `SELECT reason FROM inbox_refused_samples WHERE inbox = 'card_issuer_callbacks' AND source = 'sandbox' AND convert_from(body_head, 'UTF8') = $1 ORDER BY reason`,
      [event],
    );
    expect(refused.map((r) => r.reason)).toEqual(['bad_signature', 'stale']);
  });

  it('a flood of forged issuer callbacks stores nothing but a counter and the bounded sample; past its limit an address gets 429', async () => {
    const rows = async (table: string) => (await ctx.db.query<{ n: number }>(`SELECT count(*)::int AS n FROM ${table}`))[0]!.n;
    const before = await rows('card_issuer_callbacks');
    const forged = (i: number, from: string) => {
      const body = JSON.stringify({ id: `forged-${i}`, type: 'order.failed', order: '00000000-0000-4000-8000-000000000000', reason: 'x' });
      return ctx.app.inject({
        method: 'POST',
        url: '/api/card/issuer/sandbox/callback',
        remoteAddress: from,
        payload: body,
        headers: {
          'content-type': 'application/json',
          [WEBHOOK_SIGNATURE_HEADER]: signWebhook('another-secret-of-enough-length-000000', Buffer.from(body), Math.floor(clock.getTime() / 1000)),
        },
      });
    };
    for (let start = 0; start < 1_000; start += 50) {
      const answers = await Promise.all(Array.from({ length: 50 }, (_, i) => forged(start + i, `10.9.${(start + i) % 50}.1`)));
      expect(answers.map((res) => res.statusCode)).toEqual(Array(50).fill(401));
    }
    expect(await rows('card_issuer_callbacks')).toBe(before);
    const [sample] = await ctx.db.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM inbox_refused_samples WHERE inbox = 'card_issuer_callbacks' AND reason = 'bad_signature'`,
    );
    expect(sample!.n).toBe(REFUSED_SAMPLE_SIZE);
    const statuses: number[] = [];
    for (let i = 0; i <= RATE_LIMITS.webhook_refused_ip.max; i++) statuses.push((await forged(i, '203.0.113.77')).statusCode);
    expect(statuses).toEqual([...Array(RATE_LIMITS.webhook_refused_ip.max).fill(401), 429]);
  });

  it("another user's card or order answers exactly like an unknown one", async () => {
    const id = await activeCard();
    const order = await placeOrder(ctx, user.token, { product: 'free-virtual', currency: 'USD', name_on_card: 'IVAN PETROV' });
    const unknown = '00000000-0000-4000-8000-000000000000';
    for (const target of [id, order.id, unknown]) {
      const answers = [
        await call(ctx.app, `/api/card/details/${target}`, { token: other.token, locale: 'en' }),
        await call(ctx.app, `/api/card/order/${target}`, { token: other.token, locale: 'en' }),
        await post(ctx, '/api/card/order/confirm', other.token, { card: target }, { locale: 'en' }),
        await post(ctx, '/api/card/order/cancel', other.token, { card: target }, { locale: 'en' }),
        await post(ctx, '/api/card/freeze', other.token, { card: target }, { locale: 'en' }),
        await post(ctx, '/api/card/topup', other.token, { card: target, amount: '1' }, { locale: 'en' }),
        await call(ctx.app, '/api/card/reveal', { token: other.token, payload: { card: target, password: PASSWORD }, locale: 'en' }),
      ];
      for (const res of answers) {
        expect(res.statusCode).toBe(404);
        expect(res.json()).toEqual({ status: 'error', code: 'card_not_found', message: 'This card was not found' });
      }
    }
    expect((await call(ctx.app, '/api/card/details/not-a-uuid', { token: user.token })).json().code).toBe('card_not_found');
    expect(await cardStatus(ctx.db, order.id)).toBe('placed');
  });

  it('reveal: a wrong password is refused and recorded; the right one shows a Luhn-valid number once, never cached', async () => {
    const id = await activeCard();
    const wrong = await call(ctx.app, '/api/card/reveal', { token: user.token, payload: { card: id, password: 'not-it' }, locale: 'en' });
    expect(wrong.statusCode).toBe(400);
    expect(wrong.json()).toMatchObject({ code: 'card_reveal_refused', fields: { password: 'The password or code is wrong' } });
    expect(wrong.json().pan).toBeUndefined();
    const missing = await call(ctx.app, '/api/card/reveal', { token: user.token, payload: { card: id }, locale: 'en' });
    expect(missing.statusCode).toBe(400);

    const res = await call(ctx.app, '/api/card/reveal', { token: user.token, payload: { card: id, password: PASSWORD } });
    expect(res.statusCode).toBe(200);
    expect(res.headers['cache-control']).toBe('no-store');
    const shown = res.json();
    const digits = shown.pan.replace(/ /g, '');
    expect(passesLuhn(digits)).toBe(true);
    expect(shown.pan).toMatch(/^\d{4} \d{4} \d{4} \d{4}$/);
    expect(shown.cvc).toMatch(/^\d{3}$/);
    expect(shown).toMatchObject({ expiry: '11/29', name_on_card: 'IVAN PETROV', visible_seconds: 60 });
    const details = (await call(ctx.app, `/api/card/details/${id}`, { token: user.token })).json().card as TCardDetails;
    expect(details.masked!.endsWith(digits.slice(-4))).toBe(true);
    expect(details.masked!.replace(/ /g, '').slice(0, 6)).toBe(digits.slice(0, 6));
    expect(details.activity.slice(0, 2).map((a) => a.kind)).toEqual(['revealed', 'reveal_refused']);
    // Nothing of the number is in our own tables.
    const [clear] = await ctx.db.query<{ n: number }>(`SELECT count(*)::int AS n FROM cards WHERE bin || last4 = $1 OR issuer_ref = $2`, [digits, digits]);
    expect(clear!.n).toBe(0);
  });

  it('reveal with a second-factor code: a wrong one is refused, a right one works once; without 2FA a code cannot reveal', async () => {
    const id = await activeCard();
    const noFactor = await call(ctx.app, '/api/card/reveal', { token: user.token, payload: { card: id, code: '123456' }, locale: 'en' });
    expect(noFactor.json()).toMatchObject({ code: 'card_reveal_refused', fields: { code: 'The password or code is wrong' } });
    const secret = newTotpSecret();
    await ctx.db.query('INSERT INTO user_totp (user_id, secret, enabled_at) VALUES ($1, $2, now())', [user.id, secret]);
    try {
      const good = hotp(secret, totpStep(clock.getTime()));
      const bad = good === '000000' ? '000001' : '000000';
      expect((await call(ctx.app, '/api/card/reveal', { token: user.token, payload: { card: id, code: bad } })).statusCode).toBe(400);
      const shown = await call(ctx.app, '/api/card/reveal', { token: user.token, payload: { card: id, code: good } });
      expect(shown.statusCode, shown.body).toBe(200);
      expect(passesLuhn(shown.json().pan.replace(/ /g, ''))).toBe(true);
      // The same code again: spent.
      expect((await call(ctx.app, '/api/card/reveal', { token: user.token, payload: { card: id, code: good } })).statusCode).toBe(400);
    } finally {
      await ctx.db.query('DELETE FROM user_totp WHERE user_id = $1', [user.id]);
    }
    const details = (await call(ctx.app, `/api/card/details/${id}`, { token: user.token })).json().card as TCardDetails;
    expect(details.activity.slice(0, 4).map((a) => a.kind)).toEqual(['reveal_refused', 'revealed', 'reveal_refused', 'reveal_refused']);
  });

  it('reveal with passkeys alone as the second factor: a typed code is refused, an assertion shows the number', async () => {
    const id = await activeCard();
    const send = (url: string, options: { token?: string; payload?: object }) => call(ctx.app, url, options);
    const key = await enrolSoftPasskey(send, user.token);
    try {
      const typed = await call(ctx.app, '/api/card/reveal', { token: user.token, payload: { card: id, code: '123456' } });
      expect(typed.json()).toMatchObject({ code: 'card_reveal_refused' });
      const shown = await call(ctx.app, '/api/card/reveal', {
        token: user.token,
        payload: { card: id, passkey: await softSecondFactor(send, user.token, key) },
      });
      expect(shown.statusCode, shown.body).toBe(200);
      expect(passesLuhn(shown.json().pan.replace(/ /g, ''))).toBe(true);
    } finally {
      await ctx.db.query('DELETE FROM user_passkeys WHERE user_id = $1', [user.id]);
      await ctx.db.query('UPDATE users SET security_changed_at = NULL WHERE id = $1', [user.id]);
    }
  });

  it('freeze and unfreeze; close is final and returns the balance to the wallet', async () => {
    const id = await activeCard();
    const frozen = await post(ctx, '/api/card/freeze', user.token, { card: id }, { locale: 'en' });
    expect(frozen.json().card).toMatchObject({ status: 'frozen', can: { freeze: false, unfreeze: true } });
    expect(frozen.json().message).toMatch(/^Card •• \d{4} is frozen$/);
    expect((await post(ctx, '/api/card/freeze', user.token, { card: id })).json()).toMatchObject({ code: 'card_state' });
    expect((await post(ctx, '/api/card/unfreeze', user.token, { card: id })).json().card.status).toBe('active');
    expect((await post(ctx, '/api/card/unfreeze', user.token, { card: id })).statusCode).toBe(409);

    await post(ctx, '/api/card/topup', user.token, { card: id, amount: '3.50' });
    const wallet = await walletMinor(ctx.db, user.id, 'USD');
    const unconfirmed = await post(ctx, '/api/card/close', user.token, { card: id });
    expect(unconfirmed.statusCode).toBe(400);
    const closed = await post(ctx, '/api/card/close', user.token, { card: id, confirm: true });
    expect(closed.json().card).toMatchObject({ status: 'closed', balance: '0.00', can: { reveal: false, topup: false, close: false } });
    expect(await walletMinor(ctx.db, user.id, 'USD')).toBe(wallet + 350n);
    expect((await post(ctx, '/api/card/unfreeze', user.token, { card: id })).statusCode).toBe(409);
    expect((await post(ctx, '/api/card/close', user.token, { card: id, confirm: true })).json().code).toBe('card_state');
    expect((await call(ctx.app, '/api/card/reveal', { token: user.token, payload: { card: id, password: PASSWORD } })).statusCode).toBe(409);
  });

  it('top up from the wallet and move back through the ledger; above either balance is refused and nothing moves', async () => {
    const id = await activeCard();
    const wallet = await walletMinor(ctx.db, user.id, 'USD');
    const tooMuch = await post(ctx, '/api/card/topup', user.token, { card: id, amount: '100000' }, { locale: 'en' });
    expect(tooMuch.statusCode).toBe(422);
    expect(tooMuch.json()).toMatchObject({ code: 'insufficient_funds', fields: { amount: expect.any(String) } });
    expect(await walletMinor(ctx.db, user.id, 'USD')).toBe(wallet);

    const up = await post(ctx, '/api/card/topup', user.token, { card: id, amount: '20' }, { locale: 'en' });
    expect(up.statusCode, up.body).toBe(200);
    expect(up.json().card).toMatchObject({ balance: '20.00', can: { withdraw: true } });
    expect(up.json().wallets.find((w: { currency: string }) => w.currency === 'USD')).toBeTruthy();
    expect(await walletMinor(ctx.db, user.id, 'USD')).toBe(wallet - 2000n);

    const over = await post(ctx, '/api/card/withdraw', user.token, { card: id, amount: '20.01' });
    expect(over.statusCode).toBe(422);
    expect(over.json().code).toBe('insufficient_funds');
    const back = await post(ctx, '/api/card/withdraw', user.token, { card: id, amount: '7.25' });
    expect(back.json().card.balance).toBe('12.75');
    expect(await walletMinor(ctx.db, user.id, 'USD')).toBe(wallet - 1275n);
    for (const amount of ['0', '-1', '1.001', 'ten']) {
      expect((await post(ctx, '/api/card/topup', user.token, { card: id, amount })).statusCode, amount).toBeGreaterThanOrEqual(400);
    }
    // The same key replays the first answer and moves nothing again.
    const key = crypto.randomUUID();
    await post(ctx, '/api/card/topup', user.token, { card: id, amount: '1' }, { key });
    const replay = await post(ctx, '/api/card/topup', user.token, { card: id, amount: '1' }, { key });
    expect(replay.headers['idempotent-replayed']).toBe('true');
    expect(replay.json().card.balance).toBe('13.75');
    const report = await checkLedger(ctx.db);
    expect(report.violations).toEqual([]);
  });

  it('operator commands: products created disabled, enabled, priced; orders listed and shown; the sandbox issuer advanced', async () => {
    const commands = makeCardCommands(() => testConfig(CARD_OVERRIDES));
    const created = (await commands['cards:product:create']!(ctx.db, [
      'id=cli-plastic',
      'kind=physical',
      'name_ru=Карта',
      'name_en=Card',
      'currencies=USD',
      'fee_currency=USD',
      'issue_fee=0',
      'monthly_fee=0.5',
      'limits=USD:100/1000',
      'delivery_days=7',
    ])) as { enabled: boolean; monthly_fee: string; limits: object };
    expect(created).toMatchObject({ enabled: false, monthly_fee: '50', limits: { USD: { day: '10000', month: '100000' } } });
    const listed = async () => ((await call(ctx.app, '/api/card', { token: user.token })).json() as TCardCatalogue).products.map((p) => p.id);
    expect(await listed()).not.toContain('cli-plastic');
    await commands['cards:product:enable']!(ctx.db, ['id=cli-plastic']);
    expect(await listed()).toContain('cli-plastic');
    expect(await commands['cards:product:price']!(ctx.db, ['id=cli-plastic', 'monthly_fee=0.75'])).toMatchObject({ monthly_fee: '75' });
    await expect(
      commands['cards:product:create']!(ctx.db, ['id=x1', 'kind=metal', 'name_ru=a', 'name_en=a', 'currencies=USD', 'fee_currency=USD']),
    ).rejects.toThrow();
    await expect(commands['cards:product:price']!(ctx.db, ['id=nothing', 'issue_fee=1'])).rejects.toThrow();

    const order = await placeOrder(ctx, user.token, {
      product: 'cli-plastic',
      currency: 'USD',
      name_on_card: 'IVAN PETROV',
      address_country: 'Latvia',
      address_city: 'Riga',
      address_postcode: 'LV-1010',
      address_line: 'Brivibas iela 1',
    });
    await post(ctx, '/api/card/order/confirm', user.token, { card: order.id });
    const orders = (await commands['cards:orders']!(ctx.db, [`account=${user.accountId}`, 'status=confirmed'])) as Array<{ id: string }>;
    expect(orders.map((o) => o.id)).toEqual([order.id]);
    const progress = (await commands['cards:issuer']!(ctx.db, [])) as Array<{ order: string; next_step: string }>;
    expect(progress.find((row) => row.order === order.id)?.next_step).toBe('accept');
    expect(await commands['cards:issuer:advance']!(ctx.db, [`at=${clock.toISOString()}`])).toMatchObject({ delivered: 1 });
    const shown = (await commands['cards:order:show']!(ctx.db, [order.id])) as { order: { status: string }; activity: Array<{ kind: string }> };
    expect(shown.order.status).toBe('issuing');
    expect(shown.activity.map((a) => a.kind)).toEqual(['placed', 'confirmed', 'issuing']);
    expect(((await commands['cards:callbacks']!(ctx.db, ['limit=1'])) as Array<{ result: string }>)[0]!.result).toBe('applied');
    await expect(commands['cards:orders']!(ctx.db, ['status=lost'])).rejects.toThrow(/usage/);
  });
});
