import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DICTIONARIES } from '@obmen/shared';
import { build, defaultUpstreamHandler, json } from './helpers.ts';
import { rawRequest } from '../../core/test/raw-http.ts';
import { until } from '../../core/test/helpers.ts';

const en = { cookie: 'i18n_redirected=en' };
const shape = (code: string, key: string, locale: 'ru' | 'en' = 'en') => ({
  status: 'error',
  code,
  message: DICTIONARIES[locale][key as keyof (typeof DICTIONARIES)['en']],
});

describe('errors the BFF answers itself: the project’s shape, localized (real sockets)', () => {
  let ctx: Awaited<ReturnType<typeof build>>;
  let origin: string;
  beforeAll(async () => {
    ctx = await build({ env: { NOT_FOUND_PER_MINUTE: '3' } });
    origin = await ctx.app.listen({ host: '127.0.0.1', port: 0 });
  });
  afterAll(() => ctx.close());

  it('400 for a path the router cannot read', async () => {
    const res = await rawRequest(origin, '/i18n/%E0%A4%A', { headers: en });
    expect(res.status).toBe(400);
    expect(JSON.parse(res.body)).toEqual(shape('bad_request', 'error.bad_request'));
  });

  it('413 for a body over the limit on a route of the BFF’s own', async () => {
    const res = await rawRequest(origin, '/api/lang', {
      method: 'POST',
      headers: { ...en, 'content-type': 'application/json' },
      body: JSON.stringify({ lang: 'x'.repeat(2 * 1024 * 1024) }),
    });
    expect(res.status).toBe(413);
    expect(JSON.parse(res.body)).toEqual(shape('payload_too_large', 'error.payload_too_large'));
  });

  it('404 for a missing path, then 429 with Retry-After once a client asks for too many, pages included', async () => {
    const missing = await rawRequest(origin, '/no-such-thing', { method: 'POST', headers: en });
    expect(missing.status).toBe(404);
    expect(JSON.parse(missing.body)).toEqual(shape('not_found', 'error.not_found'));
    // The stand-in site renders its 404 page for pages that do not exist (2 and 3 of 3).
    expect((await rawRequest(origin, '/no-such-page', {})).status).toBe(404);
    expect((await rawRequest(origin, '/no-such-page-2', {})).status).toBe(404);
    const page = await rawRequest(origin, '/no-such-page-3', { headers: en });
    expect(page.status).toBe(429);
    expect(Number(page.headers['retry-after'])).toBeGreaterThan(0);
    expect(JSON.parse(page.body)).toEqual(shape('rate_limited', 'error.rate_limited'));
    const api = await rawRequest(origin, '/no-such-thing', { method: 'DELETE' });
    expect(api.status).toBe(429);
    expect(JSON.parse(api.body)).toEqual(shape('rate_limited', 'error.rate_limited', 'ru'));
    // Existing paths are not counted.
    expect((await rawRequest(origin, '/')).status).toBe(200);
  });
});

describe('overload shedding and liveness', () => {
  let ctx: Awaited<ReturnType<typeof build>>;
  let origin: string;
  beforeAll(async () => {
    ctx = await build({ env: { SHED_EVENT_LOOP_DELAY_MS: '100' } });
    origin = await ctx.app.listen({ host: '127.0.0.1', port: 0 });
  });
  afterAll(() => ctx.close());

  function holdEventLoop(ms: number): void {
    const until = performance.now() + ms;
    while (performance.now() < until);
  }

  it('answers 503 JSON with Retry-After while the event loop lags, and /local/livez all the same', async () => {
    expect((await rawRequest(origin, '/local/livez')).status).toBe(200);
    let shed: Awaited<ReturnType<typeof rawRequest>> | undefined;
    // The lag is sampled every second: hold the loop until a sample has seen it (bounded).
    for (let attempt = 0; attempt < 10 && !shed; attempt++) {
      holdEventLoop(1_200);
      const res = await rawRequest(origin, '/api/exchange/list', { headers: en });
      expect([200, 503]).toContain(res.status);
      if (res.status === 503) shed = res;
    }
    expect(shed, 'no request was shed').toBeDefined();
    expect(shed!.headers['retry-after']).toBe('5');
    expect(JSON.parse(shed!.body)).toEqual(shape('overloaded', 'error.overloaded'));
    const live = await rawRequest(origin, '/local/livez');
    expect(live.status).toBe(200);
    expect(JSON.parse(live.body)).toEqual({ status: 'ok' });
  });
});

/**
 * The core is the bottleneck, not the BFF: its event loop idles while requests queue for a
 * connection to a slow core. Beyond SHED_UPSTREAM_PENDING of them, new requests that need the
 * core get the same 503 `overloaded` at once instead of joining the queue (and a 504 later).
 */
describe('overload shedding on a saturated core', () => {
  let ctx: Awaited<ReturnType<typeof build>>;
  let origin: string;
  const held: Array<() => void> = [];
  beforeAll(async () => {
    ctx = await build({ env: { UPSTREAM_CONNECTIONS: '2', SHED_UPSTREAM_PENDING: '2', UPSTREAM_TIMEOUT_MS: '5000' } });
    origin = await ctx.app.listen({ host: '127.0.0.1', port: 0 });
    ctx.upstream.handle = (req, res) => {
      if ((req.url ?? '').startsWith('/api/slow')) held.push(() => json(res, 200, { ok: true }));
      else defaultUpstreamHandler(req, res, '');
    };
  });
  afterAll(() => ctx.close());

  it('answers 503 overloaded + Retry-After once the calls waiting for the core reach the bound, and serves again when they drain', async () => {
    expect((await rawRequest(origin, '/api/exchange/list')).status).toBe(200);
    // Two on the two connections, two waiting for one.
    const slow = [1, 2, 3, 4].map((i) => rawRequest(origin, `/api/slow/${i}`));
    await until('two calls at the core', () => held.length === 2);
    await until('two calls waiting for a connection', () => ctx.app.core.stats.pending === 2);

    const shed = await rawRequest(origin, '/api/exchange/list', { headers: en });
    expect(shed.status).toBe(503);
    expect(shed.headers['retry-after']).toBe('5');
    expect(JSON.parse(shed.body)).toEqual(shape('overloaded', 'error.overloaded'));
    const page = await rawRequest(origin, '/', { headers: en });
    expect(page.status).toBe(503);
    expect(JSON.parse(page.body)).toEqual(shape('overloaded', 'error.overloaded'));
    // What needs no core is served: liveness, static files.
    expect((await rawRequest(origin, '/local/livez')).status).toBe(200);
    expect((await rawRequest(origin, '/robots.txt')).status).toBe(200);

    // The core answers: the waiting calls get their connections and answer too.
    for (let released = 0; released < 4; released++) {
      await until('the next call at the core', () => held.length > released);
      held[released]!();
    }
    expect((await Promise.all(slow)).map((res) => res.status)).toEqual([200, 200, 200, 200]);
    expect((await rawRequest(origin, '/api/exchange/list')).status).toBe(200);
  });
});
