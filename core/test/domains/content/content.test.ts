import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ENGINES, build } from '../../helpers.ts';
import { migrate } from '../../../src/db/migrate.ts';

describe.each(ENGINES)('content on %s', (engine) => {
  let ctx: Awaited<ReturnType<typeof build>>;
  beforeAll(async () => {
    ctx = await build(engine);
  });
  afterAll(() => ctx.close());

  it('serves the seeded menus grouped by locale', async () => {
    const ru = await ctx.app.inject({ url: '/api/content/menu' });
    expect(ru.statusCode).toBe(200);
    const en = await ctx.app.inject({ url: '/api/content/menu', headers: { 'x-obmen-locale': 'en' } });
    expect(ru.json().menus.header_menu[0]).toEqual({ url: 'exchanges', title: 'Обмен', order: 0 });
    expect(en.json().menus.header_menu[0]).toEqual({ url: 'exchanges', title: 'Exchange', order: 0 });
    expect(en.json().menus.footer_menu.map((item: { url: string }) => item.url)).toContain('terms');
    expect(en.json().footer_images.length).toBeGreaterThan(2);
  });

  it('menus and site settings follow every change at once, also one made by plain SQL', async () => {
    const headerTitle = async () => (await ctx.app.inject({ url: '/api/content/menu', headers: { 'x-obmen-locale': 'en' } })).json().menus.header_menu[0].title;
    const blocked = async () => (await ctx.app.inject({ url: '/api/auth/check' })).json().site_settings.site_blocked;
    expect(await headerTitle()).toBe('Exchange');
    expect(await blocked()).toBe(false);
    await ctx.db.query(`UPDATE menu_items SET title = 'Swap' WHERE locale = 'en' AND menu = 'header_menu' AND url = 'exchanges'`);
    await ctx.db.query(`UPDATE site_settings SET value = 'true'::jsonb WHERE key = 'site_blocked'`);
    try {
      expect(await headerTitle()).toBe('Swap');
      expect(await blocked()).toBe(true);
    } finally {
      await ctx.db.query(`UPDATE menu_items SET title = 'Exchange' WHERE locale = 'en' AND menu = 'header_menu' AND url = 'exchanges'`);
      await ctx.db.query(`UPDATE site_settings SET value = 'false'::jsonb WHERE key = 'site_blocked'`);
    }
    expect(await headerTitle()).toBe('Exchange');
    expect(await blocked()).toBe(false);
  });

  it('filters menus by list and refuses an unknown list name, localized', async () => {
    const some = await ctx.app.inject({ method: 'POST', url: '/api/content/menu', payload: { list: ['footer_menu'] } });
    expect(some.json().menus.header_menu).toEqual([]);
    expect(some.json().menus.footer_menu.length).toBeGreaterThan(0);
    const bad = await ctx.app.inject({ method: 'POST', url: '/api/content/menu', headers: { 'x-obmen-locale': 'en' }, payload: { list: ['nope'] } });
    expect(bad.statusCode).toBe(400);
    expect(bad.json()).toMatchObject({ status: 'error', code: 'validation', message: 'Please check the highlighted fields.' });
  });

  it('serves an article per locale and 404s an unknown one', async () => {
    const article = await ctx.app.inject({ url: '/api/content/article/faq', headers: { 'x-obmen-locale': 'en' } });
    expect(article.json().article.title).toBe('Frequently asked questions');
    const missing = await ctx.app.inject({ url: '/api/content/article/no-such-page' });
    expect(missing.statusCode).toBe(404);
    expect(missing.json()).toEqual({ status: 'error', code: 'article_not_found', message: 'Такая статья не найдена' });
    const malformed = await ctx.app.inject({ url: '/api/content/article/No%20Such', headers: { 'x-obmen-locale': 'en' } });
    expect(malformed.statusCode).toBe(404);
    expect(malformed.json()).toEqual({ status: 'error', code: 'article_not_found', message: 'This article was not found' });
  });

  it('re-running migrations and the seed changes nothing', async () => {
    expect(await migrate(ctx.db)).toEqual([]);
    const [{ count }] = (await ctx.db.query<{ count: string }>('SELECT count(*)::text AS count FROM menu_items')) as [{ count: string }];
    const { seedDemoData } = await import('../../../src/seed/demo.ts');
    expect(await seedDemoData(ctx.db, { demoAccount: false, sandboxCatalogue: true })).toEqual([]);
    const [after] = await ctx.db.query<{ count: string }>('SELECT count(*)::text AS count FROM menu_items');
    expect(after?.count).toBe(count);
  });

  it('answers unknown routes with the localized error shape', async () => {
    const res = await ctx.app.inject({ url: '/api/nope', headers: { 'x-obmen-locale': 'en' } });
    expect(res.statusCode).toBe(404);
    expect(res.json()).toEqual({ status: 'error', code: 'route_not_found', message: 'There is no such API call' });
  });
});
