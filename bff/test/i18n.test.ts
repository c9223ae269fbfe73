import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DICTIONARIES } from '@obmen/shared';
import { build } from './helpers.ts';

describe('BFF /i18n', () => {
  let ctx: Awaited<ReturnType<typeof build>>;
  beforeAll(async () => {
    ctx = await build();
  });
  afterAll(() => ctx.close());

  it.each(['en', 'ru'] as const)('serves the %s dictionary', async (code) => {
    const res = await ctx.app.inject({ url: `/i18n/${code}` });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toMatch(/^application\/json/);
    expect(res.json()).toEqual(DICTIONARIES[code]);
    expect(res.headers['x-content-type-options']).toBe('nosniff');
  });

  it('answers 404 JSON for an unknown locale', async () => {
    const res = await ctx.app.inject({ url: '/i18n/xx' });
    expect(res.statusCode).toBe(404);
    expect(res.json()).toEqual({ status: 'error', code: 'not_found', message: DICTIONARIES.ru['error.not_found'] });
    expect(ctx.upstream.hits).toHaveLength(0);
  });
});
