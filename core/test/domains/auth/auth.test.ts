import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LINK_BINDING_HEADER, SESSION_STATE_HEADER, SESSION_TOKEN_HEADER, TOKEN_PATTERN, isAccountId } from '@obmen/shared';
import { ENGINES, build } from '../../helpers.ts';
import { call, DEMO, expectRefusal, freshEmail, lastMailTo, linkToken, logIn, mailsTo, sameBrowser, sessionToken, signUp } from '../../auth-helpers.ts';
import { setSiteSetting } from '../../../src/domains/site/service.ts';
import { purgeRateLimits } from '../../../src/rate-limit.ts';
import { purgeSessions } from '../../../src/domains/auth/sessions.ts';
import { purgeTokens } from '../../../src/domains/auth/service.ts';
import { purgePasswordFailures } from '../../../src/domains/auth/password-failures.ts';

describe.each(ENGINES)('accounts on %s', (engine) => {
  let ctx: Awaited<ReturnType<typeof build>>;
  beforeAll(async () => {
    ctx = await build(engine);
  });
  afterAll(() => ctx.close());

  const check = (token?: string) => call(ctx.app, '/api/auth/check', token ? { token } : {});

  it('check answers an anonymous user, the locale and the site settings', async () => {
    const res = await call(ctx.app, '/api/auth/check', { locale: 'en' });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({
      user: { is_authenticated: false, account_id: null, need_set_password: false, locale: 'en' },
      locale: 'en',
      site_settings: { logo_url: '/image/logo.svg', auth_type: 'password', site_blocked: false },
    });
    expect(res.headers[SESSION_STATE_HEADER]).toBeUndefined();
  });

  it('the seeded demo account is confirmed and logs in by password; the token travels only in the header', async () => {
    const res = await call(ctx.app, '/api/auth/login_by_password', { payload: DEMO });
    expect(res.statusCode).toBe(200);
    const token = sessionToken(res);
    expect(token).toMatch(TOKEN_PATTERN);
    expect(res.body).not.toContain(token);
    const body = res.json();
    expect(body).toMatchObject({ status: 'ok', locale: 'ru', user: { is_authenticated: true, email: DEMO.email, need_set_password: false } });
    expect(isAccountId(body.user.account_id)).toBe(true);
    const me = await check(token);
    expect(me.json().user).toEqual(body.user);
    const [row] = await ctx.db.query<{ confirmed: boolean }>('SELECT email_confirmed_at IS NOT NULL AS confirmed FROM users WHERE email = $1', [DEMO.email]);
    expect(row?.confirmed).toBe(true);
  });

  it('logs in by password as form data too, with the email in any case', async () => {
    const res = await call(ctx.app, '/api/auth/login_by_password', {
      payload: `email=${encodeURIComponent(' DEMO@Obmen.Local ')}&password=${encodeURIComponent(DEMO.password)}`,
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
    });
    expect(res.statusCode).toBe(200);
    expect(res.json().user.email).toBe(DEMO.email);
  });

  it('signs up through the mailed link, which works once, then logs in by password', async () => {
    const email = freshEmail('signup');
    const res = await call(ctx.app, '/api/auth/register', { payload: { email, password: 'correct horse battery' }, locale: 'en' });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ status: 'ok', message: 'Almost done: check your inbox and follow the link we sent to finish signing up.' });
    expect(res.headers[SESSION_TOKEN_HEADER]).toBeUndefined();
    // Nothing exists until the mailbox owner follows the link.
    expect(await ctx.db.query('SELECT 1 FROM users WHERE email = $1', [email])).toEqual([]);
    const mail = await lastMailTo(ctx.db, email);
    expect(mail).toMatchObject({ kind: 'signup_confirm', locale: 'en', subject: 'Confirm your email to finish signing up to Obmen' });
    expect(mail.text_body).toContain('http://localhost:3000/login?confirm=');
    const token = linkToken(mail);

    const confirmed = await call(ctx.app, `/api/auth/confirm/${token}`, { method: 'POST', headers: sameBrowser(res) });
    expect(confirmed.statusCode).toBe(200);
    expect(confirmed.json()).toMatchObject({ status: 'ok', locale: 'en', user: { is_authenticated: true, email, need_set_password: false, locale: 'en' } });
    const session = sessionToken(confirmed);
    expect((await check(session)).json().user.email).toBe(email);

    const again = await call(ctx.app, `/api/auth/confirm/${token}`, { method: 'POST', locale: 'en', headers: sameBrowser(res) });
    expect(again.statusCode).toBe(400);
    expect(again.json()).toEqual({ status: 'error', code: 'invalid_token', message: 'This link is invalid or has expired. Please request a new one.' });
    expect(again.headers[SESSION_TOKEN_HEADER]).toBeUndefined();

    expect(await logIn(ctx.app, email, 'correct horse battery')).toMatch(TOKEN_PATTERN);
  });

  it('refuses bad sign-up input with localized field messages', async () => {
    const res = await call(ctx.app, '/api/auth/register', { payload: { email: 'not-an-email', password: 'short' }, locale: 'en' });
    expectRefusal(res, 400, {
      code: 'validation',
      message: 'Please check the highlighted fields.',
      fields: { email: 'Enter a valid email address.', password: 'The password must be at least 8 characters long.' },
    });
    const ru = await call(ctx.app, '/api/auth/register', { payload: {} });
    expect(ru.json().fields).toEqual({ email: 'Заполните это поле.', password: 'Заполните это поле.' });
    const same = await call(ctx.app, '/api/auth/register', {
      payload: { email: 'longer.name@example.com', password: 'Longer.Name@example.com' },
      locale: 'en',
    });
    expect(same.json().fields).toEqual({ password: 'The password must not be your email address.' });
  });

  it('logout ends the session: the old token gets an anonymous user and x-obmen-session: cleared', async () => {
    const token = await logIn(ctx.app, DEMO.email, DEMO.password);
    const out = await call(ctx.app, '/api/auth/logout', { method: 'POST', token });
    expect(out.statusCode).toBe(200);
    expect(out.headers[SESSION_STATE_HEADER]).toBe('cleared');
    expect(out.json()).toMatchObject({ status: 'ok', user: { is_authenticated: false, account_id: null } });
    const after = await check(token);
    expect(after.json().user.is_authenticated).toBe(false);
    expect(after.headers[SESSION_STATE_HEADER]).toBe('cleared');
    const guarded = await call(ctx.app, '/api/user/info', { token });
    expect(guarded.statusCode).toBe(401);
    expect(guarded.json()).toMatchObject({ status: 'error', code: 'unauthorized', user: { is_authenticated: false } });
    // Logging out without a session is harmless.
    expect((await call(ctx.app, '/api/auth/logout', { method: 'POST' })).statusCode).toBe(200);
  });

  it('a new sign-in in the same browser replaces its session (no fixation)', async () => {
    const first = await logIn(ctx.app, DEMO.email, DEMO.password);
    const second = sessionToken(await call(ctx.app, '/api/auth/login_by_password', { payload: DEMO, token: first }));
    expect(second).not.toBe(first);
    expect((await check(first)).json().user.is_authenticated).toBe(false);
    expect((await check(second)).json().user.is_authenticated).toBe(true);
  });

  it('expired and revoked sessions are dead; a session used after a day slides and the token is re-sent', async () => {
    const token = await logIn(ctx.app, DEMO.email, DEMO.password);
    const fresh = await check(token);
    expect(fresh.headers[SESSION_TOKEN_HEADER]).toBeUndefined();

    await ctx.db.query(`UPDATE sessions SET last_seen_at = now() - interval '2 days', expires_at = now() + interval '28 days' WHERE revoked_at IS NULL`);
    const slid = await check(token);
    expect(slid.headers[SESSION_TOKEN_HEADER]).toBe(token);
    const [row] = await ctx.db.query<{ days: number }>(
      `SELECT round(extract(epoch FROM expires_at - now()) / 86400)::int AS days FROM sessions WHERE last_seen_at > now() - interval '1 minute' AND revoked_at IS NULL ORDER BY id DESC LIMIT 1`,
    );
    expect(row?.days).toBe(30);

    await ctx.db.query(`UPDATE sessions SET expires_at = now() - interval '1 second' WHERE revoked_at IS NULL`);
    const expired = await check(token);
    expect(expired.json().user.is_authenticated).toBe(false);
    expect(expired.headers[SESSION_STATE_HEADER]).toBe('cleared');

    const garbage = await check('not-a-token');
    expect(garbage.headers[SESSION_STATE_HEADER]).toBe('cleared');
  });

  it('sessions are stored as sha256 of the token, never the token', async () => {
    const token = await logIn(ctx.app, DEMO.email, DEMO.password);
    const { createHash } = await import('node:crypto');
    const hash = createHash('sha256').update(token).digest('hex');
    const [row] = await ctx.db.query<{ n: number }>(`SELECT count(*)::int AS n FROM sessions WHERE encode(token_hash, 'hex') = $1`, [hash]);
    expect(row?.n).toBe(1);
    const [raw] = await ctx.db.query<{ n: number }>(`SELECT count(*)::int AS n FROM sessions WHERE encode(token_hash, 'escape') LIKE '%' || $1 || '%'`, [
      token,
    ]);
    expect(raw?.n).toBe(0);
  });

  it('password reset: mail, link check, new password, every old session dead, link single use', async () => {
    const email = freshEmail('reset');
    const oldSession = await signUp(ctx.app, ctx.db, email, 'first password 1');
    const otherDevice = await logIn(ctx.app, email, 'first password 1');

    expect((await call(ctx.app, '/api/auth/reset', { payload: { email } })).statusCode).toBe(200);
    const mail = await lastMailTo(ctx.db, email);
    expect(mail.kind).toBe('reset');
    expect(mail.text_body).toContain('http://localhost:3000/reset-password?token=');
    const token = linkToken(mail);

    expect((await call(ctx.app, `/api/auth/reset/${token}`)).json()).toEqual({ status: 'ok' });
    const short = await call(ctx.app, `/api/auth/reset/${token}`, { payload: { password: 'short' } });
    expect(short.statusCode).toBe(400);
    expect(short.json().fields).toEqual({ password: 'Пароль должен быть не короче 8 символов.' });

    const done = await call(ctx.app, `/api/auth/reset/${token}`, { payload: { password: 'second password 2' } });
    expect(done.statusCode).toBe(200);
    expect(done.json()).toMatchObject({ status: 'ok', user: { is_authenticated: true, email } });
    const newSession = sessionToken(done);

    for (const dead of [oldSession, otherDevice]) {
      const res = await check(dead);
      expect(res.json().user.is_authenticated).toBe(false);
      expect(res.headers[SESSION_STATE_HEADER]).toBe('cleared');
    }
    expect((await check(newSession)).json().user.is_authenticated).toBe(true);
    expect((await call(ctx.app, `/api/auth/reset/${token}`, { payload: { password: 'third password 3' } })).json().code).toBe('invalid_token');
    expect((await call(ctx.app, `/api/auth/reset/${token}`)).statusCode).toBe(400);
    expect((await call(ctx.app, '/api/auth/login_by_password', { payload: { email, password: 'first password 1' } })).statusCode).toBe(401);
    expect(await logIn(ctx.app, email, 'second password 2')).toMatch(TOKEN_PATTERN);
    expect((await lastMailTo(ctx.db, email)).kind).toBe('password_changed');
  });

  it('reset links expire, and a newer password spends older links', async () => {
    const email = freshEmail('reset-exp');
    await signUp(ctx.app, ctx.db, email, 'first password 1');
    await call(ctx.app, '/api/auth/reset', { payload: { email } });
    const expiring = linkToken(await lastMailTo(ctx.db, email));
    await call(ctx.app, '/api/auth/reset', { payload: { email } });
    const older = linkToken(await lastMailTo(ctx.db, email));
    await call(ctx.app, '/api/auth/reset', { payload: { email } });
    const newest = linkToken(await lastMailTo(ctx.db, email));
    await ctx.db.query(
      `UPDATE auth_tokens SET expires_at = now() - interval '1 second' WHERE id = (SELECT min(id) FROM auth_tokens WHERE kind = 'reset' AND user_id = (SELECT id FROM users WHERE email = $1))`,
      [email],
    );
    expect((await call(ctx.app, `/api/auth/reset/${expiring}`, { payload: { password: 'another password' } })).json().code).toBe('invalid_token');
    expect((await call(ctx.app, `/api/auth/reset/${newest}`, { payload: { password: 'another password' } })).statusCode).toBe(200);
    expect((await call(ctx.app, `/api/auth/reset/${older}`, { payload: { password: 'yet another one' } })).json().code).toBe('invalid_token');
  });

  it('change password: needs a session and the current password; all other sessions end', async () => {
    const email = freshEmail('change');
    const session = await signUp(ctx.app, ctx.db, email, 'first password 1');
    const other = await logIn(ctx.app, email, 'first password 1');

    const anonymous = await call(ctx.app, '/api/auth/change', { payload: { current_password: 'x', password: 'whatever 123' } });
    expect(anonymous.statusCode).toBe(401);
    expect(anonymous.json()).toMatchObject({ code: 'unauthorized', user: { is_authenticated: false } });

    const missing = await call(ctx.app, '/api/auth/change', { token: session, payload: { password: 'second password 2' } });
    expect(missing.statusCode).toBe(400);
    expect(missing.json().fields).toEqual({ current_password: 'Заполните это поле.' });

    const wrong = await call(ctx.app, '/api/auth/change', {
      token: session,
      locale: 'en',
      payload: { current_password: 'nope nope', password: 'second password 2' },
    });
    expectRefusal(wrong, 400, {
      code: 'invalid_password',
      message: 'The current password is wrong.',
      fields: { current_password: 'The current password is wrong.' },
    });

    const ok = await call(ctx.app, '/api/auth/change', {
      token: session,
      locale: 'en',
      payload: { current_password: 'first password 1', password: 'second password 2' },
    });
    expect(ok.statusCode).toBe(200);
    expect(ok.json()).toMatchObject({ status: 'ok', message: 'Your password has been changed. Other devices have been signed out.', user: { email } });
    const renewed = sessionToken(ok);
    expect((await check(session)).json().user.is_authenticated).toBe(false);
    expect((await check(other)).json().user.is_authenticated).toBe(false);
    expect((await check(renewed)).json().user.is_authenticated).toBe(true);
    expect((await call(ctx.app, '/api/auth/login_by_password', { payload: { email, password: 'first password 1' } })).statusCode).toBe(401);
    expect(await logIn(ctx.app, email, 'second password 2')).toMatch(TOKEN_PATTERN);
    expect((await lastMailTo(ctx.db, email)).kind).toBe('password_changed');
  });

  it('GET and POST /api/user/info read and update personal data (form data, "" clears)', async () => {
    const email = freshEmail('info');
    const token = await signUp(ctx.app, ctx.db, email, 'info password 1');
    expect((await call(ctx.app, '/api/user/info')).statusCode).toBe(401);

    const read = await call(ctx.app, '/api/user/info', { token });
    expect(read.statusCode).toBe(200);
    expect(read.json()).toMatchObject({
      user: { is_authenticated: true, email },
      info: { email, email_confirmed: true, need_set_password: false, locale: 'ru', first_name: null, phone: null, birth_date: null },
    });
    expect(isAccountId(read.json().info.account_id)).toBe(true);

    const form = new URLSearchParams({
      first_name: 'Анна-Мария',
      last_name: "O'Neil",
      birth_date: '1990-05-17',
      phone: '+7 (999) 123-45-67',
      country: 'kz',
      city: 'Алматы',
      address: 'ул. Абая, 1',
    });
    const saved = await call(ctx.app, '/api/user/info', { token, payload: form.toString(), headers: { 'content-type': 'application/x-www-form-urlencoded' } });
    expect(saved.statusCode).toBe(200);
    expect(saved.json()).toMatchObject({
      status: 'ok',
      message: 'Личные данные сохранены.',
      info: {
        first_name: 'Анна-Мария',
        last_name: "O'Neil",
        birth_date: '1990-05-17',
        phone: '+79991234567',
        country: 'KZ',
        city: 'Алматы',
        address: 'ул. Абая, 1',
      },
    });

    const cleared = await call(ctx.app, '/api/user/info', { token, payload: 'city=&phone=', headers: { 'content-type': 'application/x-www-form-urlencoded' } });
    expect(cleared.json().info).toMatchObject({ city: null, phone: null, first_name: 'Анна-Мария' });

    const bad = await call(ctx.app, '/api/user/info', {
      token,
      locale: 'en',
      payload: 'first_name=R2D2&birth_date=2020-01-01&phone=12345&country=Russia',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
    });
    expect(bad.statusCode).toBe(400);
    expect(bad.json().fields).toEqual({
      first_name: 'Use letters, spaces, hyphens and apostrophes only.',
      birth_date: 'You must be at least 18 years old.',
      phone: 'Enter the number in international format, e.g. +79991234567.',
      country: 'Choose a country (two-letter code).',
    });
    expect((await call(ctx.app, '/api/user/info', { token })).json().info.first_name).toBe('Анна-Мария');
  });

  it('send_confirmation_instructions mails a link to an unconfirmed address; following it confirms', async () => {
    const email = freshEmail('confirm');
    const token = await signUp(ctx.app, ctx.db, email, 'confirm password');
    const already = await call(ctx.app, '/api/auth/send_confirmation_instructions', { token, locale: 'en' });
    expect(already.json()).toEqual({ status: 'ok', message: 'Your email is already confirmed.', email_confirmed: true });
    expect((await call(ctx.app, '/api/auth/send_confirmation_instructions')).statusCode).toBe(401);

    await ctx.db.query('UPDATE users SET email_confirmed_at = NULL WHERE email = $1', [email]);
    const sent = await call(ctx.app, '/api/auth/send_confirmation_instructions', { token, locale: 'en' });
    expect(sent.json()).toEqual({ status: 'ok', message: `We sent a confirmation link to ${email}.`, email_confirmed: false });
    const mail = await lastMailTo(ctx.db, email);
    expect(mail.kind).toBe('confirm_email');
    const confirmed = await call(ctx.app, `/api/auth/confirm/${linkToken(mail)}`, { method: 'POST', headers: sameBrowser(sent) });
    expect(confirmed.statusCode).toBe(200);
    expect((await call(ctx.app, '/api/user/info', { token: sessionToken(confirmed) })).json().info.email_confirmed).toBe(true);
  });

  describe('passwordless (auth_type email)', () => {
    beforeAll(() => setSiteSetting(ctx.db, 'auth_type', 'email'));
    afterAll(() => setSiteSetting(ctx.db, 'auth_type', 'password'));

    it('a new email signs up on first use of its 15-minute link; the link works once', async () => {
      const email = freshEmail('magic');
      const res = await call(ctx.app, '/api/auth/login', { payload: { email }, locale: 'en' });
      expect(res.statusCode).toBe(200);
      expect(res.json()).toEqual({ status: 'ok', message: 'Check your inbox: we sent a sign-in link. It works once and expires in 15 minutes.' });
      const mail = await lastMailTo(ctx.db, email);
      expect(mail).toMatchObject({ kind: 'sign_in', locale: 'en', subject: 'Your Obmen sign-in link' });
      expect(mail.text_body).toContain('http://localhost:3000/login?token=');
      const [row] = await ctx.db.query<{ minutes: number }>(
        `SELECT round(extract(epoch FROM expires_at - created_at) / 60)::int AS minutes FROM auth_tokens WHERE email = $1`,
        [email],
      );
      expect(row?.minutes).toBe(15);

      const token = linkToken(mail);
      const signedIn = await call(ctx.app, `/api/auth/login/${token}`, { method: 'POST', headers: sameBrowser(res) });
      expect(signedIn.statusCode).toBe(200);
      expect(signedIn.json()).toMatchObject({
        status: 'ok',
        user: { is_authenticated: true, email, need_set_password: true, locale: 'en' },
        site_settings: { auth_type: 'email' },
      });
      expect((await check(sessionToken(signedIn))).json().user.email).toBe(email);
      expect((await call(ctx.app, `/api/auth/login/${token}`, { method: 'POST', headers: sameBrowser(res) })).json().code).toBe('invalid_token');

      // A known email gets a link to the same account.
      const again = await call(ctx.app, '/api/auth/login', { payload: { email: email.toUpperCase() } });
      const second = await call(ctx.app, `/api/auth/login/${linkToken(await lastMailTo(ctx.db, email))}`, { method: 'POST', headers: sameBrowser(again) });
      expect(second.json().user.account_id).toBe(signedIn.json().user.account_id);
      const [count] = await ctx.db.query<{ n: number }>('SELECT count(*)::int AS n FROM users WHERE lower(email) = lower($1)', [email]);
      expect(count?.n).toBe(1);
    });

    it('an expired sign-in link is refused', async () => {
      const email = freshEmail('magic-exp');
      const asked = await call(ctx.app, '/api/auth/login', { payload: { email } });
      await ctx.db.query(`UPDATE auth_tokens SET expires_at = now() - interval '1 second' WHERE email = $1`, [email]);
      const res = await call(ctx.app, `/api/auth/login/${linkToken(await lastMailTo(ctx.db, email))}`, {
        method: 'POST',
        locale: 'en',
        headers: sameBrowser(asked),
      });
      expect(res.statusCode).toBe(400);
      expect(res.json().code).toBe('invalid_token');
      expect(await ctx.db.query('SELECT 1 FROM users WHERE email = $1', [email])).toEqual([]);
    });

    it('malformed link tokens are the same invalid_token', async () => {
      const res = await call(ctx.app, '/api/auth/login/abc', { method: 'POST' });
      expect(res.statusCode).toBe(400);
      expect(res.json().code).toBe('invalid_token');
    });

    it('password calls are refused with auth_type_disabled', async () => {
      for (const [url, payload] of [
        ['/api/auth/register', { email: freshEmail(), password: 'long enough 1' }],
        ['/api/auth/login_by_password', DEMO],
        ['/api/auth/reset', { email: DEMO.email }],
      ] as const) {
        const res = await call(ctx.app, url, { payload, locale: 'en' });
        expect(res.statusCode, url).toBe(403);
        expect(res.json()).toEqual({ status: 'error', code: 'auth_type_disabled', message: 'This way of signing in is turned off.' });
      }
    });
  });

  it('a passwordless user sets a first password without a current one once the type is password', async () => {
    await setSiteSetting(ctx.db, 'auth_type', 'email');
    const email = freshEmail('setpw');
    const asked = await call(ctx.app, '/api/auth/login', { payload: { email } });
    const token = sessionToken(
      await call(ctx.app, `/api/auth/login/${linkToken(await lastMailTo(ctx.db, email))}`, { method: 'POST', headers: sameBrowser(asked) }),
    );
    await setSiteSetting(ctx.db, 'auth_type', 'password');
    expect((await check(token)).json().user.need_set_password).toBe(true);
    // No password yet: password sign-in fails like any wrong password.
    expect((await call(ctx.app, '/api/auth/login_by_password', { payload: { email, password: 'anything 123' } })).statusCode).toBe(401);
    const set = await call(ctx.app, '/api/auth/change', { token, payload: { password: 'my first password' } });
    expect(set.statusCode).toBe(200);
    expect(set.json()).toMatchObject({ message: 'Пароль установлен.', user: { need_set_password: false } });
    expect(await logIn(ctx.app, email, 'my first password')).toMatch(TOKEN_PATTERN);
    // Setting a first password mails nothing; changing one does.
    expect((await mailsTo(ctx.db, email)).map((mail) => mail.kind)).toEqual(['sign_in']);
  });

  it('housekeeping drops ended rate-limit windows, long-dead sessions, old links and forgotten wrong-password counts only', async () => {
    const token = await logIn(ctx.app, DEMO.email, DEMO.password);
    await ctx.db.query(
      `INSERT INTO rate_limits (key, window_start, window_seconds, hits) VALUES ('test:old', now() - interval '2 hours', 3600, 5), ('test:live', now(), 3600, 5)`,
    );
    await ctx.db.query(`UPDATE sessions SET expires_at = now() - interval '31 days' WHERE revoked_at IS NOT NULL`);
    await ctx.db.query(`UPDATE auth_tokens SET expires_at = now() - interval '8 days' WHERE used_at IS NOT NULL`);
    await ctx.db.query(
      `INSERT INTO password_failures (ip_key, email_key, failures, last_failed_at)
       VALUES ('test-old', 'x@example.com', 12, now() - interval '25 hours'), ('test-live', 'x@example.com', 12, now() - interval '23 hours')`,
    );
    await Promise.all([purgeRateLimits(ctx.db), purgeSessions(ctx.db), purgeTokens(ctx.db), purgePasswordFailures(ctx.db)]);
    expect((await ctx.db.query<{ key: string }>(`SELECT key FROM rate_limits WHERE key LIKE 'test:%'`)).map((row) => row.key)).toEqual(['test:live']);
    expect(await ctx.db.query(`SELECT 1 FROM sessions WHERE revoked_at IS NOT NULL AND expires_at < now() - interval '30 days'`)).toEqual([]);
    expect(await ctx.db.query(`SELECT 1 FROM auth_tokens WHERE expires_at < now() - interval '7 days'`)).toEqual([]);
    expect((await ctx.db.query<{ ip_key: string }>(`SELECT ip_key FROM password_failures WHERE ip_key LIKE 'test-%'`)).map((row) => row.ip_key)).toEqual([
      'test-live',
    ]);
    expect((await check(token)).json().user.is_authenticated).toBe(true);
  });

  describe('mailed links belong to the browser that asked for them', () => {
    const OTHER_BROWSER = { [LINK_BINDING_HEADER]: 'B'.repeat(43) };
    const unspent = async (email: string) =>
      (await ctx.db.query<{ used: boolean }>('SELECT used_at IS NOT NULL AS used FROM auth_tokens WHERE lower(email) = lower($1)', [email])).map(
        (row) => row.used,
      );

    it('a sign-in link: the asking browser is signed in at once; another sees the masked address and is signed in only by the confirm; a replay is refused', async () => {
      await setSiteSetting(ctx.db, 'auth_type', 'email');
      try {
        const email = freshEmail('bound');
        const asked = await call(ctx.app, '/api/auth/login', { payload: { email } });
        expect(asked.headers[LINK_BINDING_HEADER]).toMatch(TOKEN_PATTERN);
        const token = linkToken(await lastMailTo(ctx.db, email));

        for (const headers of [{}, OTHER_BROWSER]) {
          const preview = await call(ctx.app, `/api/auth/login/${token}`, { headers });
          expect(preview.statusCode).toBe(200);
          expect(preview.json()).toEqual({ status: 'ok', email: 'b***@e***.com', same_browser: false });
          const refused = await call(ctx.app, `/api/auth/login/${token}`, { method: 'POST', payload: {}, headers, locale: 'en' });
          expectRefusal(refused, 409, {
            code: 'link_confirm_required',
            message: 'This link was requested in another browser: confirm the account it signs into first.',
          });
          expect(refused.headers[SESSION_TOKEN_HEADER]).toBeUndefined();
        }
        // Nothing was spent, and the account a first link would make does not exist yet.
        expect(await unspent(email)).toEqual([false]);
        expect(await ctx.db.query('SELECT 1 FROM users WHERE lower(email) = lower($1)', [email])).toEqual([]);
        expect((await call(ctx.app, `/api/auth/login/${token}`, { headers: sameBrowser(asked) })).json()).toEqual({
          status: 'ok',
          email: 'b***@e***.com',
          same_browser: true,
        });

        const confirmed = await call(ctx.app, `/api/auth/login/${token}`, { method: 'POST', payload: { confirm: true }, headers: OTHER_BROWSER });
        expect(confirmed.statusCode).toBe(200);
        expect(confirmed.json().user).toMatchObject({ is_authenticated: true, email });
        expect((await check(sessionToken(confirmed))).json().user.email).toBe(email);

        for (const replay of [
          call(ctx.app, `/api/auth/login/${token}`, { method: 'POST', payload: { confirm: true }, headers: OTHER_BROWSER }),
          call(ctx.app, `/api/auth/login/${token}`, { method: 'POST', headers: sameBrowser(asked) }),
          call(ctx.app, `/api/auth/login/${token}`, { headers: sameBrowser(asked) }),
        ]) {
          const res = await replay;
          expect(res.statusCode).toBe(400);
          expect(res.json().code).toBe('invalid_token');
          expect(res.headers[SESSION_TOKEN_HEADER]).toBeUndefined();
        }

        // The asking browser keeps its binding for its next link, and that one signs in at once.
        const next = await call(ctx.app, '/api/auth/login', { payload: { email }, headers: sameBrowser(asked) });
        expect(next.headers[LINK_BINDING_HEADER]).toBe(asked.headers[LINK_BINDING_HEADER]);
        const direct = await call(ctx.app, `/api/auth/login/${linkToken(await lastMailTo(ctx.db, email))}`, { method: 'POST', headers: sameBrowser(asked) });
        expect(direct.statusCode).toBe(200);
        expect(direct.json().user.email).toBe(email);
      } finally {
        await setSiteSetting(ctx.db, 'auth_type', 'password');
      }
    });

    it('a sign-up confirmation link: another browser makes no account until the confirm; the asking browser signs in at once', async () => {
      const email = freshEmail('cbound');
      const asked = await call(ctx.app, '/api/auth/register', { payload: { email, password: 'correct horse battery' } });
      const token = linkToken(await lastMailTo(ctx.db, email));
      expect((await call(ctx.app, `/api/auth/confirm/${token}`, { headers: OTHER_BROWSER })).json()).toEqual({
        status: 'ok',
        email: 'c***@e***.com',
        same_browser: false,
      });
      const refused = await call(ctx.app, `/api/auth/confirm/${token}`, { method: 'POST', headers: OTHER_BROWSER });
      expect(refused.statusCode).toBe(409);
      expect(refused.json().code).toBe('link_confirm_required');
      expect(await ctx.db.query('SELECT 1 FROM users WHERE lower(email) = lower($1)', [email])).toEqual([]);
      expect(await unspent(email)).toEqual([false]);

      const confirmed = await call(ctx.app, `/api/auth/confirm/${token}`, { method: 'POST', headers: sameBrowser(asked) });
      expect(confirmed.statusCode).toBe(200);
      expect(confirmed.json().user).toMatchObject({ is_authenticated: true, email });
      const replay = await call(ctx.app, `/api/auth/confirm/${token}`, { method: 'POST', payload: { confirm: true }, headers: OTHER_BROWSER });
      expect(replay.json().code).toBe('invalid_token');
    });

    it('a sign-up of a taken address hands out a binding too (the headers tell nothing)', async () => {
      const taken = await call(ctx.app, '/api/auth/register', { payload: { email: DEMO.email, password: 'some other password' } });
      expect(taken.statusCode).toBe(200);
      expect(taken.headers[LINK_BINDING_HEADER]).toMatch(TOKEN_PATTERN);
    });
  });

  it('two racing uses of one link: exactly one signs in', async () => {
    const email = freshEmail('race');
    const asked = await call(ctx.app, '/api/auth/login', { payload: { email } });
    const token = linkToken(await lastMailTo(ctx.db, email));
    const results = await Promise.all([1, 2, 3].map(() => call(ctx.app, `/api/auth/login/${token}`, { method: 'POST', headers: sameBrowser(asked) })));
    expect(results.map((res) => res.statusCode).sort()).toEqual([200, 400, 400]);
  });
});
