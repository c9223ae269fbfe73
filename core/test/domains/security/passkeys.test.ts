import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PASSKEY_CHALLENGE_TTL_S } from '@obmen/shared';
import { ENGINES, build } from '../../helpers.ts';
import { call, lastMailTo, sessionToken, type TCall } from '../../auth-helpers.ts';
import { createFixtureUser } from '../../fixtures.ts';
import { SoftAuthenticator, enrolSoftPasskey, softSecondFactor } from '../../passkey-authenticator.ts';
import { newTotpSecret, totpCode } from '../../../src/domains/security/totp.ts';
import { withdrawalsBlockedUntil } from '../../../src/domains/security/second-factor.ts';

const ORIGIN = 'http://localhost:3000';

describe.each(ENGINES)('passkeys on %s', (engine) => {
  let ctx: Awaited<ReturnType<typeof build>>;
  let clock = new Date('2026-11-27T12:00:00Z');
  beforeAll(async () => {
    ctx = await build(engine, {}, { now: () => clock });
  });
  afterAll(() => ctx.close());

  const send = (url: string, options: TCall) => call(ctx.app, url, { locale: 'en', ...options });
  const withTotp = async () => {
    const user = await createFixtureUser(ctx.db);
    const secret = newTotpSecret();
    await ctx.db.query('INSERT INTO user_totp (user_id, secret, enabled_at) VALUES ($1, $2, now())', [user.id, secret]);
    return { user, secret };
  };

  it('registers a passkey: listed by name with its date, the user mailed, withdrawals paused', async () => {
    const user = await createFixtureUser(ctx.db);
    expect(await withdrawalsBlockedUntil(ctx.db, user.id)).toBeNull();
    const options = (await send('/api/security/passkeys/options', { token: user.token, payload: {} })).json().options;
    expect(options).toMatchObject({ rp: { id: 'localhost' }, authenticatorSelection: { residentKey: 'required', userVerification: 'required' } });
    const key = new SoftAuthenticator(ORIGIN);
    const added = await send('/api/security/passkeys', { token: user.token, payload: { name: 'Laptop', credential: key.register(options) } });
    expect(added.statusCode).toBe(200);
    expect(added.json().message).toContain('Withdrawals are paused');
    const overview = (await send('/api/security', { token: user.token })).json();
    expect(overview.passkeys).toEqual([{ id: expect.any(String), name: 'Laptop', created_at: clock.toISOString(), last_used_at: null }]);
    expect(overview.withdrawals_blocked_until).not.toBeNull();
    expect((await lastMailTo(ctx.db, user.email)).kind).toBe('passkey_added');
    // The next options exclude the passkey already there.
    const next = (await send('/api/security/passkeys/options', { token: user.token, payload: {} })).json().options;
    expect(next.excludeCredentials).toEqual([expect.objectContaining({ id: key.id })]);
  });

  it("a registration challenge is single use, short-lived, and its own user's", async () => {
    const user = await createFixtureUser(ctx.db);
    const options = (await send('/api/security/passkeys/options', { token: user.token, payload: {} })).json().options;
    const one = new SoftAuthenticator(ORIGIN);
    const first = await send('/api/security/passkeys', { token: user.token, payload: { name: 'One', credential: one.register(options) } });
    expect(first.statusCode).toBe(200);
    // From now on the first passkey is the second factor every further one needs.
    const proof = async () => ({ passkey: await softSecondFactor(send, user.token, one) });
    const again = await send('/api/security/passkeys', {
      token: user.token,
      payload: { name: 'Two', credential: new SoftAuthenticator(ORIGIN).register(options), ...(await proof()) },
    });
    expect(again.json()).toMatchObject({ code: 'passkey_invalid' });

    const late = (await send('/api/security/passkeys/options', { token: user.token, payload: {} })).json().options;
    clock = new Date(clock.getTime() + (PASSKEY_CHALLENGE_TTL_S + 1) * 1000);
    const expired = await send('/api/security/passkeys', {
      token: user.token,
      payload: { name: 'Late', credential: new SoftAuthenticator(ORIGIN).register(late), ...(await proof()) },
    });
    expect(expired.json()).toMatchObject({ code: 'passkey_invalid' });

    const stranger = await createFixtureUser(ctx.db);
    const theirs = (await send('/api/security/passkeys/options', { token: stranger.token, payload: {} })).json().options;
    const stolen = await send('/api/security/passkeys', {
      token: user.token,
      payload: { name: 'Stolen', credential: new SoftAuthenticator(ORIGIN).register(theirs), ...(await proof()) },
    });
    expect(stolen.json()).toMatchObject({ code: 'passkey_invalid' });

    const mine = (await send('/api/security/passkeys/options', { token: user.token, payload: {} })).json().options;
    const elsewhere = new SoftAuthenticator(ORIGIN).register(mine, { origin: 'https://evil.example' });
    expect(
      (await send('/api/security/passkeys', { token: user.token, payload: { name: 'Phished', credential: elsewhere, ...(await proof()) } })).json(),
    ).toMatchObject({
      code: 'passkey_invalid',
    });
    expect((await send('/api/security', { token: user.token })).json().passkeys.map((p: { name: string }) => p.name)).toEqual(['One']);
  });

  it('signs in with a passkey alone; the assertion works once; a clone (lower counter) is refused', async () => {
    const user = await createFixtureUser(ctx.db);
    const key = await enrolSoftPasskey(send, user.token);
    const options = (await send('/api/auth/passkey/options', { payload: {} })).json().options;
    expect(options.allowCredentials).toEqual([]);
    const assertion = key.assert(options);
    const res = await send('/api/auth/passkey', { payload: { credential: assertion } });
    expect(res.statusCode).toBe(200);
    expect(res.json().user).toMatchObject({ is_authenticated: true, email: user.email });
    const token = sessionToken(res);
    const overview = (await send('/api/security', { token })).json();
    expect(overview.sign_ins[0]).toMatchObject({ method: 'passkey', success: true });
    expect(overview.passkeys[0].last_used_at).toBe(clock.toISOString());

    expect((await send('/api/auth/passkey', { payload: { credential: assertion } })).json()).toMatchObject({ code: 'passkey_invalid' });

    key.counter = 0;
    const cloned = key.assert((await send('/api/auth/passkey/options', { payload: {} })).json().options);
    expect((await send('/api/auth/passkey', { payload: { credential: cloned } })).json()).toMatchObject({ code: 'passkey_invalid' });
    expect((await send('/api/auth/passkey', { payload: { credential: 'not json' } })).json()).toMatchObject({ code: 'passkey_invalid' });
  });

  it("a passkey stands in for the TOTP code; another user's passkey does not", async () => {
    const { user, secret } = await withTotp();
    const noProof = await send('/api/security/passkeys/options', { token: user.token, payload: {} });
    const refused = await send('/api/security/passkeys', {
      token: user.token,
      payload: { name: 'No code', credential: new SoftAuthenticator(ORIGIN).register(noProof.json().options) },
    });
    expect(refused.json()).toMatchObject({ code: 'second_factor_required' });
    const key = await enrolSoftPasskey(send, user.token, { code: totpCode(secret, clock.getTime()) });

    const other = await createFixtureUser(ctx.db);
    const otherKey = await enrolSoftPasskey(send, other.token);
    // The other user's passkey over this user's challenge.
    const options = (await send('/api/security/second_factor/options', { token: user.token, payload: {} })).json().options;
    expect(options.allowCredentials).toEqual([expect.objectContaining({ id: key.id })]);
    const foreign = await send('/api/security/recovery_codes', { token: user.token, payload: { passkey: otherKey.assert(options) } });
    expect(foreign.json()).toMatchObject({ code: 'passkey_invalid' });
    // A sign-in challenge is not a second-factor one.
    const signInOptions = (await send('/api/auth/passkey/options', { payload: {} })).json().options;
    expect((await send('/api/security/recovery_codes', { token: user.token, payload: { passkey: key.assert(signInOptions) } })).json()).toMatchObject({
      code: 'passkey_invalid',
    });

    const renewed = await send('/api/security/recovery_codes', { token: user.token, payload: { passkey: await softSecondFactor(send, user.token, key) } });
    expect(renewed.statusCode).toBe(200);
    const phrase = await send('/api/config/anti_phishing', {
      token: user.token,
      payload: { anti_phishing_code: 'blue heron', passkey: await softSecondFactor(send, user.token, key) },
    });
    expect(phrase.json()).toMatchObject({ status: 'ok', anti_phishing_code: 'blue heron' });
    const passkeyId = (await send('/api/security', { token: user.token })).json().passkeys[0].id;
    const otherProof = { passkey: await softSecondFactor(send, other.token, otherKey) };
    expect((await send(`/api/security/passkeys/${passkeyId}/remove`, { token: other.token, payload: otherProof })).json()).toMatchObject({
      code: 'passkey_not_found',
    });
    expect((await send(`/api/security/passkeys/${passkeyId}/remove`, { token: user.token, payload: {} })).json()).toMatchObject({
      code: 'second_factor_required',
    });
    const off = await send('/api/security/totp/disable', { token: user.token, payload: { passkey: await softSecondFactor(send, user.token, key) } });
    expect(off.statusCode).toBe(200);
    // The app is off but the passkey is still a second factor: removing it asks for it.
    expect((await send(`/api/security/passkeys/${passkeyId}/remove`, { token: user.token, payload: {} })).json()).toMatchObject({
      code: 'second_factor_required',
    });
    const removed = await send(`/api/security/passkeys/${passkeyId}/remove`, {
      token: user.token,
      payload: { passkey: await softSecondFactor(send, user.token, key) },
    });
    expect(removed.statusCode).toBe(200);
    expect((await send('/api/security', { token: user.token })).json().passkeys).toEqual([]);
  });
});
