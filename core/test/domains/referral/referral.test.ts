import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REFERRAL_HEADER } from '@obmen/shared';
import { ENGINES, build } from '../../helpers.ts';
import { call, freshEmail, lastMailTo, linkToken, mailsTo, sameBrowser, sessionToken } from '../../auth-helpers.ts';
import { createFixtureUser, fund, type TFixtureUser } from '../../fixtures.ts';
import { checkLedger } from '../../../src/domains/ledger/invariants.ts';
import { setRate } from '../../../src/domains/rates/service.ts';
import { bindReferee, parseHold, setReferralTerms, settleReferralBonuses } from '../../../src/domains/referral/service.ts';
import { unsubscribeToken } from '../../../src/mail/preferences.ts';
import { REFERRAL_COMMANDS } from '../../../src/cli/referral.ts';

const PUBLIC_URL = 'https://obmen.test';

describe.each(ENGINES)('referral programme (%s)', (engine) => {
  let ctx: Awaited<ReturnType<typeof build>>;
  let anna: TFixtureUser;
  let other: TFixtureUser;
  let seq = 0;
  const deps = () => ({ db: ctx.db, publicUrl: PUBLIC_URL });

  beforeAll(async () => {
    ctx = await build(engine, { PUBLIC_URL });
    anna = await createFixtureUser(ctx.db, { firstName: 'Anna', lastName: 'Smith' });
    other = await createFixtureUser(ctx.db);
    await setRate(ctx.db, { src: 'USDT', dst: 'BTC', rate: '0.00001', spread: '0', fee_percent: '0.01', fee_fixed: '0', min: '1', max: '10000' }, new Date());
    await setRate(ctx.db, { src: 'BTC', dst: 'USDT', rate: '100000', spread: '0', fee_percent: '0.01', fee_fixed: '0', min: '0.00001', max: '1' }, new Date());
    await setReferralTerms(ctx.db, { share: '0.2', currency: 'USDT', hold: '14d', min: '0' });
  });
  afterAll(() => ctx.close());

  const inviteOf = async (user: TFixtureUser) => (await call(ctx.app, '/api/referral/invite', { token: user.token })).json();
  /**
   * A new account of `email`, signed up through the mailed link by a browser whose BFF remembered
   * `ref`, asking for the link from `ips.ask` and following it from `ips.follow` (else fresh addresses).
   */
  const signUpWith = async (email: string, ref?: string, ips: { ask?: string; follow?: string } = {}) => {
    const headers: Record<string, string> = ref ? { [REFERRAL_HEADER]: ref } : {};
    const res = await call(ctx.app, '/api/auth/register', {
      payload: { email, password: 'correct horse battery 42' },
      headers,
      ...(ips.ask ? { ip: ips.ask } : {}),
    });
    expect(res.statusCode).toBe(200);
    const confirm = await call(ctx.app, `/api/auth/confirm/${linkToken(await lastMailTo(ctx.db, email))}`, {
      method: 'POST',
      headers: sameBrowser(res),
      ...(ips.follow ? { ip: ips.follow } : {}),
    });
    const token = sessionToken(confirm);
    const [row] = await ctx.db.query<{ id: string; account_id: number }>('SELECT id::text, account_id FROM users WHERE email = $1', [email]);
    return { id: row!.id, accountId: row!.account_id, email, token } satisfies TFixtureUser;
  };
  const referrerOf = async (user: TFixtureUser) =>
    (await ctx.db.query<{ referrer_id: string }>('SELECT referrer_id::text FROM referrals WHERE referee_id = $1', [user.id]))[0]?.referrer_id ?? null;
  const exchange = async (user: TFixtureUser, src: string, dst: string, amount: string) => {
    const form = { 'content-type': 'application/x-www-form-urlencoded' };
    const check = await call(ctx.app, '/api/exchange/check', {
      token: user.token,
      payload: new URLSearchParams({ src, dst, amount }).toString(),
      headers: form,
    });
    const quote = check.json().quote;
    const res = await call(ctx.app, `/api/exchange/${src}/${dst}`, {
      token: user.token,
      payload: new URLSearchParams({ quote: quote.token }).toString(),
      headers: { ...form, 'idempotency-key': `ref-${engine}-${++seq}` },
    });
    expect(res.statusCode, res.body).toBe(200);
    return res.json().exchange as { id: string; fee: string };
  };
  const feeMinor = async (exchangeId: string) =>
    BigInt((await ctx.db.query<{ fee: string }>('SELECT fee::text FROM exchanges WHERE id = $1', [exchangeId]))[0]!.fee);
  const usdt = async (user: TFixtureUser) =>
    BigInt(
      (
        await ctx.db.query<{ b: string }>(`SELECT coalesce(sum(balance), 0)::text AS b FROM ledger_accounts WHERE user_id = $1 AND currency = 'USDT'`, [
          user.id,
        ])
      )[0]!.b,
    );

  it('every call needs a signed-in user', async () => {
    for (const url of ['/api/referral/invite', '/api/referral/info', '/api/referral/list', '/api/referral/recruit/1', '/api/referral/bonus/history']) {
      expect((await call(ctx.app, url)).statusCode, url).toBe(401);
    }
    expect((await call(ctx.app, '/api/referral/invite', { payload: { label: 'x' } })).statusCode).toBe(401);
    expect((await call(ctx.app, '/api/referral/mailing', { payload: { addresses: 'a@b.cd', locale: 'en' } })).statusCode).toBe(401);
  });

  it('gives each user one main code and link, the same every time', async () => {
    const first = await inviteOf(anna);
    expect(first.code).toMatch(/^[A-Z2-9]{8}$/);
    expect(first.link).toBe(`${PUBLIC_URL}/?ref=${first.code}`);
    expect(first.codes).toEqual([{ code: first.code, label: null, link: first.link, created_at: expect.any(String), referees: 0 }]);
    expect((await inviteOf(anna)).code).toBe(first.code);
    expect((await inviteOf(other)).code).not.toBe(first.code);
  });

  it('adds up to 5 labelled codes and retires them; refuses a sixth, the main code, and another user code', async () => {
    const user = await createFixtureUser(ctx.db);
    const labels = ['Telegram', 'YouTube', 'Blog', 'Forum', 'Friends'];
    for (const label of labels) expect((await call(ctx.app, '/api/referral/invite', { token: user.token, payload: { label } })).statusCode).toBe(200);
    const full = await inviteOf(user);
    expect(full.codes.map((code: { label: string | null }) => code.label)).toEqual([null, ...labels]);
    const sixth = await call(ctx.app, '/api/referral/invite', { token: user.token, payload: { label: 'Sixth' }, locale: 'en' });
    expect(sixth.statusCode).toBe(409);
    expect(sixth.json()).toMatchObject({ code: 'invite_codes_limit', fields: { label: expect.any(String) } });
    const main = await call(ctx.app, '/api/referral/invite', { token: user.token, payload: { retire: full.code } });
    expect(main.json().code).toBe('invite_code_default');
    const annaCode = (await inviteOf(anna)).code;
    const foreign = await call(ctx.app, '/api/referral/invite', { token: user.token, payload: { retire: annaCode } });
    const unknown = await call(ctx.app, '/api/referral/invite', { token: user.token, payload: { retire: 'ZZZZZZZZ' } });
    expect(foreign.statusCode).toBe(404);
    expect(foreign.json()).toEqual(unknown.json());
    expect(foreign.json().code).toBe('invite_code_not_found');
    const telegram = full.codes[1].code as string;
    const retired = await call(ctx.app, '/api/referral/invite', { token: user.token, payload: { retire: telegram.toLowerCase() } });
    expect(retired.statusCode).toBe(200);
    expect(retired.json().codes.map((code: { code: string }) => code.code)).not.toContain(telegram);
    expect((await call(ctx.app, '/api/referral/invite', { token: user.token, payload: { label: 'Sixth' } })).statusCode).toBe(200);
    for (const bad of [{}, { label: 'x', retire: telegram }, { label: '' }, { retire: 'bad code' }, { label: 'a\u202eb' }]) {
      expect((await call(ctx.app, '/api/referral/invite', { token: user.token, payload: bad })).statusCode, JSON.stringify(bad)).toBe(400);
    }
  });

  it('binds a new account to the code its browser brought, once; unknown, retired and own codes bind nothing and sign-up goes on', async () => {
    const { code } = await inviteOf(anna);
    const bob = await signUpWith(freshEmail('bob'), code.toLowerCase());
    expect(await referrerOf(bob)).toBe(anna.id);
    // A later code never re-binds.
    expect(await bindReferee(ctx.db, bob.id, (await inviteOf(other)).code)).toBe(false);
    expect(await referrerOf(bob)).toBe(anna.id);
    // Unknown and retired codes: the account is made, without a referrer, and nothing is said.
    const unknown = await signUpWith(freshEmail('unknown'), 'NOSUCH99');
    expect(await referrerOf(unknown)).toBeNull();
    const label = (await call(ctx.app, '/api/referral/invite', { token: other.token, payload: { label: 'Old' } })).json();
    const oldCode = label.codes.find((c: { label: string | null }) => c.label === 'Old').code;
    await call(ctx.app, '/api/referral/invite', { token: other.token, payload: { retire: oldCode } });
    const late = await signUpWith(freshEmail('late'), oldCode);
    expect(await referrerOf(late)).toBeNull();
    // Nobody refers themselves.
    const self = await createFixtureUser(ctx.db);
    expect(await bindReferee(ctx.db, self.id, (await inviteOf(self)).code)).toBe(false);
    expect(await referrerOf(self)).toBeNull();
  });

  it('a sign-up from an address the referrer used recently binds nobody, says nothing and is recorded; older addresses and a window of 0 bind', async () => {
    const dana = await createFixtureUser(ctx.db);
    const { code } = await inviteOf(dana);
    // Dana's session was seen from 198.51.100.7, and she signed in from 198.51.100.8 (a failed try from 198.51.100.9).
    await ctx.db.query(`UPDATE sessions SET ip = '198.51.100.7' WHERE user_id = $1`, [dana.id]);
    await ctx.db.query(
      `INSERT INTO sign_ins (user_id, ip, method, success, failure) VALUES ($1, '198.51.100.8', 'password', true, NULL), ($1, '198.51.100.9', 'password', false, 'password')`,
      [dana.id],
    );
    const refusals = async () =>
      ctx.db.query<{ referee_id: string; reason: string; ip: string }>(
        `SELECT referee_id::text, reason, ip FROM referral_refusals WHERE referrer_id = $1 ORDER BY id`,
        [dana.id],
      );
    // Asked for and followed from her session's address; asked from elsewhere and followed from her sign-in's.
    const fromSession = await signUpWith(freshEmail('same-ip'), code, { ask: '198.51.100.7', follow: '198.51.100.7' });
    const fromSignIn = await signUpWith(freshEmail('same-ip'), code, { ask: '203.0.113.50', follow: '198.51.100.8' });
    // Only asked from her address (the link followed elsewhere).
    const asked = await signUpWith(freshEmail('same-ip'), code, { ask: '198.51.100.7', follow: '203.0.113.51' });
    for (const user of [fromSession, fromSignIn, asked]) expect(await referrerOf(user)).toBeNull();
    expect(await refusals()).toEqual([
      { referee_id: fromSession.id, reason: 'same_ip', ip: '198.51.100.7' },
      { referee_id: fromSignIn.id, reason: 'same_ip', ip: '198.51.100.8' },
      { referee_id: asked.id, reason: 'same_ip', ip: '198.51.100.7' },
    ]);
    // A failed sign-in's address is not hers; nor one she last used before the window (30 days).
    expect(await referrerOf(await signUpWith(freshEmail('other-ip'), code, { ask: '198.51.100.9', follow: '198.51.100.9' }))).toBe(dana.id);
    await ctx.db.query(`UPDATE sessions SET last_seen_at = now() - interval '31 days' WHERE user_id = $1`, [dana.id]);
    expect(await referrerOf(await signUpWith(freshEmail('old-ip'), code, { ask: '198.51.100.7', follow: '198.51.100.7' }))).toBe(dana.id);
    // The window is the operators' (0: off); users do not see it.
    expect(await setReferralTerms(ctx.db, { same_ip_days: '0' })).toMatchObject({ same_ip_days: 0 });
    expect(await referrerOf(await signUpWith(freshEmail('no-window'), code, { ask: '198.51.100.8', follow: '198.51.100.8' }))).toBe(dana.id);
    expect(await setReferralTerms(ctx.db, { same_ip_days: '30' })).toMatchObject({ same_ip_days: 30 });
    await expect(setReferralTerms(ctx.db, { same_ip_days: 'soon' })).rejects.toMatchObject({ code: 'not_a_decimal' });
    expect((await call(ctx.app, '/api/referral/info', { token: dana.token })).json().terms).not.toHaveProperty('same_ip_days');
    expect(await refusals()).toHaveLength(3);
    const listed = (await REFERRAL_COMMANDS['referral:refusals']!(ctx.db, [])) as { refusals: Array<{ referee_id: string; reason: string }> };
    expect(listed.refusals.slice(0, 3).map((row) => [row.referee_id, row.reason])).toEqual([
      [asked.id, 'same_ip'],
      [fromSignIn.id, 'same_ip'],
      [fromSession.id, 'same_ip'],
    ]);
  });

  it('answers the terms and zero totals; operators set the terms (share, currency, hold, minimum)', async () => {
    const info = (await call(ctx.app, '/api/referral/info', { token: other.token })).json();
    expect(info).toEqual({
      status: 'ok',
      terms: { share: '0.2', currency: 'USDT', hold_seconds: 14 * 86400, min_payout: '0.000000', enabled: true },
      totals: { currency: 'USDT', pending: '0.000000', available: '0.000000', paid: '0.000000' },
    });
    expect(parseHold('36h')).toBe(36 * 3600);
    expect(parseHold('90')).toBe(90);
    expect(() => parseHold('soon')).toThrow();
    await expect(setReferralTerms(ctx.db, { share: '1.5' })).rejects.toMatchObject({ code: 'fraction_out_of_range' });
    await expect(setReferralTerms(ctx.db, { currency: 'XXX' })).rejects.toMatchObject({ code: 'unknown_currency' });
  });

  it('accrues the share of each fee a referee pays in the fee transaction; the referrer sees pending totals, the list, the recruit and the day-by-day history', async () => {
    const { code } = await inviteOf(anna);
    const carol = await signUpWith(freshEmail('carol'), code);
    await fund(ctx.db, carol.id, 'USDT', 1_000_000_000n);
    await fund(ctx.db, carol.id, 'BTC', 10_000_000n);
    const first = await exchange(carol, 'USDT', 'BTC', '100');
    const second = await exchange(carol, 'USDT', 'BTC', '50');
    const inBtc = await exchange(carol, 'BTC', 'USDT', '0.001');
    const accruals = await ctx.db.query<{ source_id: string; fee_currency: string; fee: string; currency: string; amount: string; transaction_id: string }>(
      `SELECT source_id::text, fee_currency, fee::text, currency, amount::text, transaction_id::text FROM referral_accruals WHERE referee_id = $1 ORDER BY id`,
      [carol.id],
    );
    const usdtShare = (fee: bigint) => (fee * 2n) / 10n;
    expect(accruals.map((a) => [a.source_id, a.fee_currency, a.currency, a.amount])).toEqual([
      [first.id, 'USDT', 'USDT', usdtShare(await feeMinor(first.id)).toString()],
      [second.id, 'USDT', 'USDT', usdtShare(await feeMinor(second.id)).toString()],
      // 20% of a BTC fee (8 decimals) at 100000 USDT per BTC, into USDT (6 decimals), rounded down.
      [inBtc.id, 'BTC', 'USDT', ((usdtShare(await feeMinor(inBtc.id)) * 100000n) / 100n).toString()],
    ]);
    // The accrual's ledger transaction: fees → referral liability (through liquidity for another currency).
    const postings = await ctx.db.query<{ kind: string; currency: string; amount: string }>(
      `SELECT a.kind, p.currency, p.amount::text FROM postings p JOIN ledger_accounts a ON a.id = p.account_id WHERE p.transaction_id = $1 ORDER BY p.id`,
      [accruals[2]!.transaction_id],
    );
    expect(postings.map((p) => [p.kind, p.currency])).toEqual([
      ['fees', 'BTC'],
      ['liquidity', 'BTC'],
      ['liquidity', 'USDT'],
      ['referral', 'USDT'],
    ]);
    const total = accruals.reduce((sum, a) => sum + BigInt(a.amount), 0n);
    const info = (await call(ctx.app, '/api/referral/info', { token: anna.token })).json();
    expect(info.totals.available).toBe('0.000000');
    expect(BigInt(Math.round(Number(info.totals.pending) * 1e6))).toBe(total);

    const list = (await call(ctx.app, '/api/referral/list', { token: anna.token })).json();
    const row = list.items.find((item: { id: string }) => item.id === carol.id);
    expect(row).toMatchObject({ email: `c***@example.com`, code, code_label: null, active: true, earned: [{ currency: 'USDT', amount: expect.any(String) }] });
    expect(list).toMatchObject({ status: 'ok', page: 1, per_page: 20 });
    expect(JSON.stringify(list)).not.toContain(carol.email);

    const own = await call(ctx.app, `/api/referral/recruit/${carol.id}`, { token: anna.token });
    expect(own.json().recruit).toMatchObject({ id: carol.id, months: [{ month: expect.stringMatching(/^\d{4}-\d{2}$/), currency: 'USDT' }] });
    const foreign = await call(ctx.app, `/api/referral/recruit/${carol.id}`, { token: other.token, locale: 'en' });
    const missing = await call(ctx.app, '/api/referral/recruit/999999999', { token: other.token, locale: 'en' });
    const malformed = await call(ctx.app, '/api/referral/recruit/abc', { token: other.token, locale: 'en' });
    expect(foreign.statusCode).toBe(404);
    expect(foreign.json()).toEqual(missing.json());
    expect(malformed.json()).toEqual(missing.json());
    expect(missing.json().code).toBe('recruit_not_found');

    // Three exchanges of one day are one line: no trade can be read from it.
    const history = (await call(ctx.app, '/api/referral/bonus/history', { token: anna.token })).json();
    const lines = history.items.filter((item: { referee_id: string }) => item.referee_id === carol.id);
    expect(lines).toEqual([
      {
        date: expect.stringMatching(/^\d{4}-\d{2}-\d{2}$/),
        referee_id: carol.id,
        referee: 'c***@example.com',
        currency: 'USDT',
        amount: expect.any(String),
        paid: '0.000000',
      },
    ]);
    expect(Object.keys(lines[0]).sort()).toEqual(['amount', 'currency', 'date', 'paid', 'referee', 'referee_id']);
    const csv = await call(ctx.app, '/api/referral/bonus/history?format=csv', { token: anna.token });
    expect(csv.headers['content-type']).toContain('text/csv');
    expect(csv.body.split('\r\n')[0]).toBe('date,referee,currency,amount,paid');
    expect(csv.body).toContain('c***@example.com,USDT');
    expect((await call(ctx.app, '/api/referral/bonus/history?per_page=1000', { token: anna.token })).statusCode).toBe(400);
    expect((await checkLedger(ctx.db)).violations).toEqual([]);
  });

  it('a paused programme or a referee-less payer accrues nothing', async () => {
    const before = (await ctx.db.query<{ n: number }>('SELECT count(*)::int AS n FROM referral_accruals'))[0]!.n;
    await fund(ctx.db, other.id, 'USDT', 100_000_000n);
    await exchange(other, 'USDT', 'BTC', '10');
    const dave = await signUpWith(freshEmail('dave'), (await inviteOf(anna)).code);
    await fund(ctx.db, dave.id, 'USDT', 100_000_000n);
    await setReferralTerms(ctx.db, { enabled: 'false' });
    await exchange(dave, 'USDT', 'BTC', '10');
    await setReferralTerms(ctx.db, { enabled: 'true' });
    expect((await ctx.db.query<{ n: number }>('SELECT count(*)::int AS n FROM referral_accruals'))[0]!.n).toBe(before);
  });

  it('settles after the hold: one ledger transaction per referrer and currency, marked in the same transaction, once; not below the minimum', async () => {
    const now = new Date();
    expect(await settleReferralBonuses(deps(), now)).toEqual([]);
    const before = await usdt(anna);
    const due = (await ctx.db.query<{ s: string }>(`SELECT coalesce(sum(amount), 0)::text AS s FROM referral_accruals WHERE referrer_id = $1`, [anna.id]))[0]!
      .s;
    const later = new Date(now.getTime() + 14 * 86400_000 + 1000);
    // Below the minimum payout: nothing moves.
    await setReferralTerms(ctx.db, { min: '1000' });
    expect(await settleReferralBonuses(deps(), later)).toEqual([]);
    await setReferralTerms(ctx.db, { min: '0' });
    const settled = await settleReferralBonuses(deps(), later);
    expect(settled).toEqual([{ referrer_id: anna.id, currency: 'USDT', id: expect.any(String), amount: due, clawed: '0', accruals: expect.any(Number) }]);
    expect(await usdt(anna)).toBe(before + BigInt(due));
    const [{ unsettled }] = (await ctx.db.query<{ unsettled: number }>(
      'SELECT count(*)::int AS unsettled FROM referral_accruals WHERE referrer_id = $1 AND settlement_id IS NULL',
      [anna.id],
    )) as [{ unsettled: number }];
    expect(unsettled).toBe(0);
    expect(await settleReferralBonuses(deps(), later)).toEqual([]);
    const [tx] = await ctx.db.query<{ kind: string; postings: number }>(
      'SELECT t.kind, (SELECT count(*) FROM postings p WHERE p.transaction_id = t.id)::int AS postings FROM ledger_transactions t JOIN referral_settlements s ON s.transaction_id = t.id WHERE s.id = $1',
      [settled[0]!.id],
    );
    expect(tx).toEqual({ kind: 'referral', postings: 2 });
    expect((await lastMailTo(ctx.db, anna.email)).kind).toBe('referral_paid');
    const history = (await call(ctx.app, '/api/referral/bonus/history', { token: anna.token })).json();
    expect(history.items.every((item: { amount: string; paid: string }) => item.amount === item.paid)).toBe(true);
    expect((await checkLedger(ctx.db)).violations).toEqual([]);
  });

  it('the invariants checker finds a referral transaction without its accrual, and a liability out of step', async () => {
    const rolledBack = new Error('rolled back');
    const rules = await ctx.db
      .transaction(async (tx) => {
        await tx.query(
          `SELECT ledger_post('referral', ARRAY[ledger_house_account('fees', 'USDT', 1), ledger_system_account('referral', 'USDT', 'liability')], ARRAY[-5, 5]::numeric[], 'forged', 'test')`,
        );
        const found = (await checkLedger(tx)).violations.map((v) => v.rule);
        throw Object.assign(rolledBack, { found });
      })
      .catch((err: Error & { found?: string[] }) => err.found ?? []);
    expect(rules).toContain('each referral transaction is one accrual or one settlement');
    expect(rules).toContain('the referral liability holds exactly the unsettled accruals less the clawbacks owed');
    expect((await checkLedger(ctx.db)).violations).toEqual([]);
  });

  it('invites up to 10 addresses by mail in the chosen language, one invitation per address per 30 days, none to accounts or unsubscribed addresses, same answer', async () => {
    const fresh = freshEmail('friend');
    const unsubscribed = freshEmail('gone');
    await call(ctx.app, `/api/mail/unsubscribe?t=${await unsubscribeToken(ctx.db, unsubscribed, 'referral')}`, { method: 'POST' });
    const res = await call(ctx.app, '/api/referral/mailing', {
      token: anna.token,
      locale: 'en',
      payload: { addresses: `${fresh}, ${other.email}\n${unsubscribed}`, locale: 'ru' },
    });
    expect(res.json()).toEqual({ status: 'ok', accepted: 3, message: 'Done: 3 addresses accepted.' });
    const [mail] = await mailsTo(ctx.db, fresh);
    expect(mail).toMatchObject({ kind: 'referral_invite', locale: 'ru' });
    expect(mail!.subject).toBe('Anna S. приглашает вас в Obmen');
    expect(mail!.text_body).toContain(`${PUBLIC_URL}/?ref=${(await inviteOf(anna)).code}`);
    expect(mail!.text_body).toContain(`${PUBLIC_URL}/unsubscribe?t=`);
    expect(await mailsTo(ctx.db, unsubscribed)).toEqual([]);
    expect((await mailsTo(ctx.db, other.email)).filter((m) => m.kind === 'referral_invite')).toEqual([]);
    // Someone else inviting the same address within 30 days: same answer, no second mail.
    const again = await call(ctx.app, '/api/referral/mailing', {
      token: other.token,
      locale: 'en',
      payload: { addresses: [fresh.toUpperCase()], locale: 'en' },
    });
    expect(again.json()).toMatchObject({ status: 'ok', accepted: 1 });
    expect(await mailsTo(ctx.db, fresh)).toHaveLength(1);
  });

  it('refuses 11 addresses and malformed ones, sending nothing; a flood hits the daily limit', async () => {
    const user = await createFixtureUser(ctx.db);
    const eleven = Array.from({ length: 11 }, () => freshEmail('many'));
    const tooMany = await call(ctx.app, '/api/referral/mailing', { token: user.token, locale: 'en', payload: { addresses: eleven, locale: 'en' } });
    expect(tooMany.statusCode).toBe(400);
    expect(tooMany.json().fields).toEqual({ addresses: 'At most 10 addresses at once' });
    const bad = await call(ctx.app, '/api/referral/mailing', {
      token: user.token,
      locale: 'en',
      payload: { addresses: 'friend@example.com, not-an-address', locale: 'en' },
    });
    expect(bad.statusCode).toBe(400);
    expect(await mailsTo(ctx.db, 'friend@example.com')).toEqual([]);
    expect((await call(ctx.app, '/api/referral/mailing', { token: user.token, payload: { addresses: 'a@example.com', locale: 'de' } })).statusCode).toBe(400);
    for (let round = 0; round < 3; round++) {
      const ten = Array.from({ length: 10 }, () => freshEmail('flood'));
      expect((await call(ctx.app, '/api/referral/mailing', { token: user.token, payload: { addresses: ten, locale: 'en' } })).statusCode).toBe(200);
    }
    const flood = await call(ctx.app, '/api/referral/mailing', { token: user.token, payload: { addresses: [freshEmail('flood')], locale: 'en' } });
    expect(flood.statusCode).toBe(429);
  });
});
