import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { build, deadUpstreamUrl, json } from './helpers.ts';

describe('BFF /local/healthcheck', () => {
  let ctx: Awaited<ReturnType<typeof build>>;
  beforeAll(async () => {
    ctx = await build();
  });
  afterAll(() => ctx.close());

  it('answers 200 {status: ok} when the core health answers 200', async () => {
    ctx.upstream.handle = (_req, res) => json(res, 200, { status: 'ok' });
    const res = await ctx.app.inject({ url: '/local/healthcheck' });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({ status: 'ok' });
    expect(ctx.upstream.hits.at(-1)?.url).toBe('/api/health');
  });

  it('answers 503 when the core health answers 503', async () => {
    ctx.upstream.handle = (_req, res) => json(res, 503, { status: 'error' });
    const res = await ctx.app.inject({ url: '/local/healthcheck' });
    expect(res.statusCode).toBe(503);
    expect(res.json()).toMatchObject({ status: 'error' });
  });

  it('answers 503 JSON, without caching, when the core health hangs', async () => {
    const timers: NodeJS.Timeout[] = [];
    ctx.upstream.handle = (_req, res) => {
      timers.push(setTimeout(() => json(res, 200, { status: 'ok' }), 8_000));
    };
    const started = performance.now();
    const res = await ctx.app.inject({ url: '/local/healthcheck' });
    timers.forEach(clearTimeout);
    expect(res.statusCode).toBe(503);
    expect(res.json()).toMatchObject({ status: 'error' });
    expect(res.headers['cache-control']).toBe('no-store');
    // The health check has its own bound (a few seconds), well below a load balancer's patience.
    expect(performance.now() - started).toBeLessThan(5_000);
  });
});

describe('BFF /local/healthcheck with the core down', () => {
  let ctx: Awaited<ReturnType<typeof build>>;
  beforeAll(async () => {
    ctx = await build({ upstreamUrl: await deadUpstreamUrl() });
  });
  afterAll(() => ctx.close());

  it('answers 503 JSON at once', async () => {
    const started = performance.now();
    const res = await ctx.app.inject({ url: '/local/healthcheck' });
    expect(res.statusCode).toBe(503);
    expect(res.headers['content-type']).toMatch(/^application\/json/);
    expect(res.json()).toMatchObject({ status: 'error' });
    expect(res.headers['cache-control']).toBe('no-store');
    expect(performance.now() - started).toBeLessThan(2_000);
  });
});
