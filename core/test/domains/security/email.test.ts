import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ENGINES, build } from '../../helpers.ts';
import { call, freshEmail, lastMailTo, mailsTo } from '../../auth-helpers.ts';
import { createFixtureUser } from '../../fixtures.ts';
import { withdrawalsBlockedUntil } from '../../../src/domains/security/second-factor.ts';

/** The token of an e-mail change link in a mail: ?confirm= or ?report=. */
function changeToken(text: string, kind: 'confirm' | 'report'): string {
  const match = new RegExp(`/settings/bind-email\\?${kind}=([A-Za-z0-9_-]{43})`).exec(text);
  if (!match) throw new Error(`no ${kind} link in: ${text}`);
  return match[1]!;
}

describe.each(ENGINES)('/settings/bind-email calls on %s', (engine) => {
  let ctx: Awaited<ReturnType<typeof build>>;
  beforeAll(async () => {
    ctx = await build(engine);
  });
  afterAll(() => ctx.close());

  const emailOf = async (id: string) => (await ctx.db.query<{ email: string }>('SELECT email FROM users WHERE id = $1', [id]))[0]!.email;

  it('needs a session; the same address and a bad one are field errors', async () => {
    expect((await call(ctx.app, '/api/user/email')).statusCode).toBe(401);
    expect((await call(ctx.app, '/api/user/email', { payload: { email: 'a@example.com' } })).statusCode).toBe(401);
    const user = await createFixtureUser(ctx.db);
    const same = await call(ctx.app, '/api/user/email', { token: user.token, payload: { email: user.email.toUpperCase() }, locale: 'en' });
    expect(same.statusCode).toBe(400);
    expect(same.json().fields).toEqual({ email: "This is already your account's address." });
    const bad = await call(ctx.app, '/api/user/email', { token: user.token, payload: { email: 'nope' }, locale: 'en' });
    expect(bad.statusCode).toBe(400);
    expect(Object.keys(bad.json().fields)).toEqual(['email']);
    expect(await mailsTo(ctx.db, user.email)).toHaveLength(0);
  });

  it('nothing changes until the link to the new address is used; then it changes once, and withdrawals wait', async () => {
    const user = await createFixtureUser(ctx.db);
    const next = freshEmail('new');
    const res = await call(ctx.app, '/api/user/email', { token: user.token, payload: { email: next }, locale: 'en' });
    expect(res.statusCode).toBe(200);
    expect(res.json().message).toContain(`We sent a link to ${next}`);
    expect(await emailOf(user.id)).toBe(user.email);
    const state = (await call(ctx.app, '/api/user/email', { token: user.token })).json();
    expect(state).toMatchObject({ status: 'ok', email: user.email, email_confirmed: true, pending: { email: next } });

    const notice = await lastMailTo(ctx.db, user.email);
    expect(notice.kind).toBe('email_change_notice');
    expect(notice.text_body).toContain(next);
    const confirmMail = await lastMailTo(ctx.db, next);
    expect(confirmMail.kind).toBe('email_change_confirm');
    const token = changeToken(confirmMail.text_body, 'confirm');

    const ok = await call(ctx.app, `/api/user/email/confirm/${token}`, { method: 'POST', locale: 'en' });
    expect(ok.statusCode).toBe(200);
    expect(ok.json().message).toBe(`Done: the account's address is now ${next}. Withdrawals are paused for 24 hours.`);
    expect(await emailOf(user.id)).toBe(next);
    expect(await withdrawalsBlockedUntil(ctx.db, user.id)).not.toBeNull();
    expect((await call(ctx.app, '/api/user/email', { token: user.token })).json()).toMatchObject({ email: next, pending: null });

    const again = await call(ctx.app, `/api/user/email/confirm/${token}`, { method: 'POST', locale: 'en' });
    expect(again.statusCode).toBe(400);
    expect(again.json().code).toBe('invalid_token');
    expect((await call(ctx.app, '/api/user/email/confirm/short', { method: 'POST' })).json().code).toBe('invalid_token');
  });

  it('an expired link and a link replaced by a newer request are refused', async () => {
    const user = await createFixtureUser(ctx.db);
    const first = freshEmail('first');
    await call(ctx.app, '/api/user/email', { token: user.token, payload: { email: first } });
    const firstToken = changeToken((await lastMailTo(ctx.db, first)).text_body, 'confirm');
    const second = freshEmail('second');
    await call(ctx.app, '/api/user/email', { token: user.token, payload: { email: second } });
    expect((await call(ctx.app, `/api/user/email/confirm/${firstToken}`, { method: 'POST' })).json().code).toBe('invalid_token');
    const secondToken = changeToken((await lastMailTo(ctx.db, second)).text_body, 'confirm');
    await ctx.db.query(`UPDATE email_changes SET expires_at = now() - interval '1 second' WHERE user_id = $1`, [user.id]);
    expect((await call(ctx.app, `/api/user/email/confirm/${secondToken}`, { method: 'POST' })).json().code).toBe('invalid_token');
    expect((await call(ctx.app, '/api/user/email', { token: user.token })).json().pending).toBeNull();
    expect(await emailOf(user.id)).toBe(user.email);
  });

  it('an address of another account: the same answer and pending state, its owner is told, and no link exists', async () => {
    const owner = await createFixtureUser(ctx.db);
    const user = await createFixtureUser(ctx.db);
    const free = freshEmail('free');
    const answerFree = await call(ctx.app, '/api/user/email', { token: user.token, payload: { email: free }, locale: 'en' });
    const answerTaken = await call(ctx.app, '/api/user/email', { token: user.token, payload: { email: owner.email }, locale: 'en' });
    expect(answerTaken.statusCode).toBe(answerFree.statusCode);
    expect(answerTaken.json().message).toBe(answerFree.json().message.replace(free, owner.email));
    expect((await call(ctx.app, '/api/user/email', { token: user.token })).json().pending.email).toBe(owner.email);
    const told = await lastMailTo(ctx.db, owner.email);
    expect(told.kind).toBe('email_change_taken');
    expect(told.text_body).not.toMatch(/confirm=/);
    expect(await emailOf(user.id)).toBe(user.email);
  });

  it('"it was not me" before the link: the change stops, every session ends, the old address gets a reset link', async () => {
    const user = await createFixtureUser(ctx.db);
    const next = freshEmail('intruder');
    await call(ctx.app, '/api/user/email', { token: user.token, payload: { email: next } });
    const report = changeToken((await lastMailTo(ctx.db, user.email)).text_body, 'report');
    const confirm = changeToken((await lastMailTo(ctx.db, next)).text_body, 'confirm');
    const res = await call(ctx.app, `/api/user/email/report/${report}`, { method: 'POST', locale: 'en' });
    expect(res.statusCode).toBe(200);
    expect(res.json().message).toContain('The address change is stopped');
    expect((await call(ctx.app, '/api/auth/check', { token: user.token })).json().user.is_authenticated).toBe(false);
    expect((await call(ctx.app, `/api/user/email/confirm/${confirm}`, { method: 'POST' })).json().code).toBe('invalid_token');
    expect(await emailOf(user.id)).toBe(user.email);
    expect((await lastMailTo(ctx.db, user.email)).kind).toBe('email_change_reported');
    expect((await call(ctx.app, `/api/user/email/report/${report}`, { method: 'POST' })).json().code).toBe('invalid_token');
  });

  it('"it was not me" after the change: the old address comes back', async () => {
    const user = await createFixtureUser(ctx.db);
    const next = freshEmail('taken-over');
    await call(ctx.app, '/api/user/email', { token: user.token, payload: { email: next } });
    const report = changeToken((await lastMailTo(ctx.db, user.email)).text_body, 'report');
    await call(ctx.app, `/api/user/email/confirm/${changeToken((await lastMailTo(ctx.db, next)).text_body, 'confirm')}`, { method: 'POST' });
    expect(await emailOf(user.id)).toBe(next);
    expect((await call(ctx.app, `/api/user/email/report/${report}`, { method: 'POST' })).statusCode).toBe(200);
    expect(await emailOf(user.id)).toBe(user.email);
    expect(await withdrawalsBlockedUntil(ctx.db, user.id)).not.toBeNull();
  });
});
