import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { DICTIONARIES, LOCALE_COOKIE, LOCALE_COOKIE_MAX_AGE_S } from '@obmen/shared';
import { build, deadUpstreamUrl, json } from './helpers.ts';

/** 256 bits as base64url: the shape of a real session token. */
const TOKEN = 'A'.repeat(43);

describe('BFF POST /api/lang', () => {
  let ctx: Awaited<ReturnType<typeof build>>;
  beforeAll(async () => {
    ctx = await build();
  });
  afterAll(() => ctx.close());
  beforeEach(() => {
    ctx.upstream.hits.length = 0;
    ctx.upstream.handle = (_req, res) => json(res, 200, { status: 'ok' });
  });

  it('tells the core and sets the i18n_redirected cookie for 365 days', async () => {
    const res = await ctx.app.inject({ method: 'POST', url: '/api/lang', payload: { lang: 'en' } });
    expect(res.statusCode).toBe(200);
    const cookie = res.cookies.find((c) => c.name === LOCALE_COOKIE);
    expect(cookie).toMatchObject({ value: 'en', path: '/', maxAge: LOCALE_COOKIE_MAX_AGE_S, sameSite: 'Lax' });
    expect(LOCALE_COOKIE_MAX_AGE_S).toBe(365 * 24 * 60 * 60);
    expect(cookie?.httpOnly).toBeFalsy();
    expect(ctx.upstream.hits).toHaveLength(1);
    expect(ctx.upstream.hits[0]).toMatchObject({ method: 'POST', url: '/api/lang' });
    expect(JSON.parse(ctx.upstream.hits[0]!.body)).toEqual({ lang: 'en' });
    expect(ctx.upstream.hits[0]!.headers['x-obmen-locale']).toBe('en');
  });

  it('forwards the session cookie as a Bearer token, never as a cookie', async () => {
    await ctx.app.inject({ method: 'POST', url: '/api/lang', payload: { lang: 'ru' }, headers: { cookie: `remember_token=${TOKEN}; i18n_redirected=en` } });
    expect(ctx.upstream.hits[0]!.headers.authorization).toBe(`Bearer ${TOKEN}`);
    expect(ctx.upstream.hits[0]!.headers.cookie).toBeUndefined();
  });

  it('refuses an unknown locale with 400 and sets no cookie', async () => {
    const res = await ctx.app.inject({ method: 'POST', url: '/api/lang', payload: { lang: 'de' } });
    expect(res.statusCode).toBe(400);
    expect(res.json()).toMatchObject({ status: 'error', code: 'validation' });
    expect(res.cookies.find((c) => c.name === LOCALE_COOKIE)).toBeUndefined();
    expect(ctx.upstream.hits).toHaveLength(0);
  });

  it('sets no cookie when the core refuses', async () => {
    ctx.upstream.handle = (_req, res) => json(res, 422, { status: 'error', code: 'validation', message: 'x' });
    const res = await ctx.app.inject({ method: 'POST', url: '/api/lang', payload: { lang: 'en' } });
    expect(res.statusCode).toBe(422);
    expect(res.cookies.find((c) => c.name === LOCALE_COOKIE)).toBeUndefined();
  });
});

describe('BFF POST /api/lang with the core down', () => {
  let ctx: Awaited<ReturnType<typeof build>>;
  beforeAll(async () => {
    ctx = await build({ upstreamUrl: await deadUpstreamUrl() });
  });
  afterAll(() => ctx.close());

  it('answers 503 JSON upstream_unavailable without internals', async () => {
    const res = await ctx.app.inject({ method: 'POST', url: '/api/lang', payload: { lang: 'en' }, headers: { cookie: 'i18n_redirected=en' } });
    expect(res.statusCode).toBe(503);
    expect(res.json()).toEqual({ status: 'error', code: 'upstream_unavailable', message: DICTIONARIES.en['error.upstream_unavailable'] });
    expect(res.body).not.toContain('ECONNREFUSED');
  });
});
