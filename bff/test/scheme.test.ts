import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LINK_BINDING_COOKIE, LOCALE_COOKIE, SESSION_COOKIE, TOKEN_PATTERN } from '@obmen/shared';
import { requireRealSiteBuild } from './helpers.ts';
import { rawRequest, type TRawAnswer } from '../../core/test/raw-http.ts';
import { buildBff, linkBindingOf, parseSetCookies, startRealCore, type TCookie } from './session-helpers.ts';
import { DEMO, lastMailTo, linkToken } from '../../core/test/auth-helpers.ts';

const HOST = 'obmen.test';
const HSTS = 'max-age=31536000; includeSubDomains';

function cookieNamed(res: TRawAnswer, name: string): TCookie {
  const cookie = parseSetCookies(res.headers['set-cookie']).find((c) => c.name === name);
  if (!cookie) throw new Error(`no ${name} cookie in ${res.status} ${JSON.stringify(res.headers)} ${res.body.slice(0, 300)}`);
  return cookie;
}

/**
 * The scheme is decided once, when the request arrives: over real sockets a POST whose body
 * was streamed to the core lost it (inject's fake socket hid that), and page renders ignored it.
 */
const PROXIES: { name: string; env: Record<string, string>; trustProxy: string | false; proto: Record<string, string> }[] = [
  {
    name: 'behind a trusted proxy that says X-Forwarded-Proto: https',
    env: { TRUST_PROXY: '127.0.0.1' },
    trustProxy: '127.0.0.1',
    proto: { 'x-forwarded-proto': 'https' },
  },
  { name: 'with an https PUBLIC_URL', env: { PUBLIC_URL: `https://${HOST}` }, trustProxy: false, proto: {} },
];

describe.each(PROXIES)('https $name: every Set-Cookie is Secure, every answer has HSTS (real sockets, real core)', ({ env, trustProxy, proto }) => {
  let core: Awaited<ReturnType<typeof startRealCore>>;
  let bff: Awaited<ReturnType<typeof buildBff>>;
  let origin: string;
  beforeAll(async () => {
    core = await startRealCore();
    bff = await buildBff(core.url, { ...env, SITE_DIST: requireRealSiteBuild() }, { trustProxy });
    origin = await bff.app.listen({ host: '127.0.0.1', port: 0 });
  });
  afterAll(async () => {
    await bff?.close();
    await core?.close();
  });

  const headers = { ...proto, host: HOST, origin: `https://${HOST}`, 'content-type': 'application/json' };
  const post = (path: string, body: object = {}, cookie?: string) =>
    rawRequest(origin, path, { method: 'POST', headers: { ...headers, ...(cookie ? { cookie } : {}) }, body: JSON.stringify(body) });

  function expectSecureSession(res: TRawAnswer): string {
    expect(res.status, res.body).toBe(200);
    const cookie = cookieNamed(res, SESSION_COOKIE);
    expect(cookie.value).toMatch(TOKEN_PATTERN);
    expect(cookie.attributes).toMatchObject({ secure: true, httponly: true, path: '/' });
    expect(res.headers['strict-transport-security']).toBe(HSTS);
    return cookie.value;
  }

  it('sign-in by password', async () => {
    expectSecureSession(await post('/api/auth/login_by_password', DEMO));
  });

  it('sign-in by a mailed link', async () => {
    const asked = await post('/api/auth/login', { email: DEMO.email });
    expect(asked.status).toBe(200);
    expect(cookieNamed(asked, LINK_BINDING_COOKIE).attributes).toMatchObject({ secure: true, httponly: true, samesite: 'Lax', path: '/api/auth' });
    expectSecureSession(await post(`/api/auth/login/${linkToken(await lastMailTo(core.db, DEMO.email))}`, {}, linkBindingOf(asked)));
  });

  it('registration, through its confirmation link', async () => {
    const email = `scheme-${Math.random().toString(36).slice(2)}@example.test`;
    const asked = await post('/api/auth/register', { email, password: 'a long enough passphrase 42' });
    expect(asked.status).toBe(200);
    expect(cookieNamed(asked, LINK_BINDING_COOKIE).attributes.secure).toBe(true);
    expectSecureSession(await post(`/api/auth/confirm/${linkToken(await lastMailTo(core.db, email))}`, {}, linkBindingOf(asked)));
  });

  it('the language cookie', async () => {
    const res = await post('/api/lang', { lang: 'en' });
    expect(res.status).toBe(200);
    expect(cookieNamed(res, LOCALE_COOKIE).attributes.secure).toBe(true);
    expect(res.headers['strict-transport-security']).toBe(HSTS);
  });

  it('a page render renews the session, and clears a dead one, with Secure', async () => {
    const token = expectSecureSession(await post('/api/auth/login_by_password', DEMO));
    // Seen two days ago: the core renews the session on its next use.
    await core.db.query(`UPDATE sessions SET last_seen_at = now() - interval '2 days'`);
    const page = await rawRequest(origin, '/', { headers: { ...proto, host: HOST, cookie: `${SESSION_COOKIE}=${token}` } });
    expect(page.status).toBe(200);
    const renewed = cookieNamed(page, SESSION_COOKIE);
    expect(renewed.value).toBe(token);
    expect(renewed.attributes).toMatchObject({ secure: true, httponly: true, path: '/', samesite: 'Lax' });
    expect(page.headers['strict-transport-security']).toBe(HSTS);

    const dead = await rawRequest(origin, '/', { headers: { ...proto, host: HOST, cookie: `${SESSION_COOKIE}=${'B'.repeat(43)}` } });
    expect(dead.status).toBe(200);
    expect(cookieNamed(dead, SESSION_COOKIE).attributes).toMatchObject({ secure: true, 'max-age': '0', httponly: true, path: '/' });
  });
});
