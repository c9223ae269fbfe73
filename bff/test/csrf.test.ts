import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { json, startFakeUpstream, type TFakeUpstream } from './helpers.ts';
import { buildBff } from './session-helpers.ts';

const HOST = 'obmen.test';

describe('BFF CSRF defence', () => {
  let upstream: TFakeUpstream;
  let bff: Awaited<ReturnType<typeof buildBff>>;
  beforeAll(async () => {
    upstream = await startFakeUpstream();
    upstream.handle = (_req, res) => json(res, 200, { status: 'ok' });
    bff = await buildBff(upstream.url, { PUBLIC_URL: 'https://obmen.example' });
  });
  afterAll(async () => {
    await bff.close();
    await upstream.close();
  });
  beforeEach(() => {
    upstream.hits.length = 0;
  });

  const send = (method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE', headers: Record<string, string>, url = '/api/auth/change') =>
    bff.app.inject({
      method,
      url,
      headers: { host: HOST, cookie: 'remember_token=' + 'A'.repeat(43), ...headers },
      ...(method === 'GET' ? {} : { payload: { password: 'x' } }),
    });

  for (const method of ['POST', 'PUT', 'PATCH', 'DELETE'] as const) {
    it(`${method} from a cross-site Origin: 403 JSON, never forwarded`, async () => {
      const res = await send(method, { origin: 'https://evil.example' });
      expect(res.statusCode).toBe(403);
      expect(res.headers['content-type']).toMatch(/^application\/json/);
      expect(res.json()).toEqual({ status: 'error', code: 'csrf', message: 'Запрос пришёл с другого сайта и заблокирован.' });
      expect(upstream.hits).toHaveLength(0);
    });
  }

  it('refuses Sec-Fetch-Site cross-site and same-site when Origin is absent, localized', async () => {
    for (const site of ['cross-site', 'same-site']) {
      const res = await send('POST', { 'sec-fetch-site': site, cookie: 'i18n_redirected=en' });
      expect(res.statusCode).toBe(403);
      expect(res.json().message).toBe('This request came from another site and was blocked.');
    }
    expect(upstream.hits).toHaveLength(0);
  });

  it('refuses an opaque Origin ("null": sandboxed frames, data: URLs)', async () => {
    expect((await send('POST', { origin: 'null' })).statusCode).toBe(403);
    expect(upstream.hits).toHaveLength(0);
  });

  it('refuses a look-alike origin: other scheme, port or a suffix', async () => {
    for (const origin of [`https://${HOST}`, `http://${HOST}:8080`, `http://${HOST}.evil.example`, `http://evil${HOST}`]) {
      expect((await send('POST', { origin })).statusCode, origin).toBe(403);
    }
    expect(upstream.hits).toHaveLength(0);
  });

  it('covers the BFF’s own POST routes too (/api/lang)', async () => {
    const res = await bff.app.inject({ method: 'POST', url: '/api/lang', headers: { host: HOST, origin: 'https://evil.example' }, payload: { lang: 'en' } });
    expect(res.statusCode).toBe(403);
    expect(res.headers['set-cookie']).toBeUndefined();
    expect(upstream.hits).toHaveLength(0);
  });

  it('forwards same-origin requests, the configured public origin, and non-browser callers', async () => {
    expect((await send('POST', { origin: `http://${HOST}` })).statusCode).toBe(200);
    expect((await send('POST', { 'sec-fetch-site': 'same-origin' })).statusCode).toBe(200);
    expect((await send('POST', { origin: 'https://obmen.example' })).statusCode).toBe(200);
    expect((await send('POST', {})).statusCode).toBe(200);
    expect(upstream.hits).toHaveLength(4);
  });

  it('lets GET through whatever its origin: GETs change nothing', async () => {
    expect((await send('GET', { origin: 'https://evil.example', 'sec-fetch-site': 'cross-site' }, '/api/auth/check')).statusCode).toBe(200);
    expect(upstream.hits).toHaveLength(1);
  });
});
