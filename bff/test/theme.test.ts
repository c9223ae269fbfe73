import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { THEME_COLORS } from '@obmen/shared';
import { build, requireRealSiteBuild } from './helpers.ts';

/** The opening tag of the page's <html>: what the browser paints first with. */
const htmlTag = (body: string) => /<html[^>]*>/.exec(body)?.[0] ?? '';
const barColours = (body: string) => [...body.matchAll(/<meta name="theme-color"[^>]*content="([^"]+)"/g)].map((match) => match[1]);

describe('the reader’s theme, from the cookie to the page (real site build)', () => {
  let ctx: Awaited<ReturnType<typeof build>>;
  beforeAll(async () => {
    ctx = await build({ siteDist: requireRealSiteBuild() });
  });
  afterAll(() => ctx?.close());

  it('renders <html data-theme> for light and dark, and the browser bar in that colour', async () => {
    for (const theme of ['light', 'dark'] as const) {
      const res = await ctx.app.inject({ url: '/', headers: { cookie: `theme=${theme}` } });
      expect(res.statusCode).toBe(200);
      expect(htmlTag(res.body)).toContain(`data-theme="${theme}"`);
      expect(barColours(res.body)).toEqual([THEME_COLORS[theme], THEME_COLORS[theme]]);
    }
  });

  it('leaves the choice to the system (no attribute, a colour per scheme) for system, no cookie or a bad value', async () => {
    for (const cookie of ['theme=system', '', 'theme=sepia', 'theme=DARK', 'theme=%22dark%22', 'theme=dark%3Bx']) {
      const res = await ctx.app.inject({ url: '/', headers: cookie ? { cookie } : {} });
      expect(res.statusCode, cookie).toBe(200);
      expect(htmlTag(res.body), cookie).not.toContain('data-theme');
      expect(barColours(res.body), cookie).toEqual([THEME_COLORS.light, THEME_COLORS.dark]);
    }
  });

  it('draws the back office and the maintenance page in the chosen theme too', async () => {
    for (const url of ['/ops/login', '/maintenance']) {
      const res = await ctx.app.inject({ url, headers: { cookie: 'theme=dark' } });
      expect(htmlTag(res.body), url).toContain('data-theme="dark"');
    }
  });

  it('passes the choice to the core as x-obmen-theme (its sandbox payment page), never a forged or bad one', async () => {
    const sent = async (headers: Record<string, string>) => {
      ctx.upstream.hits.length = 0;
      await ctx.app.inject({ url: '/api/payments/sandbox-card/pay/p1', headers });
      return ctx.upstream.hits[0]!.headers['x-obmen-theme'];
    };
    expect(await sent({ cookie: 'theme=dark' })).toBe('dark');
    expect(await sent({ cookie: 'theme=light', 'x-obmen-theme': 'dark' })).toBe('light');
    expect(await sent({ 'x-obmen-theme': 'dark' })).toBeUndefined();
    expect(await sent({ cookie: 'theme=system' })).toBeUndefined();
    expect(await sent({ cookie: 'theme=<b>' })).toBeUndefined();
  });
});

describe('the installable app’s files (real site build)', () => {
  let ctx: Awaited<ReturnType<typeof build>>;
  beforeAll(async () => {
    ctx = await build({ siteDist: requireRealSiteBuild() });
  });
  afterAll(() => ctx?.close());

  it('serves the service worker from the root as JavaScript, revalidated on every visit, under the site policy', async () => {
    for (const encoding of ['br', 'gzip', 'identity']) {
      const copy = await ctx.app.inject({ url: '/sw.js?v=abc&lang=en', headers: { 'accept-encoding': encoding } });
      expect(copy.headers['content-type'], encoding).toMatch(/^(application|text)\/javascript/);
      expect(copy.headers['cache-control'], encoding).toBe('no-cache');
    }
    const res = await ctx.app.inject({ url: '/sw.js?v=abc&lang=en' });
    expect(res.statusCode).toBe(200);
    expect(String(res.headers['content-security-policy'])).toContain("worker-src 'self'");
    expect(res.body).toContain("addEventListener('fetch'");
  });

  it('serves the manifest as application/manifest+json with the icons the pages link', async () => {
    const res = await ctx.app.inject({ url: '/manifest.webmanifest' });
    expect(res.headers['content-type']).toMatch(/^application\/manifest\+json/);
    const manifest = JSON.parse(res.body) as { icons: Array<{ src: string; sizes: string; purpose: string }>; start_url: string; display: string };
    expect(manifest.display).toBe('standalone');
    expect(manifest.start_url.startsWith('/')).toBe(true);
    expect(manifest.icons.map((icon) => `${icon.sizes} ${icon.purpose}`)).toEqual(
      expect.arrayContaining(['192x192 any', '512x512 any', '512x512 maskable', '180x180 any']),
    );
    for (const icon of manifest.icons) {
      const file = await ctx.app.inject({ url: icon.src });
      expect(file.statusCode, icon.src).toBe(200);
    }
    const page = await ctx.app.inject({ url: '/' });
    expect(page.body).toContain('<link rel="manifest" href="/manifest.webmanifest"');
    expect(page.body).toContain('<link rel="apple-touch-icon" href="/icons/apple-touch-icon.png"');
  });

  it('renders the offline page in the language of ?lang=, without the visitor’s session', async () => {
    ctx.upstream.hits.length = 0;
    const res = await ctx.app.inject({ url: '/offline?lang=en', headers: { cookie: `i18n_redirected=ru; remember_token=${'A'.repeat(43)}` } });
    expect(res.statusCode).toBe(200);
    expect(htmlTag(res.body)).toContain('lang="en"');
    expect(res.body).toContain('No connection');
    for (const hit of ctx.upstream.hits) expect(hit.headers.authorization, hit.url).toBeUndefined();
  });
});
