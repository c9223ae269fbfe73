import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { DICTIONARIES, SESSION_TOKEN_HEADER } from '@obmen/shared';
import { build, deadUpstreamUrl, json } from './helpers.ts';

const FV = 'fv-test-1';

describe('BFF /api proxy', () => {
  let ctx: Awaited<ReturnType<typeof build>>;
  beforeAll(async () => {
    ctx = await build({ frontendVersion: FV });
  });
  afterAll(() => ctx.close());
  beforeEach(() => {
    ctx.upstream.hits.length = 0;
  });

  it('adds fv as a key of a JSON answer and keeps it valid JSON', async () => {
    ctx.upstream.handle = (_req, res) => json(res, 200, { status: 'ok', items: [1, 2] });
    const res = await ctx.app.inject({ url: '/api/exchange/list?x=1' });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toMatch(/^application\/json/);
    expect(JSON.parse(res.body)).toEqual({ fv: FV, status: 'ok', items: [1, 2] });
    expect(ctx.upstream.hits[0]).toMatchObject({ method: 'GET', url: '/api/exchange/list?x=1' });
  });

  it('adds fv to an empty object', async () => {
    ctx.upstream.handle = (_req, res) => json(res, 200, '{}');
    const res = await ctx.app.inject({ url: '/api/empty' });
    expect(JSON.parse(res.body)).toEqual({ fv: FV });
  });

  it('adds fv to an empty object with inner whitespace', async () => {
    ctx.upstream.handle = (_req, res) => json(res, 200, '{ \n }');
    const res = await ctx.app.inject({ url: '/api/empty' });
    expect(JSON.parse(res.body)).toEqual({ fv: FV });
  });

  it('adds fv to a body with leading whitespace', async () => {
    ctx.upstream.handle = (_req, res) => json(res, 200, ' \r\n\t {"a": {"b": "}"}}\n');
    const res = await ctx.app.inject({ url: '/api/ws' });
    expect(JSON.parse(res.body)).toEqual({ fv: FV, a: { b: '}' } });
  });

  it('keeps a large JSON answer that arrives in many chunks whole', async () => {
    const items = Array.from({ length: 20_000 }, (_, i) => ({ id: i, name: `item ${i}` }));
    ctx.upstream.handle = (_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      const text = JSON.stringify({ items });
      for (let i = 0; i < text.length; i += 4096) res.write(text.slice(i, i + 4096));
      res.end();
    };
    const res = await ctx.app.inject({ url: '/api/big' });
    const body = JSON.parse(res.body);
    expect(body.fv).toBe(FV);
    expect(body.items).toHaveLength(20_000);
    expect(body.items[19_999]).toEqual({ id: 19_999, name: 'item 19999' });
  });

  it('passes a JSON array through unchanged (no key to add)', async () => {
    ctx.upstream.handle = (_req, res) => json(res, 200, '[1,2,3]');
    const res = await ctx.app.inject({ url: '/api/list' });
    expect(res.body).toBe('[1,2,3]');
  });

  it('passes the JSON error of the core through with its status and fv', async () => {
    ctx.upstream.handle = (_req, res) => json(res, 422, { status: 'error', code: 'validation', message: 'x' });
    const res = await ctx.app.inject({ method: 'POST', url: '/api/auth/login', payload: { email: 'a@b.test' } });
    expect(res.statusCode).toBe(422);
    expect(res.json()).toEqual({ fv: FV, status: 'error', code: 'validation', message: 'x' });
    expect(ctx.upstream.hits[0]?.body).toBe('{"email":"a@b.test"}');
  });

  it('passes non-JSON answers unchanged, byte for byte', async () => {
    const bytes = Buffer.from([0x7b, 0x00, 0xff, 0x22, 0x7d, 0x0a]);
    ctx.upstream.handle = (req, res) => {
      if (req.url === '/api/text') {
        res.writeHead(200, { 'content-type': 'text/plain; charset=utf-8' });
        res.end('{"looks":"like json"}');
      } else {
        res.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': String(bytes.length) });
        res.end(bytes);
      }
    };
    const text = await ctx.app.inject({ url: '/api/text' });
    expect(text.body).toBe('{"looks":"like json"}');
    expect(text.headers['content-type']).toBe('text/plain; charset=utf-8');
    const binary = await ctx.app.inject({ url: '/api/file' });
    expect(binary.rawPayload.equals(bytes)).toBe(true);
    expect(binary.headers['content-type']).toBe('application/octet-stream');
  });

  it('never lets the session token header reach the client', async () => {
    ctx.upstream.handle = (_req, res) => json(res, 200, { user: { is_authenticated: true } }, { [SESSION_TOKEN_HEADER]: 'secret-token-value' });
    const res = await ctx.app.inject({ method: 'POST', url: '/api/auth/login_by_password', payload: {} });
    expect(res.statusCode).toBe(200);
    expect(res.headers[SESSION_TOKEN_HEADER]).toBeUndefined();
    expect(JSON.stringify(res.headers)).not.toContain('secret-token-value');
    expect(res.body).not.toContain('secret-token-value');
  });

  it('does not pass on authorization, x-obmen-locale, cookie or x-forwarded-for as the client sent them', async () => {
    ctx.upstream.handle = (_req, res) => json(res, 200, {});
    await ctx.app.inject({
      url: '/api/auth/check',
      remoteAddress: '203.0.113.7',
      headers: {
        authorization: 'Bearer forged',
        'x-obmen-locale': 'en',
        'x-forwarded-for': '10.9.8.7',
        'x-forwarded-host': 'evil.test',
        'x-real-ip': '10.9.8.7',
        cookie: 'other=1',
      },
    });
    const seen = ctx.upstream.hits[0]!.headers;
    expect(seen.authorization).toBeUndefined();
    expect(seen['x-obmen-locale']).toBeUndefined();
    expect(seen['x-forwarded-host']).toBeUndefined();
    expect(seen['x-real-ip']).toBeUndefined();
    expect(seen.cookie).toBeUndefined();
    expect(seen['x-forwarded-for']).toBe('203.0.113.7');
  });

  it('sends the remember_token cookie as the Bearer token, over a forged Authorization, and no cookies', async () => {
    ctx.upstream.handle = (_req, res) => json(res, 200, {});
    const token = 'A'.repeat(43);
    await ctx.app.inject({ url: '/api/auth/check', headers: { authorization: 'Bearer forged', cookie: `remember_token=${token}; other=1` } });
    const seen = ctx.upstream.hits[0]!.headers;
    expect(seen.authorization).toBe(`Bearer ${token}`);
    expect(seen.cookie).toBeUndefined();
  });

  it('turns the session token of the core into an HttpOnly cookie, never a header', async () => {
    const token = 'b'.repeat(43);
    ctx.upstream.handle = (_req, res) => json(res, 200, { user: { is_authenticated: true } }, { [SESSION_TOKEN_HEADER]: token });
    const res = await ctx.app.inject({ method: 'POST', url: '/api/auth/login_by_password', payload: {} });
    expect(res.headers[SESSION_TOKEN_HEADER]).toBeUndefined();
    expect(res.body).not.toContain(token);
    const cookie = res.cookies.find((c) => c.name === 'remember_token');
    expect(cookie).toMatchObject({ value: token, httpOnly: true, sameSite: 'Lax', path: '/' });
  });

  it('turns the i18n_redirected=en cookie into x-obmen-locale: en upstream, over a forged header', async () => {
    ctx.upstream.handle = (_req, res) => json(res, 200, {});
    await ctx.app.inject({ url: '/api/content/menu', headers: { cookie: 'i18n_redirected=en', 'x-obmen-locale': 'ru' } });
    expect(ctx.upstream.hits[0]!.headers['x-obmen-locale']).toBe('en');
    await ctx.app.inject({ url: '/api/content/menu', headers: { cookie: 'foo=bar; i18n_redirected=ru' } });
    expect(ctx.upstream.hits[1]!.headers['x-obmen-locale']).toBe('ru');
  });

  it('turns the remembered invite code (obmen_ref cookie) into x-obmen-ref upstream; a forged header or a bad cookie passes nothing', async () => {
    ctx.upstream.handle = (_req, res) => json(res, 200, {});
    await ctx.app.inject({ method: 'POST', url: '/api/auth/register', headers: { cookie: 'obmen_ref=ABCD2345', 'x-obmen-ref': 'FORGED99' }, payload: {} });
    expect(ctx.upstream.hits[0]!.headers['x-obmen-ref']).toBe('ABCD2345');
    await ctx.app.inject({ method: 'POST', url: '/api/auth/register', headers: { 'x-obmen-ref': 'FORGED99' }, payload: {} });
    expect(ctx.upstream.hits[1]!.headers['x-obmen-ref']).toBeUndefined();
    await ctx.app.inject({ method: 'POST', url: '/api/auth/register', headers: { cookie: 'obmen_ref=<script>' }, payload: {} });
    expect(ctx.upstream.hits[2]!.headers['x-obmen-ref']).toBeUndefined();
  });

  it('passes a 503 of the core on GET through once, without retrying', async () => {
    ctx.upstream.handle = (_req, res) => json(res, 503, { status: 'error', code: 'maintenance', message: 'later' });
    const res = await ctx.app.inject({ url: '/api/exchange/list' });
    expect(res.statusCode).toBe(503);
    expect(res.json()).toMatchObject({ status: 'error', code: 'maintenance' });
    // A retry would have happened before the answer was sent.
    expect(ctx.upstream.hits.filter((hit) => hit.url === '/api/exchange/list')).toHaveLength(1);
  });

  it('answers 504 JSON, localized, when the core is slower than the timeout', async () => {
    const timers: NodeJS.Timeout[] = [];
    ctx.upstream.handle = (_req, res) => {
      timers.push(setTimeout(() => json(res, 200, { late: true }), 3_000));
    };
    const started = performance.now();
    const res = await ctx.app.inject({ url: '/api/slow', headers: { cookie: 'i18n_redirected=en' } });
    const elapsed = performance.now() - started;
    timers.forEach(clearTimeout);
    expect(res.statusCode).toBe(504);
    expect(res.json()).toEqual({ status: 'error', code: 'upstream_timeout', message: DICTIONARIES.en['error.upstream_timeout'] });
    expect(elapsed).toBeGreaterThanOrEqual(450);
    // Far below the 3 s the core would take: the BFF gave up at its own timeout (slack for a busy CI machine).
    expect(elapsed).toBeLessThan(2_500);
    expect(ctx.upstream.hits).toHaveLength(1);
  });

  it('sends the security headers on proxied answers', async () => {
    ctx.upstream.handle = (_req, res) => json(res, 200, {});
    const res = await ctx.app.inject({ url: '/api/anything' });
    expect(res.headers['content-security-policy']).toContain("frame-ancestors 'none'");
    expect(res.headers['x-content-type-options']).toBe('nosniff');
    expect(res.headers['x-frame-options']).toBe('DENY');
    expect(res.headers['strict-transport-security']).toBeUndefined();
  });
});

describe('BFF with the core down', () => {
  let ctx: Awaited<ReturnType<typeof build>>;
  beforeAll(async () => {
    ctx = await build({ upstreamUrl: await deadUpstreamUrl() });
  });
  afterAll(() => ctx.close());

  it('answers 503 JSON upstream_unavailable, in Russian by default', async () => {
    const res = await ctx.app.inject({ url: '/api/exchange/list' });
    expect(res.statusCode).toBe(503);
    expect(res.headers['content-type']).toMatch(/^application\/json/);
    expect(res.json()).toEqual({ status: 'error', code: 'upstream_unavailable', message: DICTIONARIES.ru['error.upstream_unavailable'] });
    expect(res.headers['content-security-policy']).toContain("frame-ancestors 'none'");
    expect(res.headers['x-content-type-options']).toBe('nosniff');
  });

  it('answers a POST with 503 in English for the i18n_redirected=en cookie (over a real socket)', async () => {
    // inject() reports the request stream that the proxy destroys as an error; a socket shows what a browser gets.
    const address = await ctx.app.listen({ host: '127.0.0.1', port: 0 });
    const res = await fetch(`${address}/api/auth/login`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', cookie: 'i18n_redirected=en' },
      body: JSON.stringify({ email: 'a@b.test' }),
    });
    expect(res.status).toBe(503);
    expect(await res.json()).toEqual({ status: 'error', code: 'upstream_unavailable', message: DICTIONARIES.en['error.upstream_unavailable'] });
  });
});
