import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ZEnvelope, ZNotification } from '@obmen/shared';
import { ENGINES, build } from '../../helpers.ts';
import { DEMO, call, freshEmail, logIn, signUp } from '../../auth-helpers.ts';
import { listOpenNotifications, sendNotification, type TSendNotification } from '../../../src/domains/notifications/service.ts';
import { NOTIFY_COMMANDS, parseExpiry } from '../../../src/cli/notifications.ts';

describe.each(ENGINES)('notifications on %s', (engine) => {
  let ctx: Awaited<ReturnType<typeof build>>;
  let demo: string;
  let other: string;
  let otherUserId: string;
  let otherAccountId: number;

  beforeAll(async () => {
    ctx = await build(engine);
    demo = await logIn(ctx.app, DEMO.email, DEMO.password);
    const email = freshEmail('notify');
    other = await signUp(ctx.app, ctx.db, email, 'notify password 1', 'en');
    const [row] = await ctx.db.query<{ id: string; account_id: number }>('SELECT id::text AS id, account_id FROM users WHERE email = $1', [email]);
    otherUserId = row!.id;
    otherAccountId = row!.account_id;
  });
  afterAll(() => ctx.close());

  const send = (input: Partial<TSendNotification> & Pick<TSendNotification, 'texts'>) =>
    sendNotification(ctx.db, { userId: null, display: 'inner', type: 'secondary', ...input });
  const check = async (token?: string, locale?: 'ru' | 'en') => {
    const res = await call(ctx.app, '/api/auth/check', { ...(token ? { token } : {}), ...(locale ? { locale } : {}) });
    expect(res.statusCode).toBe(200);
    const body = ZEnvelope.parse(res.json());
    return body.notifications ?? [];
  };
  const ids = (list: { notification_id: number }[]) => list.map((n) => n.notification_id);
  const close = (id: number | string, options: { token?: string; locale?: 'ru' | 'en' } = {}) =>
    call(ctx.app, '/api/notify/close', { payload: { id }, ...options });

  it('a notification for everyone reaches anonymous and signed-in viewers in the envelope, in their language', async () => {
    const id = await send({
      display: 'modal',
      type: 'success',
      texts: [
        {
          locale: 'ru',
          title: 'Новые комиссии',
          text: '<p>С 1 декабря <a href="/article/fees">ниже</a></p>',
          buttons: [{ url: '/article/fees', title: 'Подробнее' }],
        },
        {
          locale: 'en',
          title: 'New fees',
          text: '<p>From December 1 <a href="/article/fees">lower</a></p>',
          buttons: [{ url: '/article/fees', title: 'Details' }],
        },
      ],
    });
    const anonymousRu = await check();
    const found = anonymousRu.find((n) => n.notification_id === id);
    expect(found).toEqual({
      notification_id: id,
      display: 'modal',
      type: 'success',
      title: 'Новые комиссии',
      text: '<p>С 1 декабря <a href="/article/fees">ниже</a></p>',
      buttons: [{ url: '/article/fees', title: 'Подробнее' }],
      closable: true,
    });
    expect(ZNotification.parse(found)).toEqual(found);
    expect((await check(undefined, 'en')).find((n) => n.notification_id === id)?.title).toBe('New fees');
    expect(ids(await check(demo))).toContain(id);
    expect(ids(await check(other))).toContain(id);
    const list = await call(ctx.app, '/api/notify', { token: other, locale: 'en' });
    expect(list.json().notifications.find((n: { notification_id: number }) => n.notification_id === id).buttons).toEqual([
      { url: '/article/fees', title: 'Details' },
    ]);
  });

  it('falls back to the default language, then any, when the viewer’s language has no text', async () => {
    const onlyRu = await send({ texts: [{ locale: 'ru', title: 'Только по-русски', text: '' }] });
    const onlyEn = await send({ texts: [{ locale: 'en', title: 'English only', text: '' }] });
    const en = await check(undefined, 'en');
    expect(en.find((n) => n.notification_id === onlyRu)?.title).toBe('Только по-русски');
    const ru = await check(undefined, 'ru');
    expect(ru.find((n) => n.notification_id === onlyEn)?.title).toBe('English only');
  });

  it('closing one is remembered for that user only, across reloads, and is idempotent', async () => {
    const id = await send({ texts: [{ locale: 'ru', title: 'Закрой меня', text: 'x' }] });
    const first = await close(id, { token: demo });
    expect(first.statusCode).toBe(200);
    expect(first.json()).toEqual({ status: 'ok', id, remembered: true });
    expect(ids(await check(demo))).not.toContain(id);
    expect(ids(await check(demo))).not.toContain(id);
    expect(ids(await check(other))).toContain(id);
    expect(ids(await check())).toContain(id);
    const again = await close(String(id), { token: demo });
    expect(again.statusCode).toBe(200);
    expect(again.json()).toEqual({ status: 'ok', id, remembered: true });
    const [{ count }] = (await ctx.db.query<{ count: string }>('SELECT count(*)::text AS count FROM notification_closes WHERE notification_id = $1', [id])) as [
      { count: string },
    ];
    expect(count).toBe('1');
  });

  it('an anonymous close is checked but not stored: the site keeps it in localStorage', async () => {
    const id = await send({ texts: [{ locale: 'ru', title: 'Аноним', text: '' }] });
    const res = await close(id);
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ status: 'ok', id, remembered: false });
    expect(ids(await check())).toContain(id);
  });

  it('a notification for one user reaches only that user', async () => {
    const id = await send({
      userId: otherUserId,
      type: 'danger',
      texts: [{ locale: 'en', title: 'Your withdrawal needs attention', text: '<p>Check it</p>' }],
    });
    expect(ids(await check(other))).toContain(id);
    expect(ids(await check(demo))).not.toContain(id);
    expect(ids(await check())).not.toContain(id);
    // Nobody else can close it, or learn that it exists.
    expect((await close(id, { token: demo, locale: 'en' })).json()).toEqual({
      status: 'error',
      code: 'notification_not_found',
      message: 'This notification was not found',
    });
    expect((await close(id)).statusCode).toBe(404);
    expect((await close(id, { token: other })).statusCode).toBe(200);
    expect(ids(await check(other))).not.toContain(id);
  });

  it('refuses to close a non-closable one with 409 and a localized message', async () => {
    const id = await send({ closable: false, type: 'danger', texts: [{ locale: 'ru', title: 'Важно', text: '' }] });
    const en = await close(id, { token: demo, locale: 'en' });
    expect(en.statusCode).toBe(409);
    expect(en.json()).toEqual({ status: 'error', code: 'not_closable', message: 'This notification cannot be closed' });
    const ru = await close(id);
    expect(ru.statusCode).toBe(409);
    expect(ru.json().message).toBe('Это уведомление нельзя закрыть');
    expect((await check(demo)).find((n) => n.notification_id === id)?.closable).toBe(false);
  });

  it('validates the close call: unknown ids 404, malformed ones 400', async () => {
    expect((await close(987654321, { token: demo })).statusCode).toBe(404);
    const bad = await close('abc', { token: demo, locale: 'en' });
    expect(bad.statusCode).toBe(400);
    expect(bad.json()).toMatchObject({ status: 'error', code: 'validation' });
    expect((await call(ctx.app, '/api/notify/close', { payload: {} })).statusCode).toBe(400);
  });

  it('hides expired ones', async () => {
    const id = await send({ expiresAt: new Date(Date.now() + 60_000), texts: [{ locale: 'ru', title: 'Скоро истечёт', text: '' }] });
    expect(ids(await check())).toContain(id);
    await ctx.db.query(`UPDATE notifications SET created_at = now() - interval '2 hours', expires_at = now() - interval '1 second' WHERE id = $1`, [id]);
    expect(ids(await check())).not.toContain(id);
  });

  it('sanitises the text when it is stored and when it is served', async () => {
    const id = await send({
      texts: [
        {
          locale: 'ru',
          title: '<b>XSS</b>',
          text: '<p>hi<script>alert(1)</script><img src=x onerror=alert(1)><a href="javascript:alert(1)">x</a><svg onload=alert(1)></svg></p>',
        },
      ],
    });
    const [stored] = await ctx.db.query<{ text_html: string }>('SELECT text_html FROM notification_texts WHERE notification_id = $1', [id]);
    expect(stored!.text_html).toBe('<p>hix</p>');
    // A row written around the service (plain SQL) is made safe on the way out.
    await ctx.db.query(`UPDATE notification_texts SET text_html = '<p onclick="alert(1)">raw<script>alert(2)</script></p>' WHERE notification_id = $1`, [id]);
    const served = (await check()).find((n) => n.notification_id === id)!;
    expect(served.text).toBe('<p>raw</p>');
    // The title is plain text: stored as given, rendered as text by the site.
    expect(served.title).toBe('<b>XSS</b>');
  });

  it('refuses unsafe button urls', async () => {
    for (const url of [
      'javascript:alert(1)',
      '//evil.example/x',
      '/\\evil.example',
      'http://plain.example',
      'data:text/html,x',
      ' /x',
      'https://user:pw@evil.example',
    ]) {
      await expect(send({ texts: [{ locale: 'ru', title: 't', text: '', buttons: [{ url, title: 'go' }] }] }), url).rejects.toThrow();
    }
    const ok = await send({
      texts: [
        {
          locale: 'ru',
          title: 't',
          text: '',
          buttons: [
            { url: 'https://t.me/obmen_support', title: 'Telegram' },
            { url: '/chat/support?from=notice', title: 'Чат' },
          ],
        },
      ],
    });
    expect((await check()).find((n) => n.notification_id === ok)?.buttons).toHaveLength(2);
  });

  it('listOpenNotifications serves anonymous viewers and users alike (for other envelope callers)', async () => {
    const anonymous = await listOpenNotifications(ctx.db, null, 'ru');
    const user = await listOpenNotifications(ctx.db, otherUserId, 'en');
    expect(anonymous.length).toBeGreaterThan(0);
    for (const n of [...anonymous, ...user]) expect(ZNotification.parse(n)).toEqual(n);
  });

  it('the operator command notify:send sends to everyone or to one account, in several languages', async () => {
    const all = (await NOTIFY_COMMANDS['notify:send']!(ctx.db, [
      '--all',
      '--display',
      'inner',
      '--type',
      'danger',
      '--title',
      'Плановые работы',
      '--text',
      '<p>Сегодня ночью</p>',
      '--button',
      '/article/faq,Вопросы, ответы',
      '--title-en',
      'Maintenance',
      '--text-en',
      '<p>Tonight</p>',
      '--not-closable',
      '--expires',
      '2d',
    ])) as { sent: number };
    const en = (await check(undefined, 'en')).find((n) => n.notification_id === all.sent);
    expect(en).toEqual({
      notification_id: all.sent,
      display: 'inner',
      type: 'danger',
      title: 'Maintenance',
      text: '<p>Tonight</p>',
      buttons: [{ url: '/article/faq', title: 'Вопросы, ответы' }],
      closable: false,
    });
    const one = (await NOTIFY_COMMANDS['notify:send']!(ctx.db, [
      '--user',
      String(otherAccountId),
      '--display',
      'modal',
      '--type',
      'success',
      '--locale',
      'en',
      '--title',
      'Card ready',
      '--text',
      'Your card is ready',
    ])) as { sent: number };
    expect(ids(await check(other))).toContain(one.sent);
    expect(ids(await check(demo))).not.toContain(one.sent);
    await expect(
      NOTIFY_COMMANDS['notify:send']!(ctx.db, ['--all', '--user', '12345678', '--display', 'inner', '--type', 'danger', '--title', 'x']),
    ).rejects.toThrow(/exactly one/);
    await expect(NOTIFY_COMMANDS['notify:send']!(ctx.db, ['--all', '--display', 'banner', '--type', 'danger', '--title', 'x'])).rejects.toThrow();
    await expect(NOTIFY_COMMANDS['notify:send']!(ctx.db, ['--user', '99999997', '--display', 'inner', '--type', 'danger', '--title', 'x'])).rejects.toThrow(
      /no user/,
    );
    const listed = (await NOTIFY_COMMANDS['notify:list']!(ctx.db, [])) as { id: number; account_id: number | null }[];
    expect(listed.find((n) => n.id === one.sent)?.account_id).toBe(otherAccountId);
    expect(await NOTIFY_COMMANDS['notify:delete']!(ctx.db, [String(one.sent)])).toEqual({ deleted: one.sent });
    expect(ids(await check(other))).not.toContain(one.sent);
  });

  it('parses expiry as a date or a duration', () => {
    const now = Date.parse('2026-01-01T00:00:00Z');
    expect(parseExpiry('30m', now).toISOString()).toBe('2026-01-01T00:30:00.000Z');
    expect(parseExpiry('7d', now).toISOString()).toBe('2026-01-08T00:00:00.000Z');
    expect(parseExpiry('2026-02-01T10:00:00Z', now).toISOString()).toBe('2026-02-01T10:00:00.000Z');
    expect(() => parseExpiry('soon', now)).toThrow();
  });
});
