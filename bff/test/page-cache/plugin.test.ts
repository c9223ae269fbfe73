import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { FastifyInstance } from 'fastify';
import { build, json, requireRealSiteBuild } from '../helpers.ts';
import { anonymousCheck, articleAnswer, EMPTY_MENU, localeOf } from '../core-answers.ts';

/** The page cache's decorator (statistics and controls). */
const cache = (ctx: { app: FastifyInstance }) => ctx.app.pageCache!;

type TRender = { url: string; cookie: string | undefined };
const renders = (): TRender[] => ((globalThis as { __pageRenders?: TRender[] }).__pageRenders ??= []);

/**
 * A stand-in Astro build whose article pages say which locale they were rendered for and
 * how many times, carry a page CSP header like Astro's, and stream in several chunks.
 */
function makeArticleSiteDist(): { dir: string; remove: () => void } {
  const dir = mkdtempSync(join(tmpdir(), 'obmen-bff-page-cache-'));
  mkdirSync(join(dir, 'client', '_astro'), { recursive: true });
  mkdirSync(join(dir, 'server'), { recursive: true });
  writeFileSync(join(dir, 'client', '_astro', 'page.Ab12Cd.js'), 'export const x = 1;\n');
  writeFileSync(
    join(dir, 'server', 'entry.mjs'),
    `export async function handler(req, res, next, locals) {
  const list = (globalThis.__pageRenders ??= []);
  const url = req.url;
  if (!url.startsWith('/article/') && url !== '/404') return next();
  list.push({ url, cookie: req.headers.cookie });
  const locale = /i18n_redirected=en/.test(req.headers.cookie ?? '') ? 'en' : 'ru';
  const forced = (globalThis.__pageStatus ??= {})[url];
  if (url === '/404' || url.startsWith('/article/missing') || forced === 404) {
    res.writeHead(404, { 'content-type': 'text/html' });
    return res.end('<!doctype html><p>not found</p>');
  }
  const headers = { 'content-type': 'text/html', 'content-security-policy': "default-src 'self'; script-src 'self' 'sha256-AbCd" + locale + "='" };
  if (url.startsWith('/article/cookie')) headers['set-cookie'] = 'x=1; Path=/';
  res.writeHead(200, headers);
  const n = list.length;
  res.write('<!doctype html><html lang="' + locale + '"><body><article data-render="' + n + '">');
  await new Promise((resolve) => setImmediate(resolve));
  res.write(Buffer.from('<h1>' + (locale === 'en' ? 'Fees' : 'Комиссии') + ' ' + url + '</h1>'));
  if (url.startsWith('/article/broken')) return res.destroy(new Error('render failed'));
  res.write(new TextEncoder().encode('<p>' + 'Exchange fees are listed below. '.repeat(120) + '</p>'));
  res.end('</article></body></html>');
}
`,
  );
  return { dir, remove: () => rmSync(dir, { recursive: true, force: true }) };
}

describe('BFF page cache for signed-out article pages', () => {
  let ctx: Awaited<ReturnType<typeof build>>;
  let site: ReturnType<typeof makeArticleSiteDist>;
  let contentVersion = '1.0';
  const versionCalls = () => ctx.upstream.hits.filter((hit) => hit.url === '/api/content/version').length;

  beforeAll(async () => {
    site = makeArticleSiteDist();
    // Polls only when asked (pollNow) or at the first visitor, so the test controls the clock.
    ctx = await build({ siteDist: site.dir, env: { PAGE_CACHE_POLL_MS: '60000' } });
    ctx.upstream.handle = (req, res) => {
      if (req.url === '/api/content/version') return json(res, 200, { version: contentVersion });
      return json(res, 200, { status: 'ok' });
    };
  });
  afterAll(async () => {
    await ctx.close();
    site.remove();
  });
  beforeEach(async () => {
    cache(ctx).clear();
    await cache(ctx).pollNow();
    renders().length = 0;
  });

  const get = async (url: string, headers: Record<string, string> = {}, method: 'GET' | 'HEAD' = 'GET') => {
    const res = await ctx.app.inject({ method, url, headers });
    await cache(ctx).settled();
    return res;
  };

  it('serves the second visit from memory with the same body and headers, page CSP included', async () => {
    const first = await get('/article/fees');
    expect(first.statusCode).toBe(200);
    expect(first.headers['x-page-cache']).toBe('miss');
    const second = await get('/article/fees');
    expect(second.headers['x-page-cache']).toBe('hit');
    expect(renders()).toHaveLength(1);
    expect(second.body).toBe(first.body);
    for (const name of [
      'content-type',
      'content-security-policy',
      'x-content-type-options',
      'x-frame-options',
      'referrer-policy',
      'permissions-policy',
      'cross-origin-opener-policy',
    ]) {
      expect(second.headers[name], name).toBe(first.headers[name]);
    }
    expect(second.headers['content-security-policy']).toContain("'sha256-AbCdru='");
    expect(second.headers['content-length']).toBe(String(Buffer.byteLength(first.body)));
    expect(second.headers.vary).toBe('Accept-Encoding');
    expect(second.headers.etag).toMatch(/^"[A-Za-z0-9_-]{22}"$/);
    expect(second.headers['set-cookie']).toBeUndefined();
  });

  it('keeps one entry per locale cookie', async () => {
    await get('/article/fees');
    await get('/article/fees', { cookie: 'i18n_redirected=en' });
    const ru = await get('/article/fees', { cookie: 'i18n_redirected=xx' });
    const en = await get('/article/fees', { cookie: 'other=1; i18n_redirected=en' });
    expect(renders()).toHaveLength(2);
    expect(ru.headers['x-page-cache']).toBe('hit');
    expect(ru.body).toContain('lang="ru"');
    expect(en.headers['x-page-cache']).toBe('hit');
    expect(en.body).toContain('lang="en"');
    expect(en.headers['content-security-policy']).toContain("'sha256-AbCden='");
  });

  it('serves brotli or gzip precompressed when accepted, identity otherwise', async () => {
    const plain = (await get('/article/fees')).body;
    const br = await get('/article/fees', { 'accept-encoding': 'gzip, deflate, br, zstd' });
    expect(br.headers['content-encoding']).toBe('br');
    expect(brotliDecompressSync(br.rawPayload).toString()).toBe(plain);
    expect(Number(br.headers['content-length'])).toBe(br.rawPayload.length);
    expect(br.rawPayload.length).toBeLessThan(plain.length / 5);
    const gz = await get('/article/fees', { 'accept-encoding': 'gzip' });
    expect(gz.headers['content-encoding']).toBe('gzip');
    expect(gunzipSync(gz.rawPayload).toString()).toBe(plain);
    const refused = await get('/article/fees', { 'accept-encoding': 'br;q=0, gzip;q=0' });
    expect(refused.headers['content-encoding']).toBeUndefined();
    expect(refused.body).toBe(plain);
    expect(new Set([br.headers.etag, gz.headers.etag, refused.headers.etag]).size).toBe(3);
    expect(br.headers.vary).toBe('Accept-Encoding');
    expect(renders()).toHaveLength(1);
  });

  it('answers 304 to a matching If-None-Match, 200 otherwise, and HEAD without a body', async () => {
    await get('/article/fees');
    const hit = await get('/article/fees', { 'accept-encoding': 'gzip' });
    const again = await get('/article/fees', { 'accept-encoding': 'gzip', 'if-none-match': `"nope", W/${hit.headers.etag}` });
    expect(again.statusCode).toBe(304);
    expect(again.body).toBe('');
    expect(again.headers.etag).toBe(hit.headers.etag);
    expect(again.headers['content-security-policy']).toBe(hit.headers['content-security-policy']);
    expect((await get('/article/fees', { 'if-none-match': '"other"' })).statusCode).toBe(200);
    const head = await get('/article/fees', {}, 'HEAD');
    expect(head.statusCode).toBe(200);
    expect(head.body).toBe('');
    expect(head.headers['x-page-cache']).toBe('hit');
    expect(Number(head.headers['content-length'])).toBeGreaterThan(1000);
  });

  it('never serves a signed-in visitor from the cache, and a signed-in visit never fills it', async () => {
    const signedIn = { cookie: 'remember_token=abc; i18n_redirected=ru' };
    await get('/article/fees', signedIn);
    await get('/article/fees', signedIn);
    expect(renders()).toHaveLength(2);
    const anonymous = await get('/article/fees');
    expect(anonymous.headers['x-page-cache']).toBe('miss');
    expect((await get('/article/fees')).headers['x-page-cache']).toBe('hit');
    const after = await get('/article/fees', signedIn);
    expect(after.headers['x-page-cache']).toBeUndefined();
    expect(renders()).toHaveLength(4);
    expect(renders()[3]!.cookie).toContain('remember_token=abc');
  });

  it('stores only complete 200 HTML answers without cookies, for plain article paths', async () => {
    for (const url of ['/article/missing', '/article/cookie', '/article/fees?utm=1', '/article/Fees', '/article/fees/extra']) {
      await get(url);
      await get(url);
    }
    expect(renders()).toHaveLength(10);
    // A render that fails half-way is not stored either.
    await get('/article/broken').catch(() => undefined);
    await get('/article/broken').catch(() => undefined);
    expect(renders()).toHaveLength(12);
    expect(cache(ctx).stats().entries).toBe(0);
  });

  it('drops everything when the core’s content version changes', async () => {
    await get('/article/fees');
    await get('/article/faq');
    expect((await get('/article/fees')).headers['x-page-cache']).toBe('hit');
    const before = cache(ctx).stats().invalidations;
    await cache(ctx).pollNow();
    expect(cache(ctx).stats().entries).toBe(2);
    contentVersion = '2.0';
    await cache(ctx).pollNow();
    expect(cache(ctx).stats()).toMatchObject({ entries: 0, invalidations: before + 1, version: '2.0' });
    expect((await get('/article/fees')).headers['x-page-cache']).toBe('miss');
    expect((await get('/article/fees')).headers['x-page-cache']).toBe('hit');
  });

  it('does not store a page rendered while the version changed', async () => {
    const rendering = get('/article/slow');
    contentVersion = '3.0';
    await cache(ctx).pollNow();
    await rendering;
    expect((await get('/article/slow')).headers['x-page-cache']).toBe('miss');
  });

  it('renders a cold page once for many simultaneous visitors, who all get it', async () => {
    const answers = await Promise.all(Array.from({ length: 12 }, () => ctx.app.inject({ url: '/article/burst' })));
    await cache(ctx).settled();
    expect(renders().filter((r) => r.url === '/article/burst')).toHaveLength(1);
    expect(new Set(answers.map((a) => a.body)).size).toBe(1);
    expect(answers.map((a) => a.statusCode)).toEqual(Array(12).fill(200));
    expect(answers.filter((a) => a.headers['x-page-cache'] === 'hit')).toHaveLength(11);
  });

  it('asks the core for the version once per poll, not per page view', async () => {
    const before = versionCalls();
    await Promise.all(Array.from({ length: 200 }, () => get('/article/fees')));
    expect(versionCalls() - before).toBeLessThanOrEqual(1);
  });

  it('answers hits on a real socket before Fastify (the fast path), with the same bytes and headers', async () => {
    const address = await ctx.app.listen({ port: 0, host: '127.0.0.1' });
    try {
      const viaInject = await get('/article/fees', { cookie: 'i18n_redirected=en' });
      const before = cache(ctx).stats();
      const res = await fetch(`${address}/article/fees`, { headers: { cookie: 'theme=x; i18n_redirected=en', 'accept-encoding': 'identity' } });
      const body = await res.text();
      expect(res.status).toBe(200);
      expect(res.headers.get('x-page-cache')).toBe('hit');
      expect(body).toBe(viaInject.body);
      expect(res.headers.get('content-security-policy')).toBe(viaInject.headers['content-security-policy']);
      expect(res.headers.get('x-frame-options')).toBe('DENY');
      expect(cache(ctx).stats().fastHits).toBe(before.fastHits + 1);
      const gz = await fetch(`${address}/article/fees`, { headers: { cookie: 'i18n_redirected=en', 'accept-encoding': 'gzip' } });
      expect(gz.headers.get('content-encoding')).toBe('gzip');
      expect(await gz.text()).toBe(viaInject.body);
      const notModified = await fetch(`${address}/article/fees`, {
        headers: { cookie: 'i18n_redirected=en', 'if-none-match': gz.headers.get('etag')!, 'accept-encoding': 'gzip' },
      });
      expect(notModified.status).toBe(304);
      // Signed in, proxied or odd cookies: the normal path (never a cached page for a session).
      const rendered = renders().length;
      const signedIn = await fetch(`${address}/article/fees`, { headers: { cookie: 'i18n_redirected=en;remember_token=abc' } });
      await signedIn.text();
      expect(signedIn.headers.get('x-page-cache')).toBeNull();
      expect(renders()).toHaveLength(rendered + 1);
      const proxied = await fetch(`${address}/article/fees`, { headers: { cookie: 'i18n_redirected=en', 'x-forwarded-proto': 'https' } });
      await proxied.text();
      expect(proxied.headers.get('x-page-cache')).toBe('hit');
      expect(cache(ctx).stats().fastHits).toBe(before.fastHits + 3);
      // Everything else on the socket still reaches Fastify.
      const other = await fetch(`${address}/_astro/page.Ab12Cd.js`);
      expect(other.status).toBe(200);
      await other.text();
    } finally {
      await ctx.app.server.close();
    }
  });
});

describe('BFF page cache expiry and start-up', () => {
  let ctx: Awaited<ReturnType<typeof build>>;
  let site: ReturnType<typeof makeArticleSiteDist>;
  /** The page cache's clock: the tests move it past the TTL instead of sleeping. */
  let now = Date.parse('2026-11-23T09:00:00Z');
  const clock = { now: () => now };
  beforeAll(async () => {
    site = makeArticleSiteDist();
    ctx = await build({ siteDist: site.dir, clock, env: { PAGE_CACHE_TTL_MS: '300', PAGE_CACHE_POLL_MS: '60000' } });
    ctx.upstream.handle = (req, res) => json(res, 200, req.url === '/api/content/version' ? { version: '7.0' } : { status: 'ok' });
  });
  afterAll(async () => {
    await ctx.close();
    site.remove();
  });

  it('stores nothing until the content version is known, then keeps pages for the TTL only', async () => {
    renders().length = 0;
    await ctx.app.inject({ url: '/article/terms' });
    expect(cache(ctx).stats().entries).toBe(0);
    await cache(ctx).pollNow();
    await ctx.app.inject({ url: '/article/terms' });
    await cache(ctx).settled();
    expect((await ctx.app.inject({ url: '/article/terms' })).headers['x-page-cache']).toBe('hit');
    now += 299;
    expect((await ctx.app.inject({ url: '/article/terms' })).headers['x-page-cache']).toBe('hit');
    now += 2;
    expect((await ctx.app.inject({ url: '/article/terms' })).headers['x-page-cache']).toBe('miss');
    expect(renders()).toHaveLength(3);
  });

  it('serves the expired copy while one visitor refreshes it, and drops it when the refresh fails', async () => {
    await cache(ctx).pollNow();
    await ctx.app.inject({ url: '/article/aml' });
    await cache(ctx).settled();
    const first = await ctx.app.inject({ url: '/article/aml' });
    expect(first.headers['x-page-cache']).toBe('hit');
    now += 301;
    renders().length = 0;
    const during = await Promise.all(Array.from({ length: 6 }, () => ctx.app.inject({ url: '/article/aml' })));
    expect(during.filter((r) => r.headers['x-page-cache'] === 'miss')).toHaveLength(1);
    expect(during.filter((r) => r.headers['x-page-cache'] === 'hit').map((r) => r.body)).toEqual(Array(5).fill(first.body));
    await cache(ctx).settled();
    expect(renders()).toHaveLength(1);
    const fresh = await ctx.app.inject({ url: '/article/aml' });
    expect(fresh.headers['x-page-cache']).toBe('hit');
    expect(fresh.body).not.toBe(first.body);

    now += 301;
    (globalThis as { __pageStatus?: Record<string, number> }).__pageStatus = { '/article/aml': 404 };
    try {
      expect((await ctx.app.inject({ url: '/article/aml' })).statusCode).toBe(404);
      await cache(ctx).settled();
      expect((await ctx.app.inject({ url: '/article/aml' })).statusCode).toBe(404);
    } finally {
      (globalThis as { __pageStatus?: Record<string, number> }).__pageStatus = {};
    }
  });

  it('can be switched off', async () => {
    const off = await build({ siteDist: site.dir, env: { PAGE_CACHE_TTL_MS: '0' } });
    try {
      renders().length = 0;
      for (let i = 0; i < 3; i++) expect((await off.app.inject({ url: '/article/terms' })).headers['x-page-cache']).toBeUndefined();
      expect(renders()).toHaveLength(3);
      expect(off.upstream.hits.filter((hit) => hit.url === '/api/content/version')).toEqual([]);
    } finally {
      await off.close();
    }
  });
});

/** The real Astro build: its per-page CSP (hashes of this HTML) must survive the cache. */
describe('BFF page cache with the real site build', () => {
  let ctx: Awaited<ReturnType<typeof build>>;
  let articleCalls = 0;
  beforeAll(async () => {
    ctx = await build({ siteDist: requireRealSiteBuild(), env: { PAGE_CACHE_POLL_MS: '60000' } });
    ctx.upstream.handle = (req: IncomingMessage, res: ServerResponse) => {
      const path = (req.url ?? '').split('?')[0];
      if (path === '/api/content/version') return json(res, 200, { version: '1.0' });
      if (path === '/api/auth/check') return json(res, 200, anonymousCheck(localeOf(req)));
      if (path === '/api/content/menu') return json(res, 200, EMPTY_MENU);
      if (path === '/api/content/article/fees') {
        articleCalls++;
        const locale = localeOf(req);
        const title = locale === 'en' ? 'Fees' : 'Комиссии';
        return json(res, 200, articleAnswer({ name: 'fees', locale, title, body_html: `<p>${'Fees text. '.repeat(300)}</p>` }));
      }
      return json(res, 404, { status: 'error', code: 'not_found', message: 'This page could not be found' });
    };
    await ctx.app.inject({ url: '/article/fees' });
    await cache(ctx).pollNow();
  });
  afterAll(() => ctx?.close());

  it('caches the rendered article with Astro’s own CSP header and serves it compressed', async () => {
    const before = articleCalls;
    const miss = await ctx.app.inject({ url: '/article/fees', headers: { cookie: 'i18n_redirected=en' } });
    expect(miss.statusCode).toBe(200);
    expect(miss.headers['x-page-cache']).toBe('miss');
    await cache(ctx).settled();
    const hit = await ctx.app.inject({ url: '/article/fees', headers: { cookie: 'i18n_redirected=en' } });
    expect(hit.headers['x-page-cache']).toBe('hit');
    expect(articleCalls - before).toBe(1);
    expect(hit.body).toBe(miss.body);
    expect(hit.body).toMatch(/<html[^>]*\slang="en"/);
    const csp = String(hit.headers['content-security-policy']);
    expect(csp).toBe(miss.headers['content-security-policy']);
    expect(csp).toMatch(/script-src [^;]*'sha(256|384|512)-/);
    const gz = await ctx.app.inject({ url: '/article/fees', headers: { cookie: 'i18n_redirected=en', 'accept-encoding': 'gzip' } });
    expect(gunzipSync(gz.rawPayload).toString()).toBe(miss.body);
    expect(gz.headers['content-security-policy']).toBe(csp);
  });

  it('keeps one entry per theme cookie: a page stored dark is never served to a light reader', async () => {
    const page = (cookie: string) => ctx.app.inject({ url: '/article/fees', headers: { cookie } });
    await page('theme=dark');
    await cache(ctx).settled();
    const dark = await page('theme=dark');
    expect(dark.headers['x-page-cache']).toBe('hit');
    expect(dark.body).toMatch(/<html[^>]*\sdata-theme="dark"/);
    const light = await page('theme=light');
    expect(light.headers['x-page-cache']).toBe('miss');
    expect(light.body).toMatch(/<html[^>]*\sdata-theme="light"/);
    // A bad value is no choice: the same entry as no cookie at all.
    await page('');
    await cache(ctx).settled();
    const bad = await page('theme=sepia');
    expect(bad.headers['x-page-cache']).toBe('hit');
    expect(bad.body).not.toMatch(/<html[^>]*\sdata-theme=/);
  });

  it('still answers an unknown article with the 404 page, uncached', async () => {
    for (let i = 0; i < 2; i++) {
      const res = await ctx.app.inject({ url: '/article/no-such-article' });
      expect(res.statusCode).toBe(404);
      expect(res.headers['x-page-cache']).toBe('miss');
    }
  });
});
