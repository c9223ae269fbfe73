import { describe, expect, it } from 'vitest';
import { ENGINES } from '../../helpers.ts';
import { call, freshEmail, signUp } from '../../auth-helpers.ts';
import { asOperator, operatorWith, stepUpOperator, type TTestOperator, useOpsApp } from '../../ops-helpers.ts';
import { verifyAuditChain } from '../../../src/domains/audit/service.ts';
import { getSiteSettings, setSiteSetting } from '../../../src/domains/site/service.ts';
import { operatorTerms } from '../../../src/domains/referral/service.ts';
import { setLevelLimit } from '../../../src/domains/limits/service.ts';
import { setTransferSettings } from '../../../src/domains/transfer/service.ts';
import { setAutoApproval, setLargeAmount } from '../../../src/domains/payments/withdrawals.ts';
import { publishDueNotifications } from '../../../src/domains/ops/config-notifications.ts';

describe.each(ENGINES)('configuration without a shell on %s', (engine) => {
  const ctx = useOpsApp(engine);
  const clock = ctx.clock;
  const as = (op: TTestOperator, url: string, payload?: object, locale: 'ru' | 'en' = 'en') =>
    call(ctx.app, url, { ...(payload === undefined ? {} : { payload }), ...asOperator(op.token), locale });
  const operator = (roles: string[]) => operatorWith(ctx, clock, roles);
  const fresh = async (roles: string[]) => {
    const op = await operator(roles);
    await stepUpOperator(ctx.app, clock, op);
    return op;
  };
  const notificationCount = async () => (await ctx.db.query<{ n: number }>('SELECT count(*)::int AS n FROM notifications'))[0]!.n;
  const requestCount = async () => (await ctx.db.query<{ n: number }>("SELECT count(*)::int AS n FROM ops_requests WHERE action = 'config.change'"))[0]!.n;

  const NOTICE = {
    to: 'everyone',
    display: 'modal',
    type: 'success',
    texts: [
      { locale: 'ru', title: 'Новые пары', text: '<p>Теперь <b>TON</b><script>alert(1)</script></p>', buttons: [{ url: '/exchange', title: 'Обменять' }] },
      { locale: 'en', title: 'New pairs', text: '<p>Now <b>TON</b></p>', buttons: [{ url: '/exchange', title: 'Exchange' }] },
    ],
  };

  it('each screen answers only the role it belongs to; a refusal is audited', async () => {
    const [finance, admin, content, support] = [
      await operator(['finance']),
      await operator(['admin']),
      await operator(['content']),
      await operator(['support']),
    ];
    const cases: Array<[string, TTestOperator, TTestOperator[]]> = [
      ['/api/ops/config/site', admin, [finance, content, support]],
      ['/api/ops/config/referral', finance, [admin, content, support]],
      ['/api/ops/config/rates', finance, [admin, content, support]],
      ['/api/ops/config/payments', finance, [admin, content, support]],
      ['/api/ops/config/cards', finance, [admin, content, support]],
      ['/api/ops/config/limits', finance, [admin, content, support]],
      ['/api/ops/config/money', finance, [admin, content, support]],
      ['/api/ops/config/notifications', content, [finance, admin, support]],
      ['/api/ops/config/articles', content, [finance, admin, support]],
    ];
    for (const [url, allowed, refused] of cases) {
      expect((await as(allowed, url)).statusCode, url).toBe(200);
      for (const op of refused) expect({ url, code: (await as(op, url)).json().code }).toEqual({ url, code: 'ops_forbidden' });
    }
    // A sensitive change proposed by a role without its setting's permission: refused and audited, nothing stored.
    await stepUpOperator(ctx.app, clock, content);
    const before = await requestCount();
    const refused = await as(content, '/api/ops/requests', {
      action: 'config.change',
      params: { setting: 'site.site_blocked', value: true },
      reason: 'other',
      text: 'x',
    });
    expect(refused.json().code).toBe('ops_forbidden');
    const [denied] = await ctx.db.query<{ reason_code: string }>(
      "SELECT reason_code FROM operator_audit WHERE action = 'propose config.change' AND outcome = 'denied' ORDER BY id DESC LIMIT 1",
    );
    expect(denied).toEqual({ reason_code: 'missing:config.site' });
    await stepUpOperator(ctx.app, clock, admin);
    const wrongDesk = await as(admin, '/api/ops/requests', {
      action: 'config.change',
      params: { setting: 'referral.terms', value: { share: '0.3' } },
      reason: 'other',
      text: 'x',
    });
    expect(wrongDesk.json().code).toBe('ops_forbidden');
    expect(await requestCount()).toBe(before);
  });

  it('a content operator publishes a modal notification to everyone: sanitised, in both languages, audited with what it says', async () => {
    const content = await fresh(['content']);
    const preview = await as(content, '/api/ops/config/notifications/preview', { texts: NOTICE.texts });
    expect(preview.statusCode, preview.body).toBe(200);
    expect(preview.json().texts[0].text).not.toContain('script');
    expect(preview.json().texts[0].text).toContain('<b>TON</b>');

    const published = await as(content, '/api/ops/config/notifications', NOTICE);
    expect(published.statusCode, published.body).toBe(200);
    const [id] = published.json().ids as number[];
    const customer = await signUp(ctx.app, ctx.db, freshEmail('reader'), 'correct horse battery', 'en');
    for (const locale of ['ru', 'en'] as const) {
      const seen = (await call(ctx.app, '/api/notify', { token: customer, locale })).json().notifications;
      expect(seen.find((n: { notification_id: number }) => n.notification_id === id)).toMatchObject({
        display: 'modal',
        title: locale === 'ru' ? 'Новые пары' : 'New pairs',
      });
    }
    const [row] = await ctx.db.query<{ before: unknown; after: { ids: number[]; to: string; display: string } }>(
      "SELECT before, after FROM operator_audit WHERE action = 'config.notify' ORDER BY id DESC LIMIT 1",
    );
    expect(row).toMatchObject({ before: null, after: { ids: [id], to: 'everyone', display: 'modal' } });

    const removed = await as(content, `/api/ops/config/notifications/${id}/delete`, {});
    expect(removed.statusCode, removed.body).toBe(200);
    const [gone] = await ctx.db.query<{ before: { texts: unknown[] }; after: unknown }>(
      "SELECT before, after FROM operator_audit WHERE action = 'config.notify_delete' ORDER BY id DESC LIMIT 1",
    );
    expect(gone!.before.texts).toHaveLength(2);
    expect(gone!.after).toBeNull();
    expect(await verifyAuditChain(ctx.db)).toMatchObject({ intact: true });
  });

  it("a notification to chosen accounts reaches only them, live; an unknown account or a bad button refuses the whole send, in the operator's language", async () => {
    const content = await fresh(['content']);
    const email = freshEmail('chosen');
    const customer = await signUp(ctx.app, ctx.db, email, 'correct horse battery', 'en');
    const [user] = await ctx.db.query<{ id: string; account_id: number }>('SELECT id::text, account_id FROM users WHERE lower(email) = $1', [email]);
    const other = await signUp(ctx.app, ctx.db, freshEmail('other'), 'correct horse battery', 'en');

    const before = await notificationCount();
    const unknown = await as(content, '/api/ops/config/notifications', { ...NOTICE, to: 'accounts', accounts: [user!.account_id, 99999998] });
    expect(unknown.statusCode).toBe(404);
    const badButton = await as(
      content,
      '/api/ops/config/notifications',
      { ...NOTICE, texts: [{ locale: 'ru', title: 'Кнопка', buttons: [{ url: 'javascript:alert(1)', title: 'Жми' }] }] },
      'ru',
    );
    expect(badButton.statusCode).toBe(400);
    expect(badButton.json().message).toMatch(/[а-я]/i);
    const noAccounts = await as(content, '/api/ops/config/notifications', { ...NOTICE, to: 'accounts', accounts: [] });
    expect(noAccounts.json().fields).toMatchObject({ accounts: expect.any(String) });
    expect(await notificationCount()).toBe(before);

    const sent = await as(content, '/api/ops/config/notifications', { ...NOTICE, display: 'inner', to: 'accounts', accounts: [user!.account_id] });
    expect(sent.statusCode, sent.body).toBe(200);
    const [id] = sent.json().ids as number[];
    const [event] = await ctx.db.query<{ type: string }>('SELECT type FROM events WHERE user_id = $1 ORDER BY seq DESC LIMIT 1', [user!.id]);
    expect(event).toEqual({ type: 'notifications' });
    const ids = async (token: string) =>
      (await call(ctx.app, '/api/notify', { token })).json().notifications.map((n: { notification_id: number }) => n.notification_id);
    expect(await ids(customer)).toContain(id);
    expect(await ids(other)).not.toContain(id);
  });

  it('a notification scheduled for later goes out once, when due, by its job; one cancelled before never does; each step audited', async () => {
    const content = await fresh(['content']);
    const email = freshEmail('scheduled');
    const customer = await signUp(ctx.app, ctx.db, email, 'correct horse battery', 'en');
    const [user] = await ctx.db.query<{ id: string; account_id: number }>('SELECT id::text, account_id FROM users WHERE lower(email) = $1', [email]);
    const mine = async () => ((await call(ctx.app, '/api/notify', { token: customer })).json().notifications ?? []) as Array<{ title: string }>;
    const later = (ms: number) => new Date(clock.now().getTime() + ms).toISOString();
    const body = { ...NOTICE, display: 'inner', to: 'accounts', accounts: [user!.account_id] };
    const before = await notificationCount();
    const run = async () => expect(await ctx.app.jobs.runJob('notifications-scheduled')).toMatchObject({ ran: true, error: null });

    const past = await as(content, '/api/ops/config/notifications', { ...body, send_at: later(-60_000) }, 'ru');
    expect(past.json().fields).toEqual({ send_at: 'Это время уже прошло' });
    const shortLived = await as(content, '/api/ops/config/notifications', { ...body, send_at: later(3_600_000), expires_at: later(60_000) });
    expect(shortLived.json().fields).toHaveProperty('expires_at');
    const unknown = await as(content, '/api/ops/config/notifications', { ...body, accounts: [99999998], send_at: later(3_600_000) });
    expect(unknown.statusCode).toBe(404);

    const scheduled = await as(content, '/api/ops/config/notifications', { ...body, send_at: later(3_600_000) });
    expect(scheduled.statusCode, scheduled.body).toBe(200);
    const { ids, scheduled: id } = scheduled.json();
    expect(ids).toEqual([]);
    const dropped = (await as(content, '/api/ops/config/notifications', { ...body, send_at: later(7_200_000) })).json().scheduled;
    const listed = (await as(content, '/api/ops/config/notifications')).json().scheduled;
    expect(listed.map((row: { id: number }) => row.id)).toEqual([id, dropped]);
    expect(listed[0]).toMatchObject({ to: 'accounts', accounts: [user!.account_id], title: 'Новые пары', locales: ['en', 'ru'], send_at: later(3_600_000) });

    const cancelled = await as(content, `/api/ops/config/notifications/scheduled/${dropped}/cancel`, {});
    expect(cancelled.statusCode, cancelled.body).toBe(200);
    const again = await as(content, `/api/ops/config/notifications/scheduled/${dropped}/cancel`, {}, 'ru');
    expect({ status: again.statusCode, message: again.json().message }).toEqual({ status: 409, message: 'Это уведомление уже отправлено или отменено' });
    expect((await as(content, '/api/ops/config/notifications/scheduled/987654/cancel', {})).statusCode).toBe(404);

    // Not due yet: the job finds nothing.
    clock.tick(30 * 60_000);
    await run();
    expect(await notificationCount()).toBe(before);
    expect(await mine()).toEqual([]);
    clock.tick(31 * 60_000);
    await run();
    expect((await mine()).map((n) => n.title)).toEqual(['New pairs']);
    // The cancelled one's time passes too: nothing more goes out.
    clock.tick(2 * 3_600_000);
    await run();
    expect(await notificationCount()).toBe(before + 1);
    const states = await ctx.db.query<{ state: string }>('SELECT state FROM notifications_scheduled WHERE id IN ($1, $2) ORDER BY id', [id, dropped]);
    expect(states.map((row) => row.state)).toEqual(['sent', 'cancelled']);

    const trail = await ctx.db.query<{ operator: string; action: string; subject: string }>(
      'SELECT operator, action, subject FROM operator_audit WHERE subject IN ($1, $2) ORDER BY id',
      [`notification_scheduled:${id}`, `notification_scheduled:${dropped}`],
    );
    expect(trail.map((row) => [row.operator.split(':')[0], row.action, row.subject])).toEqual([
      ['operator', 'config.notify_schedule', `notification_scheduled:${id}`],
      ['operator', 'config.notify_schedule', `notification_scheduled:${dropped}`],
      ['operator', 'config.notify_cancel', `notification_scheduled:${dropped}`],
      ['system', 'config.notify_scheduled_sent', `notification_scheduled:${id}`],
    ]);
  });

  it('cores publishing due notifications at the same moment send each exactly once', async () => {
    const content = await fresh(['content']);
    const sendAt = new Date(clock.now().getTime() + 60_000);
    const scheduled: number[] = [];
    for (let i = 0; i < 6; i++)
      scheduled.push((await as(content, '/api/ops/config/notifications', { ...NOTICE, send_at: sendAt.toISOString() })).json().scheduled);
    const before = await notificationCount();
    const due = new Date(sendAt.getTime() + 1);
    const runs = await Promise.all([1, 2, 3, 4].map(() => publishDueNotifications(ctx.db, due)));
    expect(runs.reduce((sum, run) => sum + run.sent, 0)).toBe(6);
    expect(await notificationCount()).toBe(before + 6);
    const rows = await ctx.db.query<{ state: string; n: number }>(
      'SELECT state, cardinality(notification_ids) AS n FROM notifications_scheduled WHERE id = ANY($1::bigint[]) ORDER BY id',
      [scheduled],
    );
    expect(rows).toEqual(scheduled.map(() => ({ state: 'sent', n: 1 })));
    await ctx.db.query('DELETE FROM notifications WHERE id IN (SELECT unnest(notification_ids) FROM notifications_scheduled WHERE id = ANY($1::bigint[]))', [
      scheduled,
    ]);
  });

  it('a sensitive setting changes only when a second operator approves; the proposer cannot; the audit row keeps before and after', async () => {
    const [ann, bob] = [await fresh(['admin']), await fresh(['admin'])];
    const proposed = await as(ann, '/api/ops/requests', {
      action: 'config.change',
      params: { setting: 'site.auth_type', value: 'email' },
      reason: 'other',
      text: 'magic links',
    });
    expect(proposed.statusCode, proposed.body).toBe(200);
    const { id, subject } = proposed.json().request;
    expect(subject).toBe('config:site.auth_type');
    expect((await getSiteSettings(ctx.db)).auth_type).toBe('password');
    for (const decision of ['approve', 'decline']) expect((await as(ann, `/api/ops/requests/${id}/${decision}`, {})).json().code).toBe('ops_four_eyes');
    expect((await getSiteSettings(ctx.db)).auth_type).toBe('password');

    const approved = await as(bob, `/api/ops/requests/${id}/approve`, {});
    expect(approved.statusCode, approved.body).toBe(200);
    expect((await getSiteSettings(ctx.db)).auth_type).toBe('email');
    expect((await as(bob, '/api/ops/config/site')).json().settings.auth_type).toBe('email');
    const [row] = await ctx.db.query<{ before: unknown; after: unknown }>(
      "SELECT before, after FROM operator_audit WHERE action = 'request.approve:config.change' AND details->>'request' = $1",
      [id],
    );
    expect(row).toEqual({ before: { auth_type: 'password' }, after: { auth_type: 'email' } });
    await setSiteSetting(ctx.db, 'auth_type', 'password');
  });

  it('referral terms: a value the service refuses is refused at proposal, localized, and nothing is stored or changed', async () => {
    const [first, second] = [await fresh(['finance']), await fresh(['finance'])];
    const terms = await operatorTerms(ctx.db);
    const before = await requestCount();
    const bad = await as(
      first,
      '/api/ops/requests',
      { action: 'config.change', params: { setting: 'referral.terms', value: { share: '0.2', currency: 'USDT', hold: 'soon' } }, reason: 'other', text: 'x' },
      'ru',
    );
    expect(bad.statusCode).toBe(400);
    expect(bad.json().message).toMatch(/[а-я]/i);
    const badType = await as(first, '/api/ops/requests', {
      action: 'config.change',
      params: { setting: 'site.auth_type', value: 'sms' },
      reason: 'other',
      text: 'x',
    });
    expect(badType.statusCode).toBe(400);
    expect(await requestCount()).toBe(before);
    expect(await operatorTerms(ctx.db)).toEqual(terms);

    const good = await as(first, '/api/ops/requests', {
      action: 'config.change',
      params: { setting: 'referral.terms', value: { share: '0.25', currency: 'USDT', hold: '7d', min: '1' } },
      reason: 'other',
      text: 'spring promotion',
    });
    expect(good.statusCode, good.body).toBe(200);
    expect(await operatorTerms(ctx.db)).toEqual(terms);
    const approved = await as(second, `/api/ops/requests/${good.json().request.id}/approve`, {});
    expect(approved.statusCode, approved.body).toBe(200);
    expect(await operatorTerms(ctx.db)).toMatchObject({ share: '0.25', currency: 'USDT', hold_seconds: 7 * 86400, min_payout: '1.000000' });
    const [row] = await ctx.db.query<{ before: unknown; after: { share: string } }>(
      "SELECT before, after FROM operator_audit WHERE action = 'request.approve:config.change' ORDER BY id DESC LIMIT 1",
    );
    expect(row!.before).toEqual(terms);
    expect(row!.after.share).toBe('0.25');
  });

  it("a pair's spread is changed at once by finance, audited with the pair before and after; a bad value changes nothing", async () => {
    const finance = await fresh(['finance']);
    const rates = (await as(finance, '/api/ops/config/rates')).json();
    expect(rates.feed).toEqual({ source: 'table', fetched_at: null });
    const pair = rates.pairs.find((row: { src: string; dst: string }) => row.src === 'BTC' && row.dst === 'USDT');
    expect(pair).toBeDefined();

    const bad = await as(finance, '/api/ops/config/rates', { src: 'btc', dst: 'USDT', spread: 'lots' }, 'ru');
    expect(bad.statusCode).toBe(400);
    expect(bad.json().message).toMatch(/[а-я]/i);
    const same = (await as(finance, '/api/ops/config/rates')).json().pairs.find((row: { src: string; dst: string }) => row.src === 'BTC' && row.dst === 'USDT');
    expect(same).toEqual(pair);

    const changed = await as(finance, '/api/ops/config/rates', { src: 'btc', dst: 'usdt', spread: '0.0123' });
    expect(changed.statusCode, changed.body).toBe(200);
    expect(changed.json().pair).toMatchObject({ src: 'BTC', dst: 'USDT', spread: '0.0123', rate: pair.rate, source: 'operator' });
    const [row] = await ctx.db.query<{ subject: string; before: { spread: string }; after: { spread: string } }>(
      "SELECT subject, before, after FROM operator_audit WHERE action = 'config.rate' ORDER BY id DESC LIMIT 1",
    );
    expect(row).toMatchObject({ subject: 'rate:BTC/USDT', before: { spread: pair.spread }, after: { spread: '0.0123' } });
  });

  it("a payment system's fee waits for a second finance operator; turning a currency off is direct; both audited with before and after", async () => {
    const [first, second] = [await fresh(['finance']), await fresh(['finance'])];
    type TRow = { direction: string; id: string; currency: string; fee_percent: string; currency_enabled: boolean; level: number };
    const systems = async () => (await as(first, '/api/ops/config/payments')).json().systems as TRow[];
    const row = (await systems()).find((system) => system.currency_enabled)!;
    const find = async () =>
      (await systems()).find((system) => system.direction === row.direction && system.id === row.id && system.currency === row.currency)!;
    const key = { direction: row.direction, id: row.id, currency: row.currency };

    const badMax = await as(
      first,
      '/api/ops/requests',
      { action: 'config.change', params: { setting: 'payments.price', value: { ...key, min: '10', max: '1' } }, reason: 'other', text: 'x' },
      'ru',
    );
    expect({ status: badMax.statusCode, message: badMax.json().message }).toEqual({ status: 400, message: 'Максимум должен быть не меньше минимума' });

    const proposed = await as(first, '/api/ops/requests', {
      action: 'config.change',
      params: { setting: 'payments.price', value: { ...key, fee_percent: '2.5' } },
      reason: 'other',
      text: 'provider raised its price',
    });
    expect(proposed.statusCode, proposed.body).toBe(200);
    expect((await find()).fee_percent).toBe(row.fee_percent);
    expect((await as(first, `/api/ops/requests/${proposed.json().request.id}/approve`, {})).json().code).toBe('ops_four_eyes');
    expect((await as(second, `/api/ops/requests/${proposed.json().request.id}/approve`, {})).statusCode).toBe(200);
    expect((await find()).fee_percent).toBe('2.5');
    const [priced] = await ctx.db.query<{ before: { fee_percent: string }; after: { fee_percent: string } }>(
      "SELECT before, after FROM operator_audit WHERE action = 'request.approve:config.change' ORDER BY id DESC LIMIT 1",
    );
    expect({ before: priced!.before.fee_percent, after: priced!.after.fee_percent }).toEqual({ before: row.fee_percent, after: '2.5' });

    const off = await as(first, '/api/ops/config/payments/enabled', { ...key, enabled: false });
    expect(off.statusCode, off.body).toBe(200);
    expect((await find()).currency_enabled).toBe(false);
    const [toggled] = await ctx.db.query<{ before: { rows: TRow[] }; after: { rows: TRow[] } }>(
      "SELECT before, after FROM operator_audit WHERE action = 'config.payment_disable' ORDER BY id DESC LIMIT 1",
    );
    expect([toggled!.before.rows[0]!.currency_enabled, toggled!.after.rows[0]!.currency_enabled]).toEqual([true, false]);
    expect((await as(first, '/api/ops/config/payments/enabled', { ...key, enabled: true })).statusCode).toBe(200);
    const unknown = await as(first, '/api/ops/config/payments/enabled', { ...key, id: 'no-such-system', enabled: true });
    expect(unknown.json().code).toBe('payment_system_unknown');

    // The level the whole system needs: four eyes too; a level that does not exist is refused at proposal.
    const level = (value: string) =>
      as(first, '/api/ops/requests', {
        action: 'config.change',
        params: { setting: 'payments.price', value: { ...key, level: value } },
        reason: 'other',
        text: 'x',
      });
    expect((await level('5')).json()).toMatchObject({ code: 'validation', fields: { level: expect.any(String) } });
    const raised = await level(String(1 - (await find()).level));
    expect(raised.statusCode, raised.body).toBe(200);
    const before = (await find()).level;
    expect((await as(second, `/api/ops/requests/${raised.json().request.id}/approve`, {})).statusCode).toBe(200);
    expect((await find()).level).toBe(1 - before);
  });

  it("a card product's prices wait for a second finance operator; taking it out of the catalogue is direct; both audited with before and after", async () => {
    const [first, second, support] = [await fresh(['finance']), await fresh(['finance']), await fresh(['support'])];
    type TProduct = { id: string; issue_fee: string; monthly_fee: string; fee_currency: string; enabled: boolean; limits: unknown[] };
    const product = async () => ((await as(first, '/api/ops/config/cards')).json().products as TProduct[]).find((row) => row.id === 'virtual')!;
    const was = await product();
    expect(was).toMatchObject({ kind: 'virtual', name: { en: 'Virtual card' }, fee_currency: 'USD', enabled: true });
    expect({ code: (await as(support, '/api/ops/config/cards')).json().code }).toEqual({ code: 'ops_forbidden' });
    expect((await as(support, '/api/ops/config/cards/enabled', { id: 'virtual', enabled: false })).json().code).toBe('ops_forbidden');
    const supportPrice = await as(support, '/api/ops/requests', {
      action: 'config.change',
      params: { setting: 'cards.price', value: { id: 'virtual', issue_fee: '0' } },
      reason: 'other',
      text: 'x',
    });
    expect(supportPrice.json().code).toBe('ops_forbidden');

    const propose = (value: object, locale: 'ru' | 'en' = 'en') =>
      as(
        first,
        '/api/ops/requests',
        { action: 'config.change', params: { setting: 'cards.price', value }, reason: 'other', text: 'issuer raised its price' },
        locale,
      );
    const before = await requestCount();
    const negative = await propose({ id: 'virtual', issue_fee: '-5', monthly_fee: '1', fee_currency: 'USD' }, 'ru');
    expect(negative.statusCode).toBe(400);
    expect(negative.json().fields).toMatchObject({ 'params.value.issue_fee': expect.stringMatching(/[а-я]/i) });
    const unknown = await propose({ id: 'virtual', issue_fee: '5', monthly_fee: '1', fee_currency: 'XYZ' }, 'ru');
    expect({ status: unknown.statusCode, code: unknown.json().code, message: unknown.json().message }).toEqual({
      status: 400,
      code: 'unknown_currency',
      message: 'Неизвестная валюта: XYZ',
    });
    const badLimit = await propose({ id: 'virtual', limits: 'QQQ:1/2' }, 'ru');
    expect(badLimit.json().code).toBe('unknown_currency');
    expect((await propose({ id: 'no-such-card', issue_fee: '1' })).statusCode).toBe(404);
    expect(await requestCount()).toBe(before);
    expect(await product()).toEqual(was);

    const proposed = await propose({ id: 'virtual', issue_fee: '7.5', monthly_fee: '2', fee_currency: 'usd', limits: 'USD:6000/25000' });
    expect(proposed.statusCode, proposed.body).toBe(200);
    const { id, subject } = proposed.json().request;
    expect(subject).toBe('config:cards.price:virtual');
    expect(await product()).toEqual(was);
    expect((await as(first, `/api/ops/requests/${id}/approve`, {})).json().code).toBe('ops_four_eyes');
    expect(await product()).toEqual(was);
    const approved = await as(second, `/api/ops/requests/${id}/approve`, {});
    expect(approved.statusCode, approved.body).toBe(200);
    const priced = await product();
    expect(priced).toMatchObject({
      issue_fee: '7.50',
      monthly_fee: '2.00',
      fee_currency: 'USD',
      limits: [{ currency: 'USD', day: '6000.00', month: '25000.00' }],
    });
    const [row] = await ctx.db.query<{ before: TProduct; after: TProduct }>(
      "SELECT before, after FROM operator_audit WHERE action = 'request.approve:config.change' AND details->>'request' = $1",
      [id],
    );
    expect({ before: row!.before.issue_fee, after: row!.after.issue_fee }).toEqual({ before: was.issue_fee, after: '7.50' });
    // Customers see the new price for new orders.
    const customer = await signUp(ctx.app, ctx.db, freshEmail('card-price'), 'correct horse battery', 'en');
    const offered = (await call(ctx.app, '/api/card', { token: customer })).json().products.find((p: { id: string }) => p.id === 'virtual');
    expect(offered.issue_fee).toBe('7.50');

    const off = await as(first, '/api/ops/config/cards/enabled', { id: 'virtual', enabled: false });
    expect(off.statusCode, off.body).toBe(200);
    expect(off.json().products.find((p: TProduct) => p.id === 'virtual').enabled).toBe(false);
    const catalogue = (await call(ctx.app, '/api/card', { token: customer })).json().products.map((p: { id: string }) => p.id);
    expect(catalogue).not.toContain('virtual');
    const [toggled] = await ctx.db.query<{ subject: string; before: TProduct; after: TProduct }>(
      "SELECT subject, before, after FROM operator_audit WHERE action = 'config.card_disable' ORDER BY id DESC LIMIT 1",
    );
    expect({ subject: toggled!.subject, before: toggled!.before.enabled, after: toggled!.after.enabled }).toEqual({
      subject: 'card_product:virtual',
      before: true,
      after: false,
    });
    expect((await as(first, '/api/ops/config/cards/enabled', { id: 'virtual', enabled: true })).statusCode).toBe(200);
    expect((await as(first, '/api/ops/config/cards/enabled', { id: 'no-such-card', enabled: true })).statusCode).toBe(404);
    // The catalogue as it was, for the tests after this one.
    const restored = await as(first, '/api/ops/requests', {
      action: 'config.change',
      params: {
        setting: 'cards.price',
        value: { id: 'virtual', issue_fee: was.issue_fee, monthly_fee: was.monthly_fee, fee_currency: 'USD', limits: 'USD:5000/20000,EUR:4500/18000' },
      },
      reason: 'other',
      text: 'back',
    });
    expect((await as(second, `/api/ops/requests/${restored.json().request.id}/approve`, {})).statusCode).toBe(200);
    expect(await product()).toEqual(was);
    expect(await verifyAuditChain(ctx.db)).toMatchObject({ intact: true });
  });

  it("a level's limits change only when a second finance operator approves; a bad value is refused at proposal, in the operator's language", async () => {
    const [first, second, support] = [await fresh(['finance']), await fresh(['finance']), await fresh(['support'])];
    type TLimit = { level: number; operation: string; currency: string; per_24h: string; per_30d: string };
    const limit = async () =>
      ((await as(first, '/api/ops/config/limits')).json().limits as TLimit[]).find((row) => row.level === 1 && row.operation === 'withdrawal')!;
    const was = await limit();
    expect(was).toEqual({ level: 1, operation: 'withdrawal', currency: 'USD', per_24h: '20000', per_30d: '100000' });
    const propose = (value: object, by = first, locale: 'ru' | 'en' = 'en') =>
      as(by, '/api/ops/requests', { action: 'config.change', params: { setting: 'limits.level', value }, reason: 'other', text: 'new rules' }, locale);
    const good = { level: 1, operation: 'withdrawal', currency: 'usdt', per_24h: '30000', per_30d: '150000' };
    expect((await propose(good, support)).json().code).toBe('ops_forbidden');

    const before = await requestCount();
    const inverted = await propose({ ...good, per_24h: '200000' }, first, 'ru');
    expect({ status: inverted.statusCode, code: inverted.json().code }).toEqual({ status: 400, code: 'validation' });
    expect(inverted.json().fields.per_30d).toBe('Лимит за 30 дней не может быть меньше лимита за 24 часа');
    const negative = await propose({ ...good, per_24h: '-1' }, first, 'ru');
    expect(negative.json().fields).toMatchObject({ 'params.value.per_24h': expect.stringMatching(/[а-я]/i) });
    expect((await propose({ ...good, currency: 'XYZ' }, first, 'ru')).json().message).toBe('Неизвестная валюта: XYZ');
    expect((await propose({ ...good, per_24h: '0.0000001' })).json().code).toBe('not_an_amount');
    expect((await propose({ ...good, level: 2 })).statusCode).toBe(400);
    expect(await requestCount()).toBe(before);

    const proposed = await propose(good);
    expect(proposed.statusCode, proposed.body).toBe(200);
    const { id, subject } = proposed.json().request;
    expect(subject).toBe('config:limits.level:1:withdrawal');
    expect(await limit()).toEqual(was);
    expect((await as(first, `/api/ops/requests/${id}/approve`, {})).json().code).toBe('ops_four_eyes');
    const approved = await as(second, `/api/ops/requests/${id}/approve`, {});
    expect(approved.statusCode, approved.body).toBe(200);
    const changed = { level: 1, operation: 'withdrawal', currency: 'USDT', per_24h: '30000', per_30d: '150000' };
    expect(await limit()).toEqual(changed);
    // Customers read the same table.
    const customer = await signUp(ctx.app, ctx.db, freshEmail('limits'), 'correct horse battery', 'en');
    const shown = (await call(ctx.app, '/api/verification', { token: customer })).json().verification.limits as TLimit[];
    expect(shown.find((row) => row.level === 1 && row.operation === 'withdrawal')).toEqual(changed);
    const [row] = await ctx.db.query<{ before: TLimit; after: TLimit }>(
      "SELECT before, after FROM operator_audit WHERE action = 'request.approve:config.change' AND details->>'request' = $1",
      [id],
    );
    expect(row).toEqual({ before: was, after: changed });
    await setLevelLimit(ctx.db, { level: 1, operation: 'withdrawal', currency: 'USD', per_24h: '20000', per_30d: '100000' });
    expect(await verifyAuditChain(ctx.db)).toMatchObject({ intact: true });
  });

  it("transfer terms and the withdrawal amounts change only when a second finance operator approves; a bad value is refused at proposal, in the operator's language", async () => {
    const [first, second, support] = [await fresh(['finance']), await fresh(['finance']), await fresh(['support'])];
    type TRow = { currency: string; transfer: Record<string, unknown> | null; large: string | null; auto: string | null };
    const usd = async () => ((await as(first, '/api/ops/config/money')).json().currencies as TRow[]).find((row) => row.currency === 'USD')!;
    const was = await usd();
    const propose = (setting: string, value: object, by = first, locale: 'ru' | 'en' = 'en') =>
      as(by, '/api/ops/requests', { action: 'config.change', params: { setting, value }, reason: 'other', text: 'new terms' }, locale);
    const terms = { currency: 'usd', min: '5', max: '1000', fee_percent: '0.01', fee_fixed: '0.5' };
    expect((await propose('transfer.terms', terms, support)).json().code).toBe('ops_forbidden');

    const before = await requestCount();
    const zero = await propose('transfer.terms', { ...terms, min: '0' }, first, 'ru');
    expect({ status: zero.statusCode, min: zero.json().fields?.min }).toEqual({ status: 400, min: 'Минимум должен быть больше нуля' });
    expect((await propose('transfer.terms', { ...terms, max: '4' }, first, 'ru')).json().fields?.max).toBe('Максимум не может быть меньше минимума');
    expect((await propose('transfer.terms', { ...terms, fee_percent: '1.5' })).json().code).toBe('fraction_out_of_range');
    expect((await propose('withdraw.large', { currency: 'XYZ', amount: '100' }, first, 'ru')).json().message).toBe('Неизвестная валюта: XYZ');
    expect((await propose('withdraw.auto', { currency: 'USD', amount: '0.001' })).json().code).toBe('not_an_amount');
    expect((await propose('withdraw.auto', { currency: 'USD' })).statusCode).toBe(400);
    expect(await requestCount()).toBe(before);

    const approveBoth = async (setting: string, value: object) => {
      const unchanged = await usd();
      const proposed = await propose(setting, value);
      expect(proposed.statusCode, proposed.body).toBe(200);
      const { id, subject } = proposed.json().request;
      expect(await usd()).toEqual(unchanged);
      expect((await as(first, `/api/ops/requests/${id}/approve`, {})).json().code).toBe('ops_four_eyes');
      const approved = await as(second, `/api/ops/requests/${id}/approve`, {});
      expect(approved.statusCode, approved.body).toBe(200);
      const [row] = await ctx.db.query<{ before: unknown; after: unknown }>(
        "SELECT before, after FROM operator_audit WHERE action = 'request.approve:config.change' AND details->>'request' = $1",
        [id],
      );
      return { subject, audit: row };
    };

    const transfer = await approveBoth('transfer.terms', terms);
    expect(transfer.subject).toBe('config:transfer.terms:USD');
    const changedTerms = { min: '5.00', max: '1000.00', fee_percent: '0.01', fee_fixed: '0.50', enabled: was.transfer?.enabled ?? true };
    expect((await usd()).transfer).toEqual(changedTerms);
    expect(transfer.audit).toEqual({ before: was.transfer && { currency: 'USD', ...was.transfer }, after: { currency: 'USD', ...changedTerms } });
    // Customers are held to the same terms.
    const customer = await signUp(ctx.app, ctx.db, freshEmail('transfer-terms'), 'correct horse battery', 'en');
    const offered = (await call(ctx.app, '/api/transfer', { token: customer })).json().currencies.find((row: { code: string }) => row.code === 'USD');
    expect(offered).toMatchObject({ min: '5.00', max: '1000.00', fee_percent: '0.01', fee_fixed: '0.50' });
    const afterTransfer = await usd();

    const large = await approveBoth('withdraw.large', { currency: 'USD', amount: '2500' });
    expect(large.subject).toBe('config:withdraw.large:USD');
    expect(large.audit).toEqual({ before: { currency: 'USD', min_amount: was.large }, after: { currency: 'USD', min_amount: '2500.00' } });
    const auto = await approveBoth('withdraw.auto', { currency: 'USD', amount: '0' });
    expect(auto.subject).toBe('config:withdraw.auto:USD');
    expect(auto.audit).toEqual({ before: { currency: 'USD', max_amount: was.auto }, after: { currency: 'USD', max_amount: '0.00' } });
    expect(await usd()).toEqual({ ...afterTransfer, large: '2500.00', auto: '0.00' });
    expect(await verifyAuditChain(ctx.db)).toMatchObject({ intact: true });

    // As it was, for the tests after this one.
    await ctx.db.query("DELETE FROM transfer_settings WHERE currency = 'USD'");
    if (was.transfer)
      await setTransferSettings(ctx.db, 'USD', { ...was.transfer, max: was.transfer.max ?? 'none', enabled: String(was.transfer.enabled) } as never);
    await setLargeAmount(ctx.db, 'USD', was.large ?? '0');
    if (was.auto === null) await ctx.db.query("DELETE FROM withdraw_auto_approval WHERE currency = 'USD'");
    else await setAutoApproval(ctx.db, 'USD', was.auto);
    expect(await usd()).toEqual(was);
  });

  it('a finance operator adds a card product: out of the catalogue, audited with the new row as after; a taken code or a bad value changes nothing', async () => {
    const stale = await operator(['finance']);
    clock.tick(6 * 60_000);
    const [finance, support] = [await fresh(['finance']), await fresh(['support'])];
    const METAL = {
      id: 'metal',
      kind: 'physical',
      name_ru: 'Металлическая',
      name_en: 'Metal card',
      currencies: 'usd, EUR',
      fee_currency: 'USD',
      issue_fee: '50',
      monthly_fee: '5',
      limits: 'USD:10000/40000, EUR:9000/36000',
      delivery_days: '14',
    };
    const create = (body: object, by = finance, locale: 'ru' | 'en' = 'en') => as(by, '/api/ops/config/cards', body, locale);
    const count = async () => (await ctx.db.query<{ n: number }>('SELECT count(*)::int AS n FROM card_products'))[0]!.n;
    const was = await count();
    expect((await create(METAL, support)).json().code).toBe('ops_forbidden');
    expect((await create(METAL, stale)).json().code).toBe('step_up_required');
    const badLimits = await create({ ...METAL, limits: 'USD:1' }, finance, 'ru');
    expect(badLimits.json().fields).toMatchObject({ limits: expect.stringMatching(/[а-я]/i) });
    expect((await create({ ...METAL, delivery_days: '91' })).json().fields).toHaveProperty('delivery_days');
    expect((await create({ ...METAL, fee_currency: 'XYZ' }, finance, 'ru')).json().message).toBe('Неизвестная валюта: XYZ');
    expect(await count()).toBe(was);

    const created = await create(METAL);
    expect(created.statusCode, created.body).toBe(200);
    const product = created.json().products.find((row: { id: string }) => row.id === 'metal');
    expect(product).toMatchObject({
      kind: 'physical',
      name: { ru: 'Металлическая', en: 'Metal card' },
      currencies: ['USD', 'EUR'],
      issue_fee: '50.00',
      monthly_fee: '5.00',
      limits: [
        { currency: 'USD', day: '10000.00', month: '40000.00' },
        { currency: 'EUR', day: '9000.00', month: '36000.00' },
      ],
      delivery_days: 14,
      enabled: false,
    });
    const customer = await signUp(ctx.app, ctx.db, freshEmail('card-new'), 'correct horse battery', 'en');
    const offered = async () => (await call(ctx.app, '/api/card', { token: customer })).json().products.map((p: { id: string }) => p.id);
    expect(await offered()).not.toContain('metal');
    const [row] = await ctx.db.query<{ subject: string; before: unknown; after: unknown }>(
      "SELECT subject, before, after FROM operator_audit WHERE action = 'config.card_create' ORDER BY id DESC LIMIT 1",
    );
    expect(row).toEqual({ subject: 'card_product:metal', before: null, after: product });

    const taken = await create({ ...METAL, name_en: 'Another' }, finance, 'ru');
    expect({ status: taken.statusCode, id: taken.json().fields?.id }).toEqual({ status: 400, id: 'Продукт с таким кодом уже есть' });
    expect(await count()).toBe(was + 1);
    expect((await as(finance, '/api/ops/config/cards/enabled', { id: 'metal', enabled: true })).statusCode).toBe(200);
    expect(await offered()).toContain('metal');
    await ctx.db.query("DELETE FROM card_products WHERE id = 'metal'");
  });

  it('an article from Markdown: the preview is what the page serves; publishing is audited with before and after', async () => {
    const content = await fresh(['content']);
    const markdown = '# Limits\n\nDaily **limits** apply.<script>alert(1)</script>\n\n- one\n- two';
    const preview = (await as(content, '/api/ops/config/articles/preview', { markdown })).json().html as string;
    expect(preview).toContain('<strong>limits</strong>');
    expect(preview).toContain('<li>one</li>');
    expect(preview).not.toContain('script');

    const name = `limits-${Date.now()}`;
    const first = await as(content, '/api/ops/config/articles', { name, locale: 'en', title: 'Limits', markdown });
    expect(first.statusCode, first.body).toBe(200);
    expect(first.json().article.body_html).toBe(preview);
    const second = await as(content, '/api/ops/config/articles', { name, locale: 'en', title: 'Limits, 2027', markdown: 'Changed.' });
    expect(second.statusCode).toBe(200);
    const [row] = await ctx.db.query<{ subject: string; before: { title: string }; after: { title: string; body_html: string } }>(
      "SELECT subject, before, after FROM operator_audit WHERE action = 'config.article' ORDER BY id DESC LIMIT 1",
    );
    expect(row).toMatchObject({ subject: `article:${name}:en`, before: { title: 'Limits' }, after: { title: 'Limits, 2027', body_html: '<p>Changed.</p>' } });
    expect((await call(ctx.app, `/api/content/article/${name}`, { locale: 'en' })).json().article.title).toBe('Limits, 2027');

    const bad = await as(content, '/api/ops/config/articles', { name: 'Bad Name!', locale: 'en', title: '', markdown: 'x' }, 'ru');
    expect(bad.statusCode).toBe(400);
    expect(Object.keys(bad.json().fields ?? {}).sort()).toEqual(['name', 'title']);
  });

  it('a menu item is set and removed per language, each change audited with the item before and after', async () => {
    const content = await fresh(['content']);
    const item = { locale: 'en', menu: 'footer_menu', url: `article/e2e-${Date.now()}`, title: 'Fees', order: 7 };
    const set = await as(content, '/api/ops/config/menus', item);
    expect(set.statusCode, set.body).toBe(200);
    expect(set.json().menus.en.footer_menu).toContainEqual({ url: item.url, title: 'Fees', order: 7 });
    expect(set.json().menus.ru.footer_menu.map((row: { url: string }) => row.url)).not.toContain(item.url);
    const renamed = await as(content, '/api/ops/config/menus', { ...item, title: 'Our fees' });
    expect(renamed.statusCode).toBe(200);
    const removed = await as(content, '/api/ops/config/menus/remove', { locale: 'en', menu: 'footer_menu', url: item.url });
    expect(removed.json().menus.en.footer_menu.map((row: { url: string }) => row.url)).not.toContain(item.url);
    const rows = await ctx.db.query<{ action: string; before: { title: string } | null; after: { title: string } | null }>(
      'SELECT action, before, after FROM operator_audit WHERE subject = $1 ORDER BY id',
      [`menu:en:footer_menu:${item.url}`],
    );
    expect(rows.map((row) => [row.action, row.before?.title ?? null, row.after?.title ?? null])).toEqual([
      ['config.menu_set', null, 'Fees'],
      ['config.menu_set', 'Fees', 'Our fees'],
      ['config.menu_remove', 'Our fees', null],
    ]);
    const bad = await as(content, '/api/ops/config/menus', { ...item, url: 'javascript:alert(1)' });
    expect(bad.json().fields).toMatchObject({ url: expect.any(String) });
  });
});
