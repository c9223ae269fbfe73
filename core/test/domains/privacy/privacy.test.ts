import { unzipSync, strFromU8 } from 'fflate';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { build, ENGINES } from '../../helpers.ts';
import { call, mailsTo } from '../../auth-helpers.ts';
import { createFixtureUser, fund, type TFixtureUser } from '../../fixtures.ts';
import { runPrivacyJobs } from '../../../src/domains/privacy/service.ts';
import { openDocumentCipher } from '../../../src/domains/verification/cipher.ts';

describe.each(ENGINES)('leaving with your data (%s)', (engine) => {
  let ctx: Awaited<ReturnType<typeof build>>;
  let at = new Date('2026-11-27T10:00:00Z');
  let ann: TFixtureUser;
  let bob: TFixtureUser;
  const cipher = openDocumentCipher({ DOCUMENT_KEY: Buffer.alloc(32, 7).toString('base64'), DOCUMENT_KEY_FILE: '', NODE_ENV: 'test' }, () => {});
  const jobs = () => runPrivacyJobs({ db: ctx.db, storage: ctx.app.storage, cipher }, at);

  beforeAll(async () => {
    ctx = await build(engine, {}, { now: () => at });
    ann = await createFixtureUser(ctx.db, { firstName: 'Anna' });
    bob = await createFixtureUser(ctx.db);
    await fund(ctx.db, ann.id, 'USDT', 5_000_000n);
    const sent = await call(ctx.app, '/api/transfer', {
      token: ann.token,
      payload: { account_id: String(bob.accountId), currency: 'USDT', amount: '2', comment: 'lunch, "cheap"' },
      headers: { 'idempotency-key': `privacy-${engine}` },
    });
    expect(sent.statusCode, sent.body).toBe(200);
  });
  afterAll(() => ctx.close());

  const state = async (user: TFixtureUser) => (await call(ctx.app, '/api/user/privacy', { token: user.token })).json();

  it('an export asked for is made by the job: a ZIP of JSON and CSV whose ledger matches the balances, for its owner only, for 24 hours', async () => {
    const asked = await call(ctx.app, '/api/user/privacy/export', { token: ann.token, payload: { with_files: false }, locale: 'en' });
    expect(asked.statusCode, asked.body).toBe(200);
    expect(asked.json().exports).toEqual([expect.objectContaining({ state: 'queued', with_files: false })]);
    // Asked again while one waits: still one.
    await call(ctx.app, '/api/user/privacy/export', { token: ann.token, payload: {} });
    expect((await state(ann)).exports).toHaveLength(1);

    expect(await jobs()).toMatchObject({ made: 1 });
    const [ready] = (await state(ann)).exports;
    expect(ready).toMatchObject({ state: 'ready', expires_at: new Date(at.getTime() + 24 * 3_600_000).toISOString() });
    expect((await call(ctx.app, `/api/user/privacy/export/${ready.id}`, { token: bob.token })).statusCode).toBe(404);
    const file = await call(ctx.app, `/api/user/privacy/export/${ready.id}`, { token: ann.token });
    expect(file.statusCode).toBe(200);
    expect(file.headers['content-type']).toBe('application/zip');
    expect(file.headers['content-disposition']).toMatch(/^attachment; filename="obmen-data-2026-11-27\.zip"$/);
    const zip = unzipSync(new Uint8Array(file.rawPayload));
    expect(Object.keys(zip).sort()).toEqual(
      ['chats.json', 'ledger.csv', 'payments.csv', 'profile.json', 'transfers.csv', 'verification.json', 'withdrawals.csv'].sort(),
    );
    expect(JSON.parse(strFromU8(zip['profile.json']!)).profile).toMatchObject({ account_id: ann.accountId, email: ann.email, first_name: 'Anna' });
    const ledger = strFromU8(zip['ledger.csv']!).trim().split('\n');
    expect(ledger[0]).toBe('at,transaction,kind,account,currency,amount,balance,memo');
    // The last USDT row's running balance is the wallet's balance now.
    const [balance] = await ctx.db.query<{ balance: string }>(
      `SELECT balance::text AS balance FROM ledger_accounts WHERE user_id = $1 AND kind = 'user' AND currency = 'USDT'`,
      [ann.id],
    );
    const lastUsdt = ledger.filter((line) => line.includes(',user,USDT,')).at(-1)!;
    expect(lastUsdt.split(',')[6]).toBe((Number(balance!.balance) / 1e6).toFixed(6));
    expect(strFromU8(zip['transfers.csv']!)).toContain('"lunch, ""cheap"""');

    at = new Date(at.getTime() + 24 * 3_600_000 + 1);
    expect(await jobs()).toMatchObject({ expired: 1 });
    expect((await call(ctx.app, `/api/user/privacy/export/${ready.id}`, { token: ann.token })).statusCode).toBe(404);
  });

  it('closing is refused while money remains, then ends every session and refuses sign-in; the data are erased after the legal period', async () => {
    const refused = await call(ctx.app, '/api/user/close', { token: ann.token, payload: { email: ann.email }, locale: 'en' });
    expect(refused.statusCode).toBe(409);
    expect(refused.json().message).toContain('Your wallets still hold money');
    expect((await state(ann)).closable).toEqual({ ok: false, blockers: ['privacy.blocker_balance'] });

    // Bob's 2 USDT go back; then he may close.
    const back = await call(ctx.app, '/api/transfer', {
      token: bob.token,
      payload: { account_id: String(ann.accountId), currency: 'USDT', amount: '2' },
      headers: { 'idempotency-key': `privacy-back-${engine}` },
    });
    expect(back.statusCode, back.body).toBe(200);
    expect((await state(bob)).closable).toEqual({ ok: true, blockers: [] });
    const wrong = await call(ctx.app, '/api/user/close', { token: bob.token, payload: { email: 'someone@else.test' }, locale: 'en' });
    expect(wrong.json()).toMatchObject({ code: 'validation', fields: { email: "This is not your account's e-mail" } });
    const closed = await call(ctx.app, '/api/user/close', { token: bob.token, payload: { email: bob.email.toUpperCase() }, locale: 'en' });
    expect(closed.statusCode, closed.body).toBe(200);
    expect((await call(ctx.app, '/api/auth/check', { token: bob.token })).json().user.is_authenticated).toBe(false);
    expect((await mailsTo(ctx.db, bob.email)).map((mail) => mail.kind)).toContain('account_closed');

    at = new Date(at.getTime() + 6 * 365 * 24 * 3_600_000);
    expect(await jobs()).toMatchObject({ erased: 1 });
    const [erased] = await ctx.db.query<{ email: string; erased: boolean }>('SELECT email, erased_at IS NOT NULL AS erased FROM users WHERE id = $1', [bob.id]);
    expect(erased).toEqual({ email: `erased-${bob.id}@erased.invalid`, erased: true });
    // The ledger keeps its rows.
    const [rows] = await ctx.db.query<{ n: number }>('SELECT count(*)::int AS n FROM transfers WHERE sender_id = $1 OR recipient_id = $1', [bob.id]);
    expect(rows!.n).toBe(2);
  });
});
