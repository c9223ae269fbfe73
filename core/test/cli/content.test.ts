import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ENGINES, build } from '../helpers.ts';
import { COMMANDS } from '../../src/cli/index.ts';
import { removeMenuItem, saveArticle, setFooterImage, setMenuItem } from '../../src/domains/content/service.ts';
import { sendNotification } from '../../src/domains/notifications/service.ts';
import { setSiteSetting } from '../../src/domains/site/service.ts';

describe.each(ENGINES)('content operations on %s', (engine) => {
  let ctx: Awaited<ReturnType<typeof build>>;
  let dir: string;
  // The core's clock: real time, moved ahead by the test instead of sleeping.
  let ahead = 0;
  beforeAll(async () => {
    ctx = await build(engine, {}, { now: () => new Date(Date.now() + ahead) });
    dir = mkdtempSync(join(tmpdir(), 'obmen-content-ops-'));
  });
  afterAll(async () => {
    rmSync(dir, { recursive: true, force: true });
    await ctx.close();
  });

  const version = async () => {
    const res = await ctx.app.inject({ url: '/api/content/version' });
    expect(res.statusCode).toBe(200);
    expect(res.headers['cache-control']).toBe('no-store');
    return (res.json() as { version: string }).version;
  };
  const menu = async (locale: 'ru' | 'en') => (await ctx.app.inject({ url: '/api/content/menu', headers: { 'x-obmen-locale': locale } })).json();
  const run = (name: string, ...args: string[]) => COMMANDS[name]!(ctx.db, args);

  it('the content version changes with every kind of content change, and only then', async () => {
    const v0 = await version();
    expect(v0).toMatch(/^\d+\.\d+$/);
    expect(await version()).toBe(v0);
    await ctx.app.inject({ url: '/api/content/article/faq' });
    expect(await version()).toBe(v0);

    const steps: Array<[string, () => Promise<unknown>]> = [
      ['article', () => saveArticle(ctx.db, { name: 'terms', locale: 'en', title: 'Terms', body_html: '<p>new terms</p>' })],
      ['menu item', () => setMenuItem(ctx.db, { locale: 'en', menu: 'header_menu', url: 'article/news', title: 'News' })],
      ['menu removal', () => removeMenuItem(ctx.db, 'en', 'header_menu', 'article/news')],
      ['footer image', () => setFooterImage(ctx.db, { name: 'bank-new', ext: 'svg' })],
      ['site setting', () => setSiteSetting(ctx.db, 'site_blocked', false)],
      [
        'notification for everyone',
        () => sendNotification(ctx.db, { userId: null, display: 'inner', type: 'success', texts: [{ locale: 'ru', title: 'Всем', text: '' }] }),
      ],
    ];
    let last = v0;
    for (const [what, change] of steps) {
      await change();
      const next = await version();
      expect(next, what).not.toBe(last);
      last = next;
    }
  });

  it('a notification for one user leaves the version alone; a rolled back change too', async () => {
    const [{ id }] = (await ctx.db.query<{ id: string }>(`SELECT id::text AS id FROM users LIMIT 1`)) as [{ id: string }];
    const before = await version();
    await sendNotification(ctx.db, { userId: id, display: 'inner', type: 'success', texts: [{ locale: 'ru', title: 'Лично', text: '' }] });
    expect(await version()).toBe(before);
    await expect(
      ctx.db.transaction(async (tx) => {
        await saveArticle(tx, { name: 'faq', locale: 'ru', title: 'Rolled back', body_html: '<p>x</p>' });
        throw new Error('abort');
      }),
    ).rejects.toThrow('abort');
    expect(await version()).toBe(before);
    expect((await ctx.app.inject({ url: '/api/content/article/faq' })).json().article.title).not.toBe('Rolled back');
  });

  it('the version also changes when a notification for everyone expires, without any write', async () => {
    const id = await sendNotification(ctx.db, {
      userId: null,
      display: 'inner',
      type: 'success',
      expiresAt: new Date(Date.now() + 3_600_000),
      texts: [{ locale: 'ru', title: 'Минутка', text: '' }],
    });
    const before = await version();
    ahead = 3_601_000;
    expect(await version()).not.toBe(before);
    // Back to the operator tool's time (real time), which later tests compare with.
    ahead = 0;
    expect(await version()).toBe(before);
    expect(id).toBeGreaterThan(0);
  });

  it('menu:set adds or updates an item per locale and menu; menu:remove removes it', async () => {
    await run('menu:set', 'en', 'footer_menu', 'news', 'News', '--order', '7', '--icon', '/image/icons/news.svg');
    expect((await menu('en')).menus.footer_menu).toContainEqual({ url: 'news', title: 'News', order: 7, icon_url: '/image/icons/news.svg' });
    expect((await menu('ru')).menus.footer_menu.map((i: { url: string }) => i.url)).not.toContain('news');
    await run('menu:set', 'en', 'footer_menu', 'news', 'Newsroom');
    const items = (await menu('en')).menus.footer_menu.filter((i: { url: string }) => i.url === 'news');
    expect(items).toEqual([{ url: 'news', title: 'Newsroom', order: 0 }]);
    await run('menu:remove', 'en', 'footer_menu', 'news');
    expect((await menu('en')).menus.footer_menu.map((i: { url: string }) => i.url)).not.toContain('news');
    await expect(run('menu:remove', 'en', 'footer_menu', 'news')).rejects.toThrow(/no item/);
  });

  it('refuses unsafe or malformed menu input', async () => {
    for (const url of ['javascript:alert(1)', '//evil.example', '/\\evil', 'http://plain.example', 'has space', '']) {
      await expect(run('menu:set', 'en', 'header_menu', url, 'Bad'), url).rejects.toThrow();
    }
    await expect(run('menu:set', 'en', 'header_menu', 'ok', 'Bad icon', '--icon', 'javascript:alert(1)')).rejects.toThrow();
    await expect(run('menu:set', 'de', 'header_menu', 'ok', 'x')).rejects.toThrow(/usage/);
    await expect(run('menu:set', 'en', 'side_menu', 'ok', 'x')).rejects.toThrow(/usage/);
    await expect(run('menu:set', 'en', 'header_menu', 'ok', 'x', '--order', 'first')).rejects.toThrow(/whole number/);
    await run('menu:set', 'en', 'header_menu', 'https://t.me/obmen', 'Telegram', '--order', '99');
    expect((await menu('en')).menus.header_menu.at(-1)).toEqual({ url: 'https://t.me/obmen', title: 'Telegram', order: 99 });
  });

  it('footer:set adds or updates a footer image; footer:remove removes it', async () => {
    await run('footer:set', 'bank-river', 'png', '--url', 'https://bank.example', '--order', '9');
    expect((await menu('ru')).footer_images).toContainEqual({
      name: 'bank-river',
      ext: 'png',
      src: '/image/footer_logos/bank-river.png',
      url: 'https://bank.example',
    });
    await run('footer:set', 'bank-river', 'webp');
    expect((await menu('ru')).footer_images).toContainEqual({ name: 'bank-river', ext: 'webp', src: '/image/footer_logos/bank-river.webp' });
    await expect(run('footer:set', 'bank-river', 'gif')).rejects.toThrow();
    await expect(run('footer:set', '../etc/passwd', 'png')).rejects.toThrow();
    await expect(run('footer:set', 'bank-x', 'png', '--url', 'javascript:alert(1)')).rejects.toThrow();
    await run('footer:remove', 'bank-river');
    expect((await menu('ru')).footer_images.map((i: { name: string }) => i.name)).not.toContain('bank-river');
  });

  it('article:set stores sanitised HTML, converts Markdown, and article:remove removes it', async () => {
    const html = join(dir, 'promo.html');
    writeFileSync(
      html,
      '<h2>Promo</h2><p onclick="steal()">Rates <a href="javascript:alert(1)">here</a><script>alert(1)</script></p><img src=x onerror=alert(1)>',
    );
    const saved = (await run('article:set', 'promo', 'en', 'Promo', html)) as { saved: string };
    expect(saved).toMatchObject({ saved: 'promo', locale: 'en', title: 'Promo' });
    const [row] = await ctx.db.query<{ body_html: string }>(`SELECT body_html FROM articles WHERE name = 'promo' AND locale = 'en'`);
    expect(row!.body_html).toBe('<h2>Promo</h2><p>Rates here</p>');
    const served = await ctx.app.inject({ url: '/api/content/article/promo', headers: { 'x-obmen-locale': 'en' } });
    expect(served.json().article).toMatchObject({ name: 'promo', title: 'Promo', body_html: '<h2>Promo</h2><p>Rates here</p>' });

    const md = join(dir, 'promo.md');
    writeFileSync(
      md,
      '## Акция\n\nКурс **лучше** на [странице комиссий](/article/fees) и [у партнёра](https://partner.example).\n\n<script>alert(1)</script>\n',
    );
    await run('article:set', 'promo', 'ru', 'Акция', md);
    const ru = (await ctx.app.inject({ url: '/api/content/article/promo' })).json().article.body_html as string;
    expect(ru).toContain('<h2>Акция</h2>');
    expect(ru).toContain('<strong>лучше</strong>');
    expect(ru).toContain('<a href="/article/fees">странице комиссий</a>');
    expect(ru).toContain('<a href="https://partner.example" rel="noopener nofollow">у партнёра</a>');
    expect(ru).not.toContain('script');

    const list = (await run('article:list')) as { name: string; locale: string }[];
    expect(list.filter((a) => a.name === 'promo').map((a) => a.locale)).toEqual(['en', 'ru']);
    await run('article:remove', 'promo', 'en');
    expect((await ctx.app.inject({ url: '/api/content/article/promo', headers: { 'x-obmen-locale': 'en' } })).statusCode).toBe(404);
    await run('article:remove', 'promo');
    expect((await ctx.app.inject({ url: '/api/content/article/promo' })).statusCode).toBe(404);
    await expect(run('article:set', 'Bad Name', 'ru', 't', html)).rejects.toThrow();
  });

  it('sanitises an article written around the service (plain SQL) on the way out', async () => {
    await ctx.db.query(
      `INSERT INTO articles (name, locale, title, body_html) VALUES ('raw', 'ru', 'Raw', '<p>ok<img src=x onerror=alert(1)><iframe src="javascript:alert(1)"></iframe></p>')`,
    );
    const res = await ctx.app.inject({ url: '/api/content/article/raw' });
    expect(res.json().article.body_html).toBe('<p>ok</p>');
  });

  it('site:block and site:unblock flip the site-blocked flag', async () => {
    expect(await run('site:block')).toMatchObject({ site_blocked: true });
    expect((await ctx.app.inject({ url: '/api/site' })).json().site_settings.site_blocked).toBe(true);
    expect(await run('site:unblock')).toMatchObject({ site_blocked: false });
    expect(await run('content:version')).toEqual({ version: await version() });
  });

  it.runIf(engine === 'pglite')('the operator tool runs the commands against its own database', () => {
    const cli = fileURLToPath(new URL('../../src/cli.ts', import.meta.url));
    const env = { ...process.env, DATA_DIR: join(dir, 'cli-db'), DATABASE_URL: '', LOG_LEVEL: 'silent' };
    delete (env as Record<string, string | undefined>).DATABASE_URL;
    const exec = (...args: string[]) => spawnSync(process.execPath, [cli, ...args], { env, encoding: 'utf8', timeout: 60_000 });
    const set = exec('menu:set', 'ru', 'main_menu', 'news', 'Новости', '--order', '3');
    expect(set.stderr).toBe('');
    expect(set.status).toBe(0);
    expect(JSON.parse(set.stdout)).toEqual({ url: 'news', title: 'Новости', order: 3 });
    const sent = exec('notify:send', '--all', '--display', 'modal', '--type', 'secondary', '--title', 'Привет', '--text', '<p>x<script>y</script></p>');
    expect(sent.status).toBe(0);
    expect(JSON.parse(sent.stdout)).toMatchObject({ sent: 1, to: 'everyone', locales: ['ru'] });
    const bad = exec('notify:send', '--all', '--display', 'modal', '--type', 'purple', '--title', 'x');
    expect(bad.status).toBe(1);
    expect(bad.stderr).toContain('type');
    const unknown = exec('no-such-command');
    expect(unknown.status).toBe(2);
    expect(unknown.stderr).toContain('notify:send');
  });
});
