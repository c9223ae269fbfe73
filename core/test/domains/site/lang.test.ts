import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ENGINES, build } from '../../helpers.ts';
import { call, freshEmail, signUp } from '../../auth-helpers.ts';

describe.each(ENGINES)('POST /api/lang on %s', (engine) => {
  let ctx: Awaited<ReturnType<typeof build>>;
  beforeAll(async () => {
    ctx = await build(engine);
  });
  afterAll(() => ctx.close());

  const localeOf = async (email: string) => (await ctx.db.query<{ locale: string }>('SELECT locale FROM users WHERE email = $1', [email]))[0]?.locale;

  it('anonymous: answers ok and stores nothing', async () => {
    const before = await ctx.db.query('SELECT id, locale FROM users ORDER BY id');
    const res = await call(ctx.app, '/api/lang', { payload: { lang: 'en' } });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ status: 'ok', locale: 'en' });
    expect(await ctx.db.query('SELECT id, locale FROM users ORDER BY id')).toEqual(before);
  });

  it('signed in: stores the language on the user and answers the updated user', async () => {
    const email = freshEmail('lang');
    const token = await signUp(ctx.app, ctx.db, email, 'lang password 1', 'ru');
    expect(await localeOf(email)).toBe('ru');
    // As the BFF sends it: the chosen language also in x-obmen-locale.
    const res = await call(ctx.app, '/api/lang', { token, locale: 'en', payload: { lang: 'en' } });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({ status: 'ok', locale: 'en', user: { is_authenticated: true, email, locale: 'en' } });
    expect(await localeOf(email)).toBe('en');
    // Without a cookie (no x-obmen-locale), the account's language applies.
    const check = await call(ctx.app, '/api/auth/check', { token });
    expect(check.json()).toMatchObject({ locale: 'en', user: { locale: 'en' } });
    // Back to Russian; the same choice twice is fine.
    for (let i = 0; i < 2; i++) {
      const back = await call(ctx.app, '/api/lang', { token, payload: { lang: 'ru' } });
      expect(back.json()).toMatchObject({ status: 'ok', locale: 'ru', user: { locale: 'ru' } });
    }
    expect(await localeOf(email)).toBe('ru');
  });

  it('a dead session is treated as anonymous (and told to clear the cookie)', async () => {
    const res = await call(ctx.app, '/api/lang', { token: 'A'.repeat(43), payload: { lang: 'en' } });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ status: 'ok', locale: 'en' });
    expect(res.headers['x-obmen-session']).toBe('cleared');
  });

  it('refuses an unknown language with a localized 400', async () => {
    const res = await call(ctx.app, '/api/lang', { payload: { lang: 'de' }, locale: 'en' });
    expect(res.statusCode).toBe(400);
    expect(res.json()).toMatchObject({ status: 'error', code: 'validation', message: 'Please check the highlighted fields.' });
    expect(res.json().fields).toHaveProperty('lang');
  });
});
