import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LINK_BINDING_COOKIE, LINK_BINDING_HEADER, SESSION_COOKIE, TOKEN_PATTERN } from '@obmen/shared';
import { rawRequest, type TRawAnswer } from '../../core/test/raw-http.ts';
import { buildBff, linkBindingOf, parseSetCookies, startRealCore } from './session-helpers.ts';
import { freshEmail, lastMailTo, linkToken } from '../../core/test/auth-helpers.ts';

const HOST = 'obmen.test';

function cookiesOf(res: TRawAnswer) {
  return parseSetCookies(res.headers['set-cookie']);
}

/**
 * A mailed link belongs to the browser that asked for it (shared/src/auth.ts LINK_BINDING_*):
 * the BFF keeps the core's binding in a cookie and hands it back on the auth calls. Over real
 * sockets, plain http, a real core.
 */
const SCHEMES = [
  { scheme: 'http', env: {}, secure: {} },
  { scheme: 'https', env: { PUBLIC_URL: `https://${HOST}` }, secure: { secure: true } },
] as const;

describe.each(SCHEMES)('the link_binding cookie (real sockets, real core, $scheme)', ({ scheme, env, secure }) => {
  let core: Awaited<ReturnType<typeof startRealCore>>;
  let bff: Awaited<ReturnType<typeof buildBff>>;
  let origin: string;
  beforeAll(async () => {
    core = await startRealCore();
    bff = await buildBff(core.url, env);
    origin = await bff.app.listen({ host: '127.0.0.1', port: 0 });
  });
  afterAll(async () => {
    await bff?.close();
    await core?.close();
  });

  const send = (method: 'GET' | 'POST', path: string, options: { body?: object; cookie?: string; headers?: Record<string, string> } = {}) =>
    rawRequest(origin, path, {
      method,
      headers: {
        host: HOST,
        origin: `${scheme}://${HOST}`,
        ...(options.body ? { 'content-type': 'application/json' } : {}),
        ...(options.cookie ? { cookie: options.cookie } : {}),
        ...options.headers,
      },
      ...(options.body ? { body: JSON.stringify(options.body) } : {}),
    });

  it('is HttpOnly, SameSite=Lax, Path=/api/auth, Secure only over https, and the core header never reaches the browser', async () => {
    const email = freshEmail('bffbind');
    const asked = await send('POST', '/api/auth/register', { body: { email, password: 'a long enough passphrase 42' } });
    expect(asked.status, asked.body).toBe(200);
    expect(asked.headers[LINK_BINDING_HEADER]).toBeUndefined();
    const [cookie, ...others] = cookiesOf(asked);
    expect(others).toEqual([]);
    expect(cookie!.name).toBe(LINK_BINDING_COOKIE);
    expect(cookie!.value).toMatch(TOKEN_PATTERN);
    expect(cookie!.attributes).toEqual({ 'max-age': String(24 * 60 * 60), path: '/api/auth', httponly: true, samesite: 'Lax', ...secure });
  });

  it('the asking browser is signed in by the link at once; another sees the masked address and is signed in only by its confirm', async () => {
    const email = freshEmail('bind');
    const asked = await send('POST', '/api/auth/register', { body: { email, password: 'a long enough passphrase 42' } });
    const binding = linkBindingOf(asked);
    const token = linkToken(await lastMailTo(core.db, email));

    // Another browser, even one that forges the core's header: nothing is spent.
    const forged = { [LINK_BINDING_HEADER]: binding.split('=')[1]! };
    const preview = await send('GET', `/api/auth/confirm/${token}`, { headers: forged });
    expect(preview.status).toBe(200);
    expect(JSON.parse(preview.body)).toMatchObject({ status: 'ok', email: 'b***@e***.com', same_browser: false });
    const refused = await send('POST', `/api/auth/confirm/${token}`, { body: {}, headers: forged });
    expect(refused.status).toBe(409);
    expect(JSON.parse(refused.body).code).toBe('link_confirm_required');
    expect(cookiesOf(refused)).toEqual([]);

    expect(JSON.parse((await send('GET', `/api/auth/confirm/${token}`, { cookie: binding })).body).same_browser).toBe(true);
    const signedIn = await send('POST', `/api/auth/confirm/${token}`, { body: {}, cookie: binding });
    expect(signedIn.status, signedIn.body).toBe(200);
    expect(cookiesOf(signedIn).map((c) => c.name)).toEqual([SESSION_COOKIE]);
  });
});
