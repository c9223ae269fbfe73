import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SESSION_COOKIE, SESSION_STATE_HEADER, SESSION_TOKEN_HEADER, SESSION_TTL_S, TOKEN_PATTERN } from '@obmen/shared';
import { json } from './helpers.ts';
import { buildBff, fakeCoreAndBff, linkBindingOf, parseSetCookies, startRealCore } from './session-helpers.ts';

const DEMO = { email: 'demo@obmen.local', password: 'obmen-demo-2026' };
const HOST = 'obmen.test';
const ORIGIN = `http://${HOST}`;
const TOKEN = 'A'.repeat(43);

describe('BFF session cookie (fake core)', () => {
  const fake = fakeCoreAndBff();

  it('turns the core token header into remember_token (HttpOnly, SameSite=Lax, Path=/, session-long) and strips it', async () => {
    fake.upstream.handle = (_req, res) => json(res, 200, { status: 'ok' }, { [SESSION_TOKEN_HEADER]: TOKEN });
    const res = await fake.bff.app.inject({ method: 'POST', url: '/api/auth/login_by_password', headers: { host: HOST, origin: ORIGIN }, payload: {} });
    expect(res.headers[SESSION_TOKEN_HEADER]).toBeUndefined();
    const [cookie, ...others] = parseSetCookies(res.headers['set-cookie']);
    expect(others).toEqual([]);
    expect(cookie).toEqual({
      name: SESSION_COOKIE,
      value: TOKEN,
      attributes: { 'max-age': String(SESSION_TTL_S), path: '/', httponly: true, samesite: 'Lax' },
    });
    expect(res.body).not.toContain(TOKEN);
  });

  it('never sets a cookie from a malformed token header', async () => {
    fake.upstream.handle = (_req, res) => json(res, 200, {}, { [SESSION_TOKEN_HEADER]: 'x; Domain=evil.example' });
    const res = await fake.bff.app.inject({ url: '/api/auth/check' });
    expect(res.headers['set-cookie']).toBeUndefined();
    expect(res.headers[SESSION_TOKEN_HEADER]).toBeUndefined();
  });

  it('forwards the cookie as Bearer and drops a client-sent Authorization and Cookie', async () => {
    fake.upstream.handle = (_req, res) => json(res, 200, {});
    await fake.bff.app.inject({ url: '/api/auth/check', headers: { cookie: `${SESSION_COOKIE}=${TOKEN}; other=1`, authorization: 'Bearer forged' } });
    expect(fake.upstream.hits[0]!.headers.authorization).toBe(`Bearer ${TOKEN}`);
    expect(fake.upstream.hits[0]!.headers.cookie).toBeUndefined();
    await fake.bff.app.inject({ url: '/api/auth/check', headers: { authorization: `Bearer ${TOKEN}` } });
    expect(fake.upstream.hits[1]!.headers.authorization).toBeUndefined();
    // A cookie that cannot be a token still reaches core as a Bearer core will refuse.
    await fake.bff.app.inject({ url: '/api/auth/check', headers: { cookie: `${SESSION_COOKIE}=%E2%9C%93` } });
    expect(fake.upstream.hits[2]!.headers.authorization).toBe('Bearer invalid');
  });

  it('clears the cookie when core says the session is gone, and hides that header', async () => {
    fake.upstream.handle = (_req, res) => json(res, 200, { user: { is_authenticated: false } }, { [SESSION_STATE_HEADER]: 'cleared' });
    const res = await fake.bff.app.inject({ url: '/api/auth/check', headers: { cookie: `${SESSION_COOKIE}=${TOKEN}` } });
    expect(res.headers[SESSION_STATE_HEADER]).toBeUndefined();
    const [cookie] = parseSetCookies(res.headers['set-cookie']);
    expect(cookie).toMatchObject({ name: SESSION_COOKIE, value: '', attributes: { 'max-age': '0', path: '/', httponly: true, samesite: 'Lax' } });
    // No cookie, nothing to clear.
    const none = await fake.bff.app.inject({ url: '/api/auth/check' });
    expect(none.headers['set-cookie']).toBeUndefined();
    expect(none.headers[SESSION_STATE_HEADER]).toBeUndefined();
  });

  it('overwrites a forged X-Forwarded-For with the real peer', async () => {
    fake.upstream.handle = (_req, res) => json(res, 200, {});
    await fake.bff.app.inject({
      url: '/api/auth/check',
      remoteAddress: '203.0.113.77',
      headers: { 'x-forwarded-for': '1.2.3.4, 5.6.7.8', 'x-real-ip': '1.2.3.4' },
    });
    expect(fake.upstream.hits[0]!.headers['x-forwarded-for']).toBe('203.0.113.77');
    expect(fake.upstream.hits[0]!.headers['x-real-ip']).toBeUndefined();
  });
});

describe('BFF session cookie over https (behind a trusted load balancer)', () => {
  const fake = fakeCoreAndBff({ TRUST_PROXY: '127.0.0.1' }, { trustProxy: '127.0.0.1' });

  it('marks the cookie Secure, and its clearing too', async () => {
    fake.upstream.handle = (_req, res) => json(res, 200, {}, { [SESSION_TOKEN_HEADER]: TOKEN });
    const https = { 'x-forwarded-proto': 'https', host: HOST, origin: `https://${HOST}` };
    const set = await fake.bff.app.inject({ method: 'POST', url: '/api/auth/login_by_password', headers: https, payload: {} });
    expect(parseSetCookies(set.headers['set-cookie'])[0]!.attributes.secure).toBe(true);
    fake.upstream.handle = (_req, res) => json(res, 200, {}, { [SESSION_STATE_HEADER]: 'cleared' });
    const cleared = await fake.bff.app.inject({ method: 'POST', url: '/api/auth/logout', headers: { ...https, cookie: `${SESSION_COOKIE}=${TOKEN}` } });
    expect(parseSetCookies(cleared.headers['set-cookie'])[0]!.attributes).toMatchObject({ secure: true, 'max-age': '0' });
  });
});

describe('BFF + real core: accounts end to end', () => {
  let core: Awaited<ReturnType<typeof startRealCore>>;
  let bff: Awaited<ReturnType<typeof buildBff>>;
  beforeAll(async () => {
    core = await startRealCore();
    bff = await buildBff(core.url);
  });
  afterAll(async () => {
    await bff.close();
    await core.close();
  });

  const browser = (cookie?: string, extra: Record<string, string> = {}) => ({
    host: HOST,
    origin: ORIGIN,
    ...(cookie ? { cookie: `${SESSION_COOKIE}=${cookie}` } : {}),
    ...extra,
  });

  async function logIn(): Promise<string> {
    const res = await bff.app.inject({ method: 'POST', url: '/api/auth/login_by_password', headers: browser(), payload: DEMO });
    expect(res.statusCode).toBe(200);
    const [cookie] = parseSetCookies(res.headers['set-cookie']);
    expect(cookie?.name).toBe(SESSION_COOKIE);
    expect(cookie?.value).toMatch(TOKEN_PATTERN);
    expect(res.body).not.toContain(cookie!.value);
    expect(res.headers[SESSION_TOKEN_HEADER]).toBeUndefined();
    return cookie!.value;
  }

  it('password sign-in sets the cookie; the cookie signs later calls in; JS never sees the token', async () => {
    const token = await logIn();
    const me = await bff.app.inject({ url: '/api/auth/check', headers: browser(token) });
    expect(me.json()).toMatchObject({ fv: 'fv-session-test', user: { is_authenticated: true, email: DEMO.email } });
    expect(me.body).not.toContain(token);
    // A token sent as a header by page script is not accepted: only the HttpOnly cookie counts.
    const header = await bff.app.inject({ url: '/api/auth/check', headers: { authorization: `Bearer ${token}` } });
    expect(header.json().user.is_authenticated).toBe(false);
  });

  it('after logout the old cookie no longer works and is cleared', async () => {
    const token = await logIn();
    const out = await bff.app.inject({ method: 'POST', url: '/api/auth/logout', headers: browser(token) });
    expect(out.statusCode).toBe(200);
    expect(parseSetCookies(out.headers['set-cookie'])[0]).toMatchObject({ name: SESSION_COOKIE, value: '', attributes: { 'max-age': '0' } });
    expect(out.json().user.is_authenticated).toBe(false);
    const replay = await bff.app.inject({ url: '/api/auth/check', headers: browser(token) });
    expect(replay.json().user.is_authenticated).toBe(false);
    expect(parseSetCookies(replay.headers['set-cookie'])[0]).toMatchObject({ value: '', attributes: { 'max-age': '0' } });
    const guarded = await bff.app.inject({ url: '/api/user/info', headers: browser(token) });
    expect(guarded.statusCode).toBe(401);
    expect(guarded.headers[SESSION_STATE_HEADER]).toBeUndefined();
  });

  it('after a password change the old cookie is dead and the new one works', async () => {
    const email = `bff.change.${Date.now()}@example.com`;
    const registered = await bff.app.inject({
      method: 'POST',
      url: '/api/auth/register',
      headers: browser(),
      payload: { email, password: 'first password 1' },
    });
    const [mail] = await core.db.query<{ text_body: string }>('SELECT text_body FROM mail_outbox WHERE to_address = $1', [email]);
    const link = /confirm=([A-Za-z0-9_-]{43})/.exec(mail!.text_body)![1];
    const confirmed = await bff.app.inject({
      method: 'POST',
      url: `/api/auth/confirm/${link}`,
      headers: browser(undefined, { cookie: linkBindingOf(registered) }),
    });
    const old = parseSetCookies(confirmed.headers['set-cookie'])[0]!.value;
    const changed = await bff.app.inject({
      method: 'POST',
      url: '/api/auth/change',
      headers: browser(old),
      payload: { current_password: 'first password 1', password: 'second password 2' },
    });
    expect(changed.statusCode).toBe(200);
    const fresh = parseSetCookies(changed.headers['set-cookie'])[0]!.value;
    expect(fresh).toMatch(TOKEN_PATTERN);
    expect(fresh).not.toBe(old);
    expect((await bff.app.inject({ url: '/api/auth/check', headers: browser(old) })).json().user.is_authenticated).toBe(false);
    expect((await bff.app.inject({ url: '/api/auth/check', headers: browser(fresh) })).json().user.email).toBe(email);
  });

  it('a forged X-Forwarded-For does not reset the per-IP limit: 429 with Retry-After reaches the browser', async () => {
    const peer = '203.0.113.50';
    for (let i = 0; i < 10; i++) {
      const res = await bff.app.inject({
        method: 'POST',
        url: '/api/auth/reset',
        remoteAddress: peer,
        headers: browser(undefined, { 'x-forwarded-for': `198.51.100.${i}` }),
        payload: { email: `xff${i}@example.com` },
      });
      expect(res.statusCode).toBe(200);
    }
    const res = await bff.app.inject({
      method: 'POST',
      url: '/api/auth/reset',
      remoteAddress: peer,
      headers: browser(undefined, { 'x-forwarded-for': '192.0.2.1', cookie: 'i18n_redirected=en' }),
      payload: { email: 'xff-last@example.com' },
    });
    expect(res.statusCode).toBe(429);
    expect(Number(res.headers['retry-after'])).toBeGreaterThan(0);
    expect(res.json()).toMatchObject({ status: 'error', code: 'rate_limited', message: 'Too many attempts. Please try again in 60 min.' });
    // Another real client still gets through.
    const other = await bff.app.inject({
      method: 'POST',
      url: '/api/auth/reset',
      remoteAddress: '203.0.113.51',
      headers: browser(),
      payload: { email: 'xff-other@example.com' },
    });
    expect(other.statusCode).toBe(200);
  });

  it('a cross-site POST is refused before it reaches core: no session, no mail', async () => {
    const before = await core.db.query('SELECT id FROM mail_outbox');
    const res = await bff.app.inject({
      method: 'POST',
      url: '/api/auth/login',
      headers: { host: HOST, origin: 'https://evil.example' },
      payload: { email: 'victim@example.com' },
    });
    expect(res.statusCode).toBe(403);
    expect(res.json()).toMatchObject({ status: 'error', code: 'csrf' });
    expect(await core.db.query('SELECT id FROM mail_outbox')).toHaveLength(before.length);
  });
});
