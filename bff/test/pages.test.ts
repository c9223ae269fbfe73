import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Pool } from 'undici';
import { readFrontendVersion } from '../src/frontend-version.ts';
import { build, json, requireRealSiteBuild } from './helpers.ts';
import { anonymousCheck } from './core-answers.ts';

describe('BFF pages (stand-in site build)', () => {
  let ctx: Awaited<ReturnType<typeof build>>;
  beforeAll(async () => {
    ctx = await build();
  });
  afterAll(() => ctx.close());

  it('renders pages with the BFF security headers and passes fv and the client address to the page', async () => {
    const res = await ctx.app.inject({ url: '/', remoteAddress: '198.51.100.4' });
    expect(res.statusCode).toBe(200);
    expect(res.headers['x-content-type-options']).toBe('nosniff');
    expect(res.headers['x-frame-options']).toBe('DENY');
    expect(res.headers['referrer-policy']).toBe('strict-origin-when-cross-origin');
    expect(res.body).toContain(`data-fv="${readFrontendVersion(ctx.siteDist)}"`);
    expect(res.body).toContain('data-ip="198.51.100.4"');
  });

  it('hands pages the BFF’s validated configuration, its scheme and its one pool to the core', async () => {
    const res = await ctx.app.inject({ url: '/', headers: { 'x-forwarded-proto': 'https' } });
    // No trusted proxy: a client's X-Forwarded-Proto does not make the request https.
    expect(res.body).toContain('data-https="false"');
    expect(globalThis.lastPageLocals?.config).toBe(ctx.config);
    const pool = globalThis.lastPageLocals?.core;
    expect(pool).toBeInstanceOf(Pool);
    await ctx.app.inject({ url: '/' });
    expect(globalThis.lastPageLocals?.core, 'one pool for every render').toBe(pool);
  });

  it('renders the 404 page, with status 404, when no page matches', async () => {
    const res = await ctx.app.inject({ url: '/no-such-page' });
    expect(res.statusCode).toBe(404);
    expect(res.body).toContain('page /404');
    expect(res.headers['x-content-type-options']).toBe('nosniff');
  });

  it('answers 500 without internals when the page render fails', async () => {
    const res = await ctx.app.inject({ url: '/boom' });
    expect(res.statusCode).toBe(500);
    expect(res.body).not.toContain('render failed');
    expect(res.body).not.toContain('at ');
  });

  it('serves hashed assets as immutable, with security headers', async () => {
    const asset = await ctx.app.inject({ url: '/_astro/island.Ab12Cd.js' });
    expect(asset.statusCode).toBe(200);
    expect(asset.body).toBe('export const island = 1;\n');
    expect(asset.headers['cache-control']).toBe('public, max-age=31536000, immutable');
    expect(asset.headers['x-content-type-options']).toBe('nosniff');
    expect(asset.headers['content-security-policy']).toContain("frame-ancestors 'none'");
  });

  it('serves other public files with short caching', async () => {
    const robots = await ctx.app.inject({ url: '/robots.txt' });
    expect(robots.statusCode).toBe(200);
    expect(robots.headers['cache-control']).toBe('public, max-age=3600');
  });

  it('derives fv from the hashed asset names of the build', () => {
    const fv = readFrontendVersion(ctx.siteDist);
    expect(fv).toMatch(/^[A-Za-z0-9_-]{12}$/);
    expect(readFrontendVersion(ctx.siteDist)).toBe(fv);
    expect(readFrontendVersion('/nonexistent-dir')).not.toBe(fv);
  });
});

/** The real Astro build (scripts/test.sh runs `pnpm build` first). */
describe('BFF pages (real site build)', () => {
  let ctx: Awaited<ReturnType<typeof build>>;
  beforeAll(async () => {
    ctx = await build({ siteDist: requireRealSiteBuild() });
  });
  afterAll(() => ctx?.close());

  function expectPageSecurityHeaders(headers: Record<string, unknown>) {
    const csp = String(headers['content-security-policy'] ?? '');
    expect(csp, 'content-security-policy header').toContain("frame-ancestors 'none'");
    expect(csp).toMatch(/script-src [^;]*'sha(256|384|512)-/);
    expect(csp).toContain("object-src 'none'");
    expect(headers['x-content-type-options']).toBe('nosniff');
    expect(headers['x-frame-options']).toBe('DENY');
  }

  it('renders the home page in Russian by default, with the page CSP header', async () => {
    const res = await ctx.app.inject({ url: '/' });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toMatch(/^text\/html/);
    expect(res.body).toMatch(/<html[^>]*\slang="ru"/);
    expectPageSecurityHeaders(res.headers);
  });

  it('renders the home page in English for the i18n_redirected=en cookie', async () => {
    const res = await ctx.app.inject({ url: '/', headers: { cookie: 'i18n_redirected=en' } });
    expect(res.statusCode).toBe(200);
    expect(res.body).toMatch(/<html[^>]*\slang="en"/);
    expect(res.body).toContain('All rights reserved');
  });

  it('answers an unknown page with 404, the not-found text and the security headers', async () => {
    const res = await ctx.app.inject({ url: '/no-such-page', headers: { cookie: 'i18n_redirected=en' } });
    expect(res.statusCode).toBe(404);
    expect(res.body).toContain('This page could not be found');
    expectPageSecurityHeaders(res.headers);
  });

  it('a page that sets its own status sends the status line of that code, not "404 OK"', async () => {
    const missing = await ctx.app.inject({ url: '/no-such-page' });
    expect([missing.statusCode, missing.statusMessage]).toEqual([404, 'Not Found']);
    const maintenance = await ctx.app.inject({ url: '/maintenance' });
    expect([maintenance.statusCode, maintenance.statusMessage]).toEqual([503, 'Service Unavailable']);
  });

  it('fails a page whose core answer drifts from its declaration, instead of showing the maintenance page', async () => {
    const handle = ctx.upstream.handle;
    // The check without its `locale`: what the core answers is no longer what the site was built against.
    const { locale: _, ...drifted } = anonymousCheck();
    ctx.upstream.handle = (req, res, body) => ((req.url ?? '').startsWith('/api/auth/check') ? json(res, 200, drifted) : handle(req, res, body));
    try {
      const res = await ctx.app.inject({ url: '/' });
      expect(res.statusCode).toBe(500);
      expect(res.body).not.toContain('data-testid="maintenance"');
    } finally {
      ctx.upstream.handle = handle;
    }
  });

  it('serves the built client assets with long caching', async () => {
    const home = await ctx.app.inject({ url: '/' });
    // The layout's script is always an external, hashed asset.
    const asset = /(?:src|href)="(\/_astro\/[^"]+)"/.exec(home.body)?.[1];
    expect(asset).toMatch(/^\/_astro\//);
    const res = await ctx.app.inject({ url: asset! });
    expect(res.statusCode).toBe(200);
    expect(res.headers['cache-control']).toBe('public, max-age=31536000, immutable');
    expect(res.headers['x-content-type-options']).toBe('nosniff');
  });
});

describe('page renders call the core through the BFF’s own pool (real site build)', () => {
  let first: Awaited<ReturnType<typeof build>>;
  let second: Awaited<ReturnType<typeof build>>;
  beforeAll(async () => {
    first = await build({ siteDist: requireRealSiteBuild() });
    second = await build({ siteDist: requireRealSiteBuild(), env: { UPSTREAM_TIMEOUT_MS: '1000' } });
  });
  afterAll(async () => {
    await first?.close();
    await second?.close();
  });

  const layoutHits = (ctx: typeof first) => ctx.upstream.hits.filter((hit) => hit.url === '/api/auth/check' || hit.url === '/api/content/menu');

  it('asks the core of its own BFF (two BFFs in one process), with the visitor’s address', async () => {
    first.upstream.hits.length = 0;
    second.upstream.hits.length = 0;
    expect((await second.app.inject({ url: '/', remoteAddress: '198.51.100.9' })).statusCode).toBe(200);
    expect(layoutHits(first)).toEqual([]);
    expect(layoutHits(second)).toHaveLength(2);
    for (const hit of layoutHits(second)) expect(hit.headers['x-forwarded-for']).toBe('198.51.100.9');
  });

  it('shows the maintenance page when the core hangs, without asking it again, within the timeout', async () => {
    second.upstream.hits.length = 0;
    const hung = second.upstream.handle;
    second.upstream.handle = () => {};
    try {
      const started = performance.now();
      const res = await second.app.inject({ url: '/' });
      const took = performance.now() - started;
      expect(res.statusCode).toBe(503);
      expect(res.body).toContain('data-testid="maintenance"');
      // The two layout calls, once: the rewrite to the maintenance page does not repeat them.
      expect(second.upstream.hits.map((hit) => hit.url).sort()).toEqual(['/api/auth/check', '/api/content/menu']);
      // Asking again would have taken twice the timeout.
      expect(took).toBeLessThan(2 * second.config.UPSTREAM_TIMEOUT_MS);
    } finally {
      second.upstream.handle = hung;
    }
  });
});
