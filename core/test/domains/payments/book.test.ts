import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { build, ENGINES } from '../../helpers.ts';
import { call, mailsTo } from '../../auth-helpers.ts';
import { createFixtureUser, fund, type TFixtureUser } from '../../fixtures.ts';
import { heldBalance } from '../../../src/domains/ledger/holds.ts';
import { newTotpSecret, totpCode } from '../../../src/domains/security/totp.ts';

const PUBLIC_URL = 'https://obmen.test';
const CARD = { card_number: '4111 1111 1111 1111', card_holder: 'IVAN PETROV' };
const OTHER_CARD = { card_number: '5555 5555 5555 4444', card_holder: 'IVAN PETROV' };
const HOUR = 60 * 60_000;

describe.each(ENGINES)('the withdrawal address book (%s)', (engine) => {
  let ctx: Awaited<ReturnType<typeof build>>;
  let at = new Date('2026-11-27T10:00:00Z');
  let ann: TFixtureUser;
  let bob: TFixtureUser;
  let keys = 0;

  beforeAll(async () => {
    ctx = await build(engine, { PUBLIC_URL }, { now: () => at });
    ann = await createFixtureUser(ctx.db);
    bob = await createFixtureUser(ctx.db);
    await ctx.db.query('UPDATE users SET verification_level = 1 WHERE id = ANY ($1::bigint[])', [[ann.id, bob.id]]);
    await fund(ctx.db, ann.id, 'RUB', 10_000_000n);
  });
  afterAll(() => ctx.close());

  const post = (user: TFixtureUser, url: string, payload: object = {}, locale: 'ru' | 'en' = 'en') =>
    call(ctx.app, url, { token: user.token, payload, locale });
  const add = (user: TFixtureUser, card: object, extra: object = {}) =>
    post(user, '/api/withdraw/book', { ps: 'sandbox-card', currency: 'RUB', label: 'My card', ...card, ...extra });
  const withdraw = (card: object, locale: 'ru' | 'en' = 'en') =>
    call(ctx.app, '/api/withdraw/form/sandbox-card', {
      token: ann.token,
      locale,
      payload: { currency: 'RUB', amount: '1000', ...card },
      headers: { 'idempotency-key': `book-${engine}-${++keys}` },
    });
  const book = async (user: TFixtureUser) => (await call(ctx.app, '/api/withdraw/book', { token: user.token })).json();
  const confirmToken = async (user: TFixtureUser) => {
    const mail = (await mailsTo(ctx.db, user.email)).filter((m) => m.kind === 'withdraw_destination_added').at(-1)!;
    return /\/withdraw\/book\?confirm=([A-Za-z0-9_-]{43})/.exec(mail.text_body)![1]!;
  };

  it('a destination added is mailed, usable only once confirmed and 24 hours old, and a withdrawal before is refused with the time it opens', async () => {
    const added = await add(ann, CARD);
    expect(added.statusCode, added.body).toBe(200);
    expect(added.json().destinations).toEqual([
      expect.objectContaining({ ps: 'sandbox-card', currency: 'RUB', label: 'My card', shown: '•••• 1111', state: 'unconfirmed' }),
    ]);
    const mail = (await mailsTo(ctx.db, ann.email)).find((m) => m.kind === 'withdraw_destination_added')!;
    expect(mail.text_body).toContain('•••• 1111');
    expect(mail.text_body).toContain(`${PUBLIC_URL}/withdraw/book`);
    expect(mail.text_body).not.toContain('4111 1111 1111 1111');

    const unconfirmed = await withdraw(CARD);
    expect(unconfirmed.statusCode).toBe(403);
    expect(unconfirmed.json()).toMatchObject({ code: 'withdraw_destination_unconfirmed', fields: { card_number: expect.any(String) } });

    // Another account cannot confirm it with the link.
    const token = await confirmToken(ann);
    expect((await post(bob, `/api/withdraw/book/confirm/${token}`)).json().code).toBe('invalid_token');
    const confirmed = await post(ann, `/api/withdraw/book/confirm/${token}`);
    expect(confirmed.statusCode, confirmed.body).toBe(200);
    expect(confirmed.json().destinations[0].state).toBe('waiting');
    expect((await post(ann, `/api/withdraw/book/confirm/${token}`)).json().code).toBe('invalid_token');

    at = new Date(at.getTime() + 23 * HOUR);
    const early = await withdraw(CARD, 'ru');
    expect(early.statusCode).toBe(403);
    expect(early.json()).toMatchObject({ code: 'withdraw_destination_waiting' });
    expect(early.json().message).toContain('28.11.2026');
    expect(early.json().message).toContain('UTC');
    expect(await heldBalance(ctx.db, ann.id, 'RUB')).toBe(0n);

    at = new Date(at.getTime() + HOUR);
    expect((await book(ann)).destinations[0].state).toBe('usable');
    const open = await withdraw(CARD);
    expect(open.statusCode, open.body).toBe(200);
    // A destination not in the book still works while "allow-list only" is off.
    expect((await withdraw(OTHER_CARD)).statusCode).toBe(200);
    expect((await add(ann, CARD)).json().code).toBe('withdraw_destination_exists');
  });

  it('"allow-list only" refuses destinations outside the book at once, and goes off only 24 hours after it is turned off', async () => {
    expect((await post(ann, '/api/withdraw/book/allowlist', { on: true })).json().allowlist).toEqual({ on: true, off_at: null });
    const outside = await withdraw(OTHER_CARD);
    expect(outside.statusCode).toBe(403);
    expect(outside.json().code).toBe('withdraw_allowlist_only');
    const inside = await withdraw(CARD);
    expect(inside.statusCode, inside.body).toBe(200);

    const off = await post(ann, '/api/withdraw/book/allowlist', { on: false });
    expect(off.json().allowlist).toEqual({ on: true, off_at: new Date(at.getTime() + 24 * HOUR).toISOString() });
    at = new Date(at.getTime() + 12 * HOUR);
    expect((await withdraw(OTHER_CARD)).json().code).toBe('withdraw_allowlist_only');
    at = new Date(at.getTime() + 12 * HOUR);
    expect((await book(ann)).allowlist).toEqual({ on: false, off_at: null });
    expect((await withdraw(OTHER_CARD)).statusCode).toBe(200);
  });

  it("with 2FA on, adding and switching off take the second factor; another user's entry answers like a missing one; a bad destination changes nothing", async () => {
    const secret = newTotpSecret();
    await ctx.db.query('INSERT INTO user_totp (user_id, secret, enabled_at, last_step) VALUES ($1, $2, now(), 0)', [bob.id, secret]);
    expect((await add(bob, OTHER_CARD)).json().code).toBe('second_factor_required');
    const bad = await add(bob, { card_number: '4111 1111 1111 1112', card_holder: 'IVAN PETROV' }, { code: totpCode(secret, at.getTime()) });
    expect(bad.statusCode).toBe(400);
    expect(bad.json().fields).toEqual({ card_number: expect.any(String) });
    expect((await book(bob)).destinations).toEqual([]);
    const added = await add(bob, OTHER_CARD, { code: totpCode(secret, at.getTime()) });
    expect(added.statusCode, added.body).toBe(200);
    const id = added.json().destinations[0].id;

    expect((await post(ann, `/api/withdraw/book/${id}/remove`)).statusCode).toBe(404);
    expect((await post(bob, `/api/withdraw/book/${id}/remove`)).json().destinations).toEqual([]);
    expect((await post(bob, `/api/withdraw/book/${id}/remove`)).statusCode).toBe(404);

    await post(bob, '/api/withdraw/book/allowlist', { on: true });
    expect((await post(bob, '/api/withdraw/book/allowlist', { on: false })).json().code).toBe('second_factor_required');
    expect((await book(bob)).allowlist).toEqual({ on: true, off_at: null });
  });
});
