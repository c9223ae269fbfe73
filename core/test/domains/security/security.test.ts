import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SESSION_STATE_HEADER, SESSION_TOKEN_HEADER, TOKEN_PATTERN } from '@obmen/shared';
import { ENGINES, build } from '../../helpers.ts';
import { call, expectRefusal, freshEmail, freshIp, lastMailTo, logIn, sessionToken, signUp } from '../../auth-helpers.ts';
import { createFixtureUser } from '../../fixtures.ts';
import { totpCode } from '../../../src/domains/security/totp.ts';
import { hashPassword } from '../../../src/domains/auth/passwords.ts';
import { describeDevice } from '../../../src/domains/security/device.ts';

const CHROME = 'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36';
const IPHONE = 'Mozilla/5.0 (iPhone; CPU iPhone OS 17_5 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.5 Mobile/15E148 Safari/604.1';

describe('describeDevice', () => {
  it('names browser and system readably, or null', () => {
    expect(describeDevice(CHROME)).toBe('Chrome 131 · Windows');
    expect(describeDevice(IPHONE)).toBe('Safari · iPhone');
    expect(describeDevice('Mozilla/5.0 (X11; Linux x86_64; rv:133.0) Gecko/20100101 Firefox/133.0')).toBe('Firefox 133 · Linux');
    expect(
      describeDevice('Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36 Edg/131.0.0.0'),
    ).toBe('Edge 131 · macOS');
    expect(describeDevice('')).toBeNull();
    expect(describeDevice('something')).toBeNull();
  });
});

describe.each(ENGINES)('/settings/security calls on %s', (engine) => {
  let ctx: Awaited<ReturnType<typeof build>>;
  let passwordHash = '';
  beforeAll(async () => {
    ctx = await build(engine);
    passwordHash = await hashPassword(PASSWORD);
  });
  afterAll(() => ctx.close());

  const PASSWORD = 'security password 1';
  // The next step's code: the enrolment just used the current one, and a step works once.
  const nextCode = (secret: string) => totpCode(secret, Date.now() + 30_000);

  /** A confirmed user with a password (hashed once per file: scrypt is slow) and a session. */
  async function passwordUser() {
    const user = await createFixtureUser(ctx.db, { email: freshEmail('sec') });
    await ctx.db.query('UPDATE users SET password_hash = $2 WHERE id = $1', [user.id, passwordHash]);
    return user;
  }

  /** A user with a password and 2FA on, through the calls; returns the secret and codes. */
  async function enrol() {
    const { email, token } = await passwordUser();
    const setup = await call(ctx.app, '/api/security/totp/setup', { token, method: 'POST' });
    expect(setup.statusCode).toBe(200);
    const { secret } = setup.json();
    const enable = await call(ctx.app, '/api/security/totp/enable', { token, payload: { code: totpCode(secret, Date.now()) } });
    expect(enable.statusCode).toBe(200);
    return { email, token, secret: secret as string, codes: enable.json().recovery_codes as string[] };
  }

  async function passwordStep(email: string, headers: Record<string, string> = {}) {
    const res = await call(ctx.app, '/api/auth/login_by_password', { payload: { email, password: PASSWORD }, headers, locale: 'en' });
    expect(res.statusCode).toBe(200);
    return res;
  }

  it('every call needs a session', async () => {
    for (const [url, payload] of [
      ['/api/security', undefined],
      ['/api/security/totp/setup', {}],
      ['/api/security/totp/enable', { code: '123456' }],
      ['/api/security/totp/disable', { code: '123456' }],
      ['/api/security/recovery_codes', { code: '123456' }],
      ['/api/security/sessions/1/revoke', {}],
      ['/api/security/sessions/revoke_others', {}],
    ] as const) {
      const res = await call(ctx.app, url, payload === undefined ? {} : { payload });
      expect(res.statusCode, url).toBe(401);
    }
  });

  it('enrolment: a secret with its otpauth URI and QR path; a wrong code refused; the right one turns 2FA on with ten codes', async () => {
    const { email, token } = await passwordUser();
    expect((await call(ctx.app, '/api/security', { token })).json().second_factor).toEqual({
      enabled: false,
      enabled_at: null,
      recovery_codes_left: 0,
      passkeys: 0,
    });
    const early = await call(ctx.app, '/api/security/totp/enable', { token, payload: { code: '123456' }, locale: 'en' });
    expect(early.statusCode).toBe(409);
    expect(early.json().code).toBe('second_factor_not_started');

    const setup = await call(ctx.app, '/api/security/totp/setup', { token, method: 'POST' });
    const body = setup.json();
    expect(body.secret).toMatch(/^[A-Z2-7]{32}$/);
    expect(body.otpauth_uri).toBe(`otpauth://totp/Obmen:${encodeURIComponent(email)}?secret=${body.secret}&issuer=Obmen&algorithm=SHA1&digits=6&period=30`);
    expect(body.qr.size).toBeGreaterThanOrEqual(29);
    expect(body.qr.path).toMatch(/^(M\d+ \d+h\d+v1h-\d+z)+$/);
    // Until confirmed, a password sign-in is not asked for a code.
    expect((await passwordStep(email)).headers[SESSION_TOKEN_HEADER]).toMatch(TOKEN_PATTERN);

    const wrong = await call(ctx.app, '/api/security/totp/enable', { token, payload: { code: '000000' }, locale: 'en' });
    expectRefusal(wrong, 400, {
      code: 'second_factor_invalid',
      message: 'That code did not work. Enter a new code from the app or an unused recovery code.',
      fields: { code: 'Wrong or already used code' },
    });
    const blank = await call(ctx.app, '/api/security/totp/enable', { token, payload: { code: '' }, locale: 'ru' });
    expect(blank.statusCode).toBe(400);
    expect(blank.json().fields).toEqual({ code: 'Заполните это поле.' });

    const ok = await call(ctx.app, '/api/security/totp/enable', { token, payload: { code: totpCode(body.secret, Date.now()) }, locale: 'en' });
    expect(ok.statusCode).toBe(200);
    expect(ok.json().message).toContain('Two-factor authentication is on');
    expect(ok.json().recovery_codes).toHaveLength(10);
    expect((await lastMailTo(ctx.db, email)).kind).toBe('second_factor_enabled');
    const state = (await call(ctx.app, '/api/security', { token })).json();
    expect(state.second_factor).toMatchObject({ enabled: true, recovery_codes_left: 10 });
    const again = await call(ctx.app, '/api/security/totp/setup', { token, method: 'POST', locale: 'en' });
    expect(again.statusCode).toBe(409);
    expect(again.json().code).toBe('second_factor_enabled');
  });

  it('with 2FA on a password sign-in answers a challenge and no session; the code step makes the session', async () => {
    const { email, secret } = await enrol();
    const step = await passwordStep(email, { 'user-agent': CHROME });
    expect(step.headers[SESSION_TOKEN_HEADER]).toBeUndefined();
    const body = step.json();
    expect(body.user.is_authenticated).toBe(false);
    expect(body.second_factor.challenge).toMatch(TOKEN_PATTERN);
    expect(body.second_factor.expires_in).toBe(300);
    expect(body.message).toBe('Password accepted. Enter the code from your authenticator app or a recovery code.');

    const wrong = await call(ctx.app, '/api/auth/login_second_factor', { payload: { challenge: body.second_factor.challenge, code: '000000' }, locale: 'en' });
    expect(wrong.statusCode).toBe(400);
    expect(wrong.json().code).toBe('second_factor_invalid');
    expect(wrong.headers[SESSION_TOKEN_HEADER]).toBeUndefined();

    const code = nextCode(secret);
    const ok = await call(ctx.app, '/api/auth/login_second_factor', {
      payload: { challenge: body.second_factor.challenge, code },
      headers: { 'user-agent': CHROME },
    });
    expect(ok.statusCode).toBe(200);
    const token = sessionToken(ok);
    expect(ok.json().user).toMatchObject({ is_authenticated: true, email });

    // The challenge is spent; the same code with a fresh challenge is refused (used once).
    const replay = await call(ctx.app, '/api/auth/login_second_factor', { payload: { challenge: body.second_factor.challenge, code } });
    expect(replay.json().code).toBe('challenge_invalid');
    const fresh = (await passwordStep(email)).json().second_factor.challenge;
    const reused = await call(ctx.app, '/api/auth/login_second_factor', { payload: { challenge: fresh, code } });
    expect(reused.json().code).toBe('second_factor_invalid');

    // The log: newest first, with the failure and the device.
    const signIns = (await call(ctx.app, '/api/security', { token })).json().sign_ins;
    expect(signIns.slice(0, 3)).toMatchObject([
      { method: 'second_factor', success: false, failure: 'code' },
      { method: 'second_factor', success: true, failure: null, device: 'Chrome 131 · Windows' },
      { method: 'second_factor', success: false, failure: 'code' },
    ]);
  });

  it('a recovery code signs in once; replayed, it is refused', async () => {
    const { email, codes } = await enrol();
    const first = (await passwordStep(email)).json().second_factor.challenge;
    const ok = await call(ctx.app, '/api/auth/login_second_factor', { payload: { challenge: first, code: codes[3]!.toUpperCase() } });
    expect(ok.statusCode).toBe(200);
    const token = sessionToken(ok);
    expect((await call(ctx.app, '/api/security', { token })).json().second_factor.recovery_codes_left).toBe(9);
    const second = (await passwordStep(email)).json().second_factor.challenge;
    const replay = await call(ctx.app, '/api/auth/login_second_factor', { payload: { challenge: second, code: codes[3] } });
    expect(replay.statusCode).toBe(400);
    expect(replay.json().code).toBe('second_factor_invalid');
  });

  it('an expired challenge, a malformed one and one past its 5 tries are refused', async () => {
    const { email, secret } = await enrol();
    const expired = (await passwordStep(email)).json().second_factor.challenge;
    await ctx.db.query(`UPDATE sign_in_challenges SET expires_at = now() - interval '1 second' WHERE user_id = (SELECT id FROM users WHERE email = $1)`, [
      email,
    ]);
    const late = await call(ctx.app, '/api/auth/login_second_factor', { payload: { challenge: expired, code: nextCode(secret) }, locale: 'en' });
    expect(late.statusCode).toBe(400);
    expect(late.json()).toMatchObject({ code: 'challenge_invalid', message: expect.stringContaining('Sign in with your password again') });
    const malformed = await call(ctx.app, '/api/auth/login_second_factor', { payload: { challenge: 'nope', code: '123456' }, locale: 'en' });
    expect(malformed.statusCode).toBe(400);
    expect(malformed.json().fields).toEqual({ challenge: expect.stringContaining('Sign in with your password again') });

    const challenge = (await passwordStep(email)).json().second_factor.challenge;
    for (let i = 0; i < 5; i++) {
      const res = await call(ctx.app, '/api/auth/login_second_factor', { payload: { challenge, code: `00000${i}` } });
      expect(res.json().code).toBe('second_factor_invalid');
    }
    const sixth = await call(ctx.app, '/api/auth/login_second_factor', { payload: { challenge, code: nextCode(secret) } });
    expect(sixth.json().code).toBe('challenge_invalid');
  });

  it('code attempts are limited per user across challenges: the 11th in 15 minutes is 429', async () => {
    const { email, secret } = await enrol(); // the enrolment's code was the first attempt
    for (const tries of [5, 4]) {
      const challenge = (await passwordStep(email)).json().second_factor.challenge;
      for (let i = 0; i < tries; i++) {
        const res = await call(ctx.app, '/api/auth/login_second_factor', { payload: { challenge, code: '999999' } });
        expect(res.statusCode).toBe(400);
      }
    }
    const challenge = (await passwordStep(email)).json().second_factor.challenge;
    const res = await call(ctx.app, '/api/auth/login_second_factor', { payload: { challenge, code: nextCode(secret) } });
    expect(res.statusCode).toBe(429);
    expect(res.headers['retry-after']).toBeDefined();
  });

  it('a reset link does not skip the code step', async () => {
    const { email, secret } = await enrol();
    await call(ctx.app, '/api/auth/reset', { payload: { email } });
    const mail = await lastMailTo(ctx.db, email);
    const resetToken = /token=([A-Za-z0-9_-]{43})/.exec(mail.text_body)![1];
    const reset = await call(ctx.app, `/api/auth/reset/${resetToken}`, { payload: { password: 'another password 2' } });
    expect(reset.statusCode).toBe(200);
    expect(reset.headers[SESSION_TOKEN_HEADER]).toBeUndefined();
    const { challenge } = reset.json().second_factor;
    const ok = await call(ctx.app, '/api/auth/login_second_factor', { payload: { challenge, code: nextCode(secret) } });
    expect(ok.statusCode).toBe(200);
    sessionToken(ok);
  });

  it("sessions: listed with device, IP and the current one marked; one or all others signed out; another user's id is 404", async () => {
    const { email } = await passwordUser();
    const phoneIp = freshIp();
    const phone = sessionToken(
      await call(ctx.app, '/api/auth/login_by_password', { payload: { email, password: PASSWORD }, ip: phoneIp, headers: { 'user-agent': IPHONE } }),
    );
    const desk = sessionToken(
      await call(ctx.app, '/api/auth/login_by_password', { payload: { email, password: PASSWORD }, headers: { 'user-agent': CHROME } }),
    );
    const third = await logIn(ctx.app, email, PASSWORD);
    const { sessions } = (await call(ctx.app, '/api/security', { token: desk })).json();
    expect(sessions).toHaveLength(4); // the fixture's own, phone, desk, third
    expect(sessions.filter((s: { current: boolean }) => s.current)).toMatchObject([{ device: 'Chrome 131 · Windows' }]);
    const phoneSession = sessions.find((s: { device: string | null }) => s.device === 'Safari · iPhone');
    expect(phoneSession).toMatchObject({ ip: phoneIp, current: false });

    const stranger = await createFixtureUser(ctx.db);
    const foreign = await call(ctx.app, `/api/security/sessions/${phoneSession.id}/revoke`, { token: stranger.token, method: 'POST', locale: 'en' });
    expect(foreign.statusCode).toBe(404);
    expect(foreign.json()).toMatchObject({ code: 'session_not_found', message: 'This session was not found' });
    expect((await call(ctx.app, '/api/security/sessions/99999999999/revoke', { token: desk, method: 'POST' })).statusCode).toBe(404);
    expect((await call(ctx.app, '/api/security/sessions/abc/revoke', { token: desk, method: 'POST' })).json().code).toBe('session_not_found');

    const revoked = await call(ctx.app, `/api/security/sessions/${phoneSession.id}/revoke`, { token: desk, method: 'POST' });
    expect(revoked.statusCode).toBe(200);
    expect((await call(ctx.app, '/api/auth/check', { token: phone })).json().user.is_authenticated).toBe(false);
    expect((await call(ctx.app, `/api/security/sessions/${phoneSession.id}/revoke`, { token: desk, method: 'POST' })).statusCode).toBe(404);

    const others = await call(ctx.app, '/api/security/sessions/revoke_others', { token: desk, method: 'POST', locale: 'en' });
    expect(others.json()).toEqual({ status: 'ok', message: 'Other sessions signed out: 2.', revoked: 2 });
    expect((await call(ctx.app, '/api/auth/check', { token: third })).json().user.is_authenticated).toBe(false);
    expect((await call(ctx.app, '/api/auth/check', { token: desk })).json().user.is_authenticated).toBe(true);
    expect((await call(ctx.app, '/api/security', { token: desk })).json().sessions).toHaveLength(1);

    // Signing the current session out ends it and clears the cookie.
    const current = (await call(ctx.app, '/api/security', { token: desk })).json().sessions[0];
    const self = await call(ctx.app, `/api/security/sessions/${current.id}/revoke`, { token: desk, method: 'POST' });
    expect(self.headers[SESSION_STATE_HEADER]).toBe('cleared');
  });

  it('a wrong password and a link sign-in are logged', async () => {
    const email = freshEmail('failed');
    const token = await signUp(ctx.app, ctx.db, email, PASSWORD, 'en');
    expect((await call(ctx.app, '/api/auth/login_by_password', { payload: { email, password: 'wrong password' } })).statusCode).toBe(401);
    const signIns = (await call(ctx.app, '/api/security', { token })).json().sign_ins;
    expect(signIns[0]).toMatchObject({ method: 'password', success: false, failure: 'password' });
    expect(signIns[1]).toMatchObject({ method: 'link', success: true });
    expect(signIns.length).toBeLessThanOrEqual(20);
  });

  it('turning 2FA off needs a good code, holds withdrawals and mails; new recovery codes replace the old', async () => {
    const { email, token, secret, codes } = await enrol();
    const wrong = await call(ctx.app, '/api/security/totp/disable', { token, payload: { code: 'aaaa-bbbb-cccc-dddd' }, locale: 'en' });
    expect(wrong.statusCode).toBe(400);
    expect(wrong.json().code).toBe('second_factor_invalid');

    const renewed = await call(ctx.app, '/api/security/recovery_codes', { token, payload: { code: codes[0] } });
    expect(renewed.statusCode).toBe(200);
    const fresh = renewed.json().recovery_codes as string[];
    expect(fresh).toHaveLength(10);
    expect((await call(ctx.app, '/api/security/totp/disable', { token, payload: { code: codes[1] } })).json().code).toBe('second_factor_invalid');

    const off = await call(ctx.app, '/api/security/totp/disable', { token, payload: { code: nextCode(secret) }, locale: 'en' });
    expect(off.statusCode).toBe(200);
    expect(off.json().message).toBe('Two-factor authentication is off. Withdrawals are paused for 24 hours.');
    expect((await lastMailTo(ctx.db, email)).kind).toBe('second_factor_disabled');
    const state = (await call(ctx.app, '/api/security', { token })).json();
    expect(state.second_factor).toEqual({ enabled: false, enabled_at: null, recovery_codes_left: 0, passkeys: 0 });
    expect(Date.parse(state.withdrawals_blocked_until)).toBeGreaterThan(Date.now() + 23 * 3600_000);
    expect((await passwordStep(email)).headers[SESSION_TOKEN_HEADER]).toMatch(TOKEN_PATTERN);
    const again = await call(ctx.app, '/api/security/totp/disable', { token, payload: { code: fresh[0] } });
    expect(again.statusCode).toBe(409);
    expect(again.json().code).toBe('second_factor_not_enabled');
  });
});
