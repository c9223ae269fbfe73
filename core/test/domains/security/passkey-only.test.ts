import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ENGINES, build } from '../../helpers.ts';
import { call, sessionToken, type TCall } from '../../auth-helpers.ts';
import { createFixtureUser, fund, type TFixtureUser } from '../../fixtures.ts';
import { SoftAuthenticator, enrolSoftPasskey, softSecondFactor } from '../../passkey-authenticator.ts';
import { removeSecondFactor } from '../../../src/domains/security/service.ts';
import { secondFactorEnabled, verifySecondFactor } from '../../../src/domains/security/second-factor.ts';
import { hashPassword } from '../../../src/domains/auth/passwords.ts';
import { newTotpSecret, totpCode } from '../../../src/domains/security/totp.ts';

const ORIGIN = 'http://localhost:3000';
const CARD = { card_number: '4111 1111 1111 1111', card_holder: 'IVAN PETROV' };

/*
 * A passkey is a second factor on its own: a user with passkeys and no TOTP app is asked for it
 * wherever a TOTP user is asked for a code, and a passkey's assertion is what satisfies it.
 */
describe.each(ENGINES)('2FA by passkeys alone on %s', (engine) => {
  let ctx: Awaited<ReturnType<typeof build>>;
  const clock = new Date('2026-11-27T12:00:00Z');
  let bob: TFixtureUser;
  let keys = 0;
  beforeAll(async () => {
    ctx = await build(engine, {}, { now: () => clock });
    bob = await createFixtureUser(ctx.db);
  });
  afterAll(() => ctx.close());

  const send = (url: string, options: TCall) => call(ctx.app, url, { locale: 'en', ...options });
  const money = (user: TFixtureUser, url: string, payload: object) =>
    send(url, { token: user.token, payload, headers: { 'idempotency-key': `passkey-only-${engine}-${++keys}` } });
  /** A verified user with money, one passkey and no TOTP; the pause after adding it lifted. */
  const passkeyUser = async () => {
    const user = await createFixtureUser(ctx.db);
    await ctx.db.query('UPDATE users SET verification_level = 1 WHERE id = $1', [user.id]);
    await fund(ctx.db, user.id, 'RUB', 1_000_000n);
    await fund(ctx.db, user.id, 'USDT', 10_000_000n);
    const key = await enrolSoftPasskey(send, user.token);
    await ctx.db.query('UPDATE users SET security_changed_at = NULL WHERE id = $1', [user.id]);
    return { user, key };
  };

  it('counts as 2FA: the session, the withdraw page, the privacy page and the security overview say so', async () => {
    const plain = await createFixtureUser(ctx.db);
    expect(await secondFactorEnabled(ctx.db, plain.id)).toBe(false);
    expect(await verifySecondFactor(ctx.db, plain.id, {}, clock.getTime())).toBe('none');
    const { user } = await passkeyUser();
    expect(await secondFactorEnabled(ctx.db, user.id)).toBe(true);
    const check = await send('/api/transfer/check', { token: user.token, payload: { account_id: String(bob.accountId), currency: 'USDT', amount: '1' } });
    // 2FA on, but no code to type: the forms show the passkey alone.
    expect(check.json()).toMatchObject({ status: 'ok', second_factor: true, totp: false });
    expect((await send('/api/withdraw/ps', { token: user.token })).json()).toMatchObject({ second_factor: true, totp: false });
    expect((await send('/api/user/privacy', { token: user.token })).json()).toMatchObject({ second_factor: true, totp: false });
    expect((await send('/api/security/api_keys', { token: user.token })).json()).toMatchObject({ second_factor: true, totp: false });
    expect((await send('/api/security', { token: user.token })).json().second_factor).toEqual({
      enabled: false,
      enabled_at: null,
      recovery_codes_left: 0,
      passkeys: 1,
    });
  });

  it('a transfer and a withdrawal are refused without the passkey or with a typed code, and pass with its assertion', async () => {
    const { user, key } = await passkeyUser();
    const transfer = (extra: object) => money(user, '/api/transfer', { account_id: String(bob.accountId), currency: 'USDT', amount: '1', ...extra });
    expect((await transfer({})).json()).toMatchObject({ code: 'second_factor_required', fields: { code: expect.any(String) } });
    expect((await transfer({ code: '123456' })).json()).toMatchObject({ code: 'second_factor_invalid' });
    const sent = await transfer({ passkey: await softSecondFactor(send, user.token, key) });
    expect(sent.statusCode, sent.body).toBe(200);

    const withdraw = (extra: object) => money(user, '/api/withdraw/form/sandbox-card', { currency: 'RUB', amount: '200', ...CARD, ...extra });
    expect((await withdraw({})).json()).toMatchObject({ code: 'second_factor_required' });
    expect((await withdraw({ code: 'abcd-efgh-ijkl-mnop' })).json()).toMatchObject({ code: 'second_factor_invalid' });
    const done = await withdraw({ passkey: await softSecondFactor(send, user.token, key) });
    expect(done.statusCode, done.body).toBe(200);
  });

  it('the address book, the anti-phishing phrase and closing the account ask for it too', async () => {
    const { user, key } = await passkeyUser();
    const add = (extra: object) =>
      send('/api/withdraw/book', { token: user.token, payload: { ps: 'sandbox-card', currency: 'RUB', label: 'Mine', ...CARD, ...extra } });
    expect((await add({})).json()).toMatchObject({ code: 'second_factor_required' });
    const added = await add({ passkey: await softSecondFactor(send, user.token, key) });
    expect(added.statusCode, added.body).toBe(200);

    const phrase = (extra: object) => send('/api/config/anti_phishing', { token: user.token, payload: { anti_phishing_code: 'blue heron', ...extra } });
    expect((await phrase({})).json()).toMatchObject({ code: 'second_factor_required' });
    expect((await phrase({ passkey: await softSecondFactor(send, user.token, key) })).json()).toMatchObject({ status: 'ok' });

    const closer = await createFixtureUser(ctx.db);
    const closerKey = await enrolSoftPasskey(send, closer.token);
    const close = (extra: object) => send('/api/user/close', { token: closer.token, payload: { email: closer.email, ...extra } });
    expect((await close({})).json()).toMatchObject({ code: 'second_factor_required' });
    // Another user's passkey over this user's challenge does not close it.
    const foreign = key.assert((await send('/api/security/second_factor/options', { token: closer.token, payload: {} })).json().options);
    expect((await close({ passkey: foreign })).json()).toMatchObject({ code: 'passkey_invalid' });
    const closed = await close({ passkey: await softSecondFactor(send, closer.token, closerKey) });
    expect(closed.statusCode, closed.body).toBe(200);
  });

  it('a second passkey, and removing one, need an assertion of a passkey already there', async () => {
    const { user, key } = await passkeyUser();
    const options = (await send('/api/security/passkeys/options', { token: user.token, payload: {} })).json().options;
    const second = new SoftAuthenticator(ORIGIN);
    const bare = await send('/api/security/passkeys', { token: user.token, payload: { name: 'Phone', credential: second.register(options) } });
    expect(bare.json()).toMatchObject({ code: 'second_factor_required' });
    await enrolSoftPasskey(send, user.token, { passkey: await softSecondFactor(send, user.token, key) });
    const [first] = (await send('/api/security', { token: user.token })).json().passkeys;
    expect((await send(`/api/security/passkeys/${first.id}/remove`, { token: user.token, payload: {} })).json()).toMatchObject({
      code: 'second_factor_required',
    });
    const removed = await send(`/api/security/passkeys/${first.id}/remove`, {
      token: user.token,
      payload: { passkey: await softSecondFactor(send, user.token, key) },
    });
    expect(removed.statusCode, removed.body).toBe(200);
  });

  it('turning the TOTP app off or renewing recovery codes is refused: there is no app to turn off', async () => {
    const { user, key } = await passkeyUser();
    for (const url of ['/api/security/totp/disable', '/api/security/recovery_codes']) {
      const res = await send(url, { token: user.token, payload: { passkey: await softSecondFactor(send, user.token, key) } });
      expect(res.json(), url).toMatchObject({ code: 'second_factor_not_enabled' });
    }
    expect(await secondFactorEnabled(ctx.db, user.id)).toBe(true);
  });

  it("the operators' reset after a lost device takes the passkeys too; the user's own TOTP-off keeps them", async () => {
    const { user } = await passkeyUser();
    const [row] = await ctx.db.query<{ account_id: number }>('SELECT account_id FROM users WHERE id = $1', [user.id]);
    const who = { id: user.id, email: user.email, locale: 'en' as const, account_id: row!.account_id };
    await ctx.db.transaction((tx) => removeSecondFactor(tx, who, { passkeys: false }));
    expect(await secondFactorEnabled(ctx.db, user.id)).toBe(true);
    await ctx.db.transaction((tx) => removeSecondFactor(tx, who, { passkeys: true }));
    expect(await secondFactorEnabled(ctx.db, user.id)).toBe(false);
    expect((await send('/api/security', { token: user.token })).json().passkeys).toEqual([]);
  });

  describe('a password sign-in', () => {
    const PASSWORD = 'passkey only password 1';
    let passwordHash = '';
    beforeAll(async () => {
      passwordHash = await hashPassword(PASSWORD);
    });
    const withPassword = async (user: TFixtureUser) => ctx.db.query('UPDATE users SET password_hash = $2 WHERE id = $1', [user.id, passwordHash]);
    const passwordStep = async (email: string) => {
      const res = await send('/api/auth/login_by_password', { payload: { email, password: PASSWORD } });
      expect(res.statusCode).toBe(200);
      return res;
    };
    const stepOptions = (challenge: string) => send('/api/auth/login_second_factor/options', { payload: { challenge } });
    const finish = (payload: object) => send('/api/auth/login_second_factor', { payload });

    it("with passkeys alone the password does not sign in; the pending sign-in's passkey assertion does, once", async () => {
      const { user, key } = await passkeyUser();
      await withPassword(user);
      const step = await passwordStep(user.email);
      expect(() => sessionToken(step)).toThrow();
      const body = step.json();
      expect(body.user.is_authenticated).toBe(false);
      expect(body.message).toBe('Password accepted. Confirm the sign-in with your passkey.');
      expect(body.second_factor).toEqual({ challenge: expect.any(String), expires_in: 300, totp: false });
      const { challenge } = body.second_factor;

      expect((await finish({ challenge })).json()).toMatchObject({ code: 'second_factor_required' });
      expect((await finish({ challenge, code: '123456' })).json()).toMatchObject({ code: 'second_factor_invalid' });
      const options = await stepOptions(challenge);
      expect(options.statusCode).toBe(200);
      expect(options.json().options.allowCredentials).toEqual([expect.objectContaining({ id: key.id })]);
      const assertion = key.assert(options.json().options);
      const ok = await finish({ challenge, passkey: assertion });
      expect(ok.statusCode).toBe(200);
      expect(ok.json().user).toMatchObject({ is_authenticated: true, email: user.email });
      expect(sessionToken(ok)).toBeTruthy();

      // Replayed: over the spent challenge, and over a fresh sign-in, the same assertion is refused.
      expect((await finish({ challenge, passkey: assertion })).json()).toMatchObject({ code: 'challenge_invalid' });
      const again = (await passwordStep(user.email)).json().second_factor.challenge;
      expect((await finish({ challenge: again, passkey: assertion })).json()).toMatchObject({ code: 'passkey_invalid' });
    });

    it("a pending sign-in's passkey challenge is its own user's; a token that is no live challenge tells nothing", async () => {
      const { user } = await passkeyUser();
      const other = await passkeyUser();
      await withPassword(user);
      const challenge = (await passwordStep(user.email)).json().second_factor.challenge;
      // Another account's passkey cannot answer it, even over its own user's second-factor challenge.
      const stranger = await finish({ challenge, passkey: await softSecondFactor(send, other.user.token, other.key) });
      expect(stranger.json()).toMatchObject({ code: 'passkey_invalid' });
      const theirs = (await stepOptions(challenge)).json().options;
      expect((await finish({ challenge, passkey: other.key.assert(theirs) })).json()).toMatchObject({ code: 'passkey_invalid' });

      const unknown = await stepOptions('a'.repeat(43));
      expect(unknown.statusCode).toBe(400);
      expect(unknown.json()).toMatchObject({ code: 'challenge_invalid' });
      expect((await stepOptions('nope')).statusCode).toBe(400);
    });

    it('a TOTP user still signs in with a code; the step says a code is taken', async () => {
      const user = await createFixtureUser(ctx.db);
      await withPassword(user);
      const secret = newTotpSecret();
      await ctx.db.query('INSERT INTO user_totp (user_id, secret, enabled_at) VALUES ($1, $2, now())', [user.id, secret]);
      const body = (await passwordStep(user.email)).json();
      expect(body.second_factor).toMatchObject({ totp: true });
      expect(body.message).toContain('Enter the code');
      const ok = await finish({ challenge: body.second_factor.challenge, code: totpCode(secret, clock.getTime()) });
      expect(ok.statusCode).toBe(200);
      expect(ok.json().user).toMatchObject({ is_authenticated: true });
    });

    it('without 2FA the password signs in at once', async () => {
      const user = await createFixtureUser(ctx.db);
      await withPassword(user);
      const res = await passwordStep(user.email);
      expect(res.json().second_factor).toBeUndefined();
      expect(sessionToken(res)).toBeTruthy();
    });
  });
});
