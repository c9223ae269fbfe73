import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OPS_QUEUES, type TOpsChatReport, type TOpsQueue, type TOpsSupportItem, type TOpsSupportThreadResponse } from '@obmen/shared';
import { build, ENGINES } from '../../helpers.ts';
import { call } from '../../auth-helpers.ts';
import { createFixtureUser, type TFixtureUser } from '../../fixtures.ts';
import { asOperator, operatorWith as operatorWithRoles, type TTestOperator } from '../../ops-helpers.ts';
import { multipart, png } from '../../storage/upload-fixtures.ts';
import { verifyAuditChain } from '../../../src/domains/audit/service.ts';

describe.each(ENGINES)('the support desk on %s', (engine) => {
  let ctx: Awaited<ReturnType<typeof build>>;
  let filesDir: string;
  // Near the real time: the customers' messages are stamped by the database's clock.
  let clock = new Date();
  const tick = (ms: number) => {
    clock = new Date(clock.getTime() + ms);
  };
  const clockOf = { now: () => clock, tick };
  let ann: TTestOperator;
  let bob: TTestOperator;

  beforeAll(async () => {
    filesDir = await mkdtemp(path.join(tmpdir(), 'obmen-desk-'));
    ctx = await build(engine, { FILES_DIR: filesDir }, { now: () => clock });
    ann = await operatorWith(['support']);
    bob = await operatorWith(['support']);
  });
  afterAll(async () => {
    await ctx?.close();
    await rm(filesDir, { recursive: true, force: true });
  });

  /** Time passes with both operators at work (a session idle for 15 minutes ends). */
  const pass = async (ms: number) => {
    for (let left = ms; left > 0; left -= 5 * 60_000) {
      tick(Math.min(left, 5 * 60_000));
      for (const op of [ann, bob]) expect((await call(ctx.app, '/api/ops/me', asOperator(op.token))).statusCode).toBe(200);
    }
  };
  const operatorWith = (roles: string[]) => operatorWithRoles(ctx, clockOf, roles);
  const as = (op: TTestOperator, extra: Parameters<typeof call>[2] = {}) => ({ ...asOperator(op.token), ...extra });
  const customerWrites = async (text: string) => {
    const customer = await createFixtureUser(ctx.db);
    expect((await call(ctx.app, '/api/support', { token: customer.token, payload: { text } })).statusCode).toBe(200);
    return customer;
  };
  const itemOf = async (op: TTestOperator, customer: TFixtureUser) =>
    (await call(ctx.app, '/api/ops/support', as(op)))
      .json<{ conversations: TOpsSupportItem[] }>()
      .conversations.find((row) => row.account_id === customer.accountId);
  const claim = (op: TTestOperator, customer: TFixtureUser) => call(ctx.app, `/api/ops/support/${customer.accountId}/claim`, as(op, { method: 'POST' }));
  const auditOf = (action: string, subject: string) =>
    ctx.db.query<{ operator: string; outcome: string; request_id: string | null; ip: string | null }>(
      'SELECT operator, outcome, request_id, ip FROM operator_audit WHERE action = $1 AND subject = $2 ORDER BY id',
      [action, subject],
    );

  it('one claim at a time: a colleague sees who holds it, and it lapses after 15 minutes untouched', async () => {
    const customer = await customerWrites('Where is my deposit?');
    expect((await claim(ann, customer)).json()).toMatchObject({ status: 'ok', claim: { operator: ann.email, mine: true } });
    const refused = await claim(bob, customer);
    expect({ status: refused.statusCode, code: refused.json().code }).toEqual({ status: 409, code: 'ops_claimed' });
    expect((await itemOf(bob, customer))?.claim).toMatchObject({ operator: ann.email, mine: false });
    await pass(15 * 60_000 + 1000);
    expect((await itemOf(bob, customer))?.claim).toBeNull();
    expect((await claim(bob, customer)).json()).toMatchObject({ claim: { operator: bob.email, mine: true } });
  });

  it('a reply keeps the claim alive and reaches the customer; a colleague cannot answer over it', async () => {
    const customer = await customerWrites('Hello?');
    await claim(ann, customer);
    await pass(10 * 60_000);
    const answered = await call(ctx.app, `/api/ops/support/${customer.accountId}/reply`, as(ann, { payload: { text: 'Looking into it.' } }));
    expect(answered.json()).toMatchObject({ status: 'ok', message: { author: 'operator', text: 'Looking into it.' } });
    await pass(10 * 60_000);
    // 20 minutes after the claim, 10 after the reply: still Ann's.
    expect((await claim(bob, customer)).statusCode).toBe(409);
    const over = await call(ctx.app, `/api/ops/support/${customer.accountId}/reply`, as(bob, { payload: { text: 'me too' } }));
    expect(over.statusCode).toBe(409);
    const page = (await call(ctx.app, '/api/support', { token: customer.token })).json<{ messages: Array<{ author: string; text: string }> }>();
    expect(page.messages.map((m) => [m.author, m.text])).toEqual([
      ['me', 'Hello?'],
      ['operator', 'Looking into it.'],
    ]);
    expect(await itemOf(ann, customer)).toMatchObject({ waited_ms: null, unread: 0 });
  });

  it("replies with a file, shows the customer's file to an operator who may see files, each view audited", async () => {
    const customer = await createFixtureUser(ctx.db);
    const form = multipart([
      { name: 'text', value: 'Here is the receipt' },
      { name: 'file0', filename: 'receipt.png', content: await png(), type: 'image/png' },
    ]);
    const sent = await ctx.app.inject({
      method: 'POST',
      url: '/api/support',
      payload: form.payload,
      headers: { ...form.headers, authorization: `Bearer ${customer.token}` },
    });
    expect(sent.statusCode, sent.body).toBe(200);
    const thread = (await call(ctx.app, `/api/ops/support/${customer.accountId}`, as(ann))).json<TOpsSupportThreadResponse>();
    const file = thread.messages[0]!.files[0]!;
    expect(file.url).toBe(`/api/ops/support/${customer.accountId}/file/${file.id}`);
    const seen = await call(ctx.app, file.url, as(ann, { ip: '198.51.100.7' }));
    expect({ status: seen.statusCode, type: seen.headers['content-type'] }).toEqual({ status: 200, type: 'image/png' });
    const views = await auditOf('support.file', `account:${customer.accountId}`);
    expect(views).toEqual([{ operator: expect.stringContaining(ann.email), outcome: 'viewed', request_id: expect.any(String), ip: '198.51.100.7' }]);
    // Another customer's conversation does not hold that file: 404 like a missing one, nothing audited.
    const other = await customerWrites('hi');
    expect((await call(ctx.app, `/api/ops/support/${other.accountId}/file/${file.id}`, as(ann))).statusCode).toBe(404);

    const reply = multipart([
      { name: 'text', value: 'Thank you' },
      { name: 'file0', filename: 'answer.png', content: await png(40, 40), type: 'image/png' },
    ]);
    const answered = await ctx.app.inject({
      method: 'POST',
      url: `/api/ops/support/${customer.accountId}/reply`,
      payload: reply.payload,
      headers: { ...reply.headers, ...asOperator(ann.token).headers },
    });
    expect(answered.statusCode, answered.body).toBe(200);
    const page = (await call(ctx.app, '/api/support', { token: customer.token })).json<{ messages: Array<{ files: Array<{ url: string }> }> }>();
    const theirs = page.messages.at(-1)!.files[0]!;
    expect((await call(ctx.app, theirs.url, { token: customer.token })).statusCode).toBe(200);
  });

  it('closes and reopens; without the permission 403 and a denied row; a customer finds nothing', async () => {
    const customer = await customerWrites('close me');
    expect((await call(ctx.app, `/api/ops/support/${customer.accountId}/close`, as(ann, { method: 'POST' }))).statusCode).toBe(200);
    expect(await itemOf(ann, customer)).toBeUndefined();
    const closed = (await call(ctx.app, '/api/ops/support?status=closed', as(ann))).json<{ conversations: TOpsSupportItem[] }>();
    expect(closed.conversations.find((row) => row.account_id === customer.accountId)).toMatchObject({ status: 'closed', claim: null });
    expect((await call(ctx.app, `/api/ops/support/${customer.accountId}/reopen`, as(bob, { method: 'POST' }))).statusCode).toBe(200);
    expect(await itemOf(ann, customer)).toMatchObject({ status: 'open' });
    expect((await auditOf('support.reopen', `account:${customer.accountId}`))[0]).toMatchObject({ operator: expect.stringContaining(bob.email) });

    const compliance = await operatorWith(['compliance']);
    const denied = await call(ctx.app, `/api/ops/support/${customer.accountId}`, as(compliance));
    expect({ status: denied.statusCode, code: denied.json().code }).toEqual({ status: 403, code: 'ops_forbidden' });
    const [row] = await ctx.db.query<{ outcome: string; reason_code: string }>(
      `SELECT outcome, reason_code FROM operator_audit WHERE operator LIKE $1 ORDER BY id DESC LIMIT 1`,
      [`%:${compliance.email}`],
    );
    expect(row).toEqual({ outcome: 'denied', reason_code: 'missing:support.reply' });
    const asCustomer = await call(ctx.app, `/api/ops/support/${customer.accountId}`, { token: customer.token });
    expect({ status: asCustomer.statusCode, code: asCustomer.json().code }).toEqual({ status: 404, code: 'route_not_found' });
    expect((await call(ctx.app, '/api/ops/support/12345678', as(ann))).statusCode).toBe(404);
  });

  it('saved replies come in both languages', async () => {
    const replies = (await call(ctx.app, '/api/ops/support/replies', as(ann))).json<{ replies: Array<{ locale: string }> }>().replies;
    expect(new Set(replies.map((reply) => reply.locale))).toEqual(new Set(['ru', 'en']));
  });

  it('reported private chats: listed with their messages, resolved once (audited)', async () => {
    const [a, b] = [await createFixtureUser(ctx.db), await createFixtureUser(ctx.db)];
    await call(ctx.app, `/api/chat/private/${b.accountId}`, { token: a.token, payload: { message: 'buy my coins' } });
    await call(ctx.app, `/api/chat/private/report/${a.accountId}`, { token: b.token, payload: { reason: 'spam' } });
    const reports = (await call(ctx.app, '/api/ops/chat-reports', as(ann))).json<{ reports: TOpsChatReport[] }>().reports;
    const report = reports.find((item) => item.reporter === b.accountId)!;
    expect(report).toMatchObject({ reported: a.accountId, reason: 'spam', messages: [{ from: a.accountId, text: 'buy my coins' }] });
    const resolve = (payload: object) => call(ctx.app, `/api/ops/chat-reports/${report.id}/resolve`, as(ann, { payload }));
    expect((await resolve({ outcome: 'bogus' })).statusCode).toBe(400);
    expect((await resolve({ outcome: 'violation', note: 'warned the sender' })).statusCode).toBe(200);
    expect((await resolve({ outcome: 'violation' })).statusCode).toBe(404);
    const [row] = await ctx.db.query<{ reason_code: string; reason_text: string }>(
      `SELECT reason_code, reason_text FROM operator_audit WHERE action = 'chat.report_resolve' AND subject = $1`,
      [`chat_report:${report.id}`],
    );
    expect(row).toEqual({ reason_code: 'violation', reason_text: 'warned the sender' });
  });

  it('queues: counts, oldest age and overdue against the targets; /metrics for the machine or an operator only', async () => {
    await customerWrites('waiting');
    await pass(20 * 60_000);
    const queues = (await call(ctx.app, '/api/ops/queues', as(ann))).json<{ queues: TOpsQueue[] }>().queues;
    expect(queues.map((queue) => queue.name)).toEqual([...OPS_QUEUES]);
    const support = queues.find((queue) => queue.name === 'support')!;
    expect(support.target_ms).toBe(15 * 60_000);
    expect(support.count).toBeGreaterThan(0);
    expect(support.overdue).toBeGreaterThan(0);
    expect(support.oldest_ms).toBeGreaterThanOrEqual(20 * 60_000 - 5000);
    expect(queues.find((queue) => queue.name === 'kyc')).toMatchObject({ target_ms: 24 * 60 * 60_000 });

    const local = await call(ctx.app, '/metrics', { ip: '127.0.0.1' });
    expect(local.statusCode).toBe(200);
    expect(local.headers['content-type']).toContain('text/plain');
    expect(local.body).toMatch(new RegExp(`obmen_queue_items\\{queue="support"\\} ${support.count}`));
    expect(local.body).toContain('obmen_queue_target_seconds{queue="kyc"} 86400');
    expect(local.body).toContain('obmen_queue_target_seconds{queue="withdrawals"} 14400');
    const customer = await createFixtureUser(ctx.db);
    for (const outside of [{ ip: '203.0.113.9' }, { ip: '203.0.113.9', token: customer.token }]) {
      const res = await call(ctx.app, '/metrics', outside);
      expect({ status: res.statusCode, code: res.json().code }).toEqual({ status: 404, code: 'route_not_found' });
    }
    expect((await call(ctx.app, '/metrics', as(ann, { ip: '203.0.113.9' }))).statusCode).toBe(200);
    expect(await verifyAuditChain(ctx.db)).toMatchObject({ intact: true });
  });
});
