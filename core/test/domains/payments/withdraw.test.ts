import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REPLAYED_HEADER, WEBHOOK_SIGNATURE_HEADER, type TWithdrawal } from '@obmen/shared';
import { build, ENGINES, testCipher } from '../../helpers.ts';
import { call } from '../../auth-helpers.ts';
import { createFixtureUser, fund, type TFixtureUser } from '../../fixtures.ts';
import { checkLedger } from '../../../src/domains/ledger/invariants.ts';
import { heldBalance } from '../../../src/domains/ledger/holds.ts';
import { userBalance } from '../../../src/domains/ledger/service.ts';
import { loadPaymentProviders } from '../../../src/providers/index.ts';
import { reconcile } from '../../../src/domains/payments/reconcile.ts';
import { runSandboxPayouts, SANDBOX_DECLINED_CARD, SANDBOX_PAYOUT_DELAY_MS } from '../../../src/providers/sandbox/payouts.ts';
import { signWebhook } from '../../../src/inbox/signature.ts';
import { approveWithdrawal, rejectWithdrawal } from '../../../src/domains/payments/withdrawal-states.ts';
import { markSecurityChanged } from '../../../src/domains/security/second-factor.ts';
import { newTotpSecret, totpCode } from '../../../src/domains/security/totp.ts';
import { enrolSoftPasskey, softSecondFactor } from '../../passkey-authenticator.ts';

const SECRET = 'test-sandbox-card-secret-0123456789abcdef';
const NOW = new Date('2026-11-23T10:00:00Z');
const CARD = { card_number: '4111 1111 1111 1111', card_holder: 'IVAN PETROV' };
const BTC_ADDRESS = 'bc1qar0srrr7xfkvy5l643lydnw9re59gtzzwf5mdq';

describe.each(ENGINES)('withdraw (%s)', (engine) => {
  let ctx: Awaited<ReturnType<typeof build>>;
  let alice: TFixtureUser;
  let bob: TFixtureUser;
  let keys = 0;
  const providers = () => loadPaymentProviders({ NODE_ENV: 'test', WEBHOOK_SECRET_SANDBOX_CARD: SECRET });

  beforeAll(async () => {
    ctx = await build(engine, { WEBHOOK_SECRET_SANDBOX_CARD: SECRET }, { now: () => NOW });
    alice = await createFixtureUser(ctx.db);
    bob = await createFixtureUser(ctx.db);
    await ctx.db.query('UPDATE users SET verification_level = 1 WHERE id = ANY ($1::bigint[])', [[alice.id, bob.id]]);
    await fund(ctx.db, alice.id, 'RUB', 10_000_000n); // 100 000 RUB
    await fund(ctx.db, bob.id, 'RUB', 1_000_000n);
  });
  afterAll(async () => ctx?.close());

  const withdraw = (user: TFixtureUser, body: object, options: { key?: string; ps?: string; locale?: 'ru' | 'en' } = {}) =>
    call(ctx.app, `/api/withdraw/form/${options.ps ?? 'sandbox-card'}`, {
      token: user.token,
      payload: body,
      locale: options.locale ?? 'en',
      headers: { 'idempotency-key': options.key ?? `withdraw-test-${++keys}` },
    });
  const balances = async (user: TFixtureUser) => ({ available: await userBalance(ctx.db, user.id, 'RUB'), held: await heldBalance(ctx.db, user.id, 'RUB') });
  const stateOf = async (id: string) => (await ctx.db.query<{ state: string }>('SELECT state FROM withdrawals WHERE public_id = $1', [id]))[0]?.state;

  it('lists the withdraw systems with the limits left; signed-out callers get 401', async () => {
    expect((await call(ctx.app, '/api/withdraw/ps')).statusCode).toBe(401);
    const res = await call(ctx.app, '/api/withdraw/ps', { token: alice.token });
    expect(res.statusCode).toBe(200);
    const body = res.json();
    expect(body.currencies.find((g: { currency: string }) => g.currency === 'RUB').systems.map((s: { id: string }) => s.id)).toEqual([
      'sandbox-card',
      'sandbox-bank',
    ]);
    expect(body.limits).toEqual({ level: 1, currency: 'USD', per_24h: '20000.00', per_30d: '100000.00', left_24h: '20000.00', left_30d: '100000.00' });
    expect(body).toMatchObject({ blocked_until: null, second_factor: false, open: [] });
    // Each currency named in the reader's language, with its logo, as on the deposit list.
    expect(body.currencies.find((g: { currency: string }) => g.currency === 'RUB')).toMatchObject({ name: 'Russian rouble', logo: expect.any(String) });
    const russian = (await call(ctx.app, '/api/withdraw/ps', { token: alice.token, locale: 'ru' })).json();
    expect(russian.currencies.find((g: { currency: string }) => g.currency === 'RUB')).toMatchObject({ name: 'Российский рубль' });
  });

  it('checks a form: fee, amount received, limits left, and field errors as messages', async () => {
    const ok = await call(ctx.app, '/api/withdraw/check', {
      token: alice.token,
      locale: 'en',
      payload: { ps: 'sandbox-card', currency: 'RUB', amount: '1000', ...CARD },
    });
    expect(ok.statusCode).toBe(200);
    // 1 % + 50 RUB
    expect(ok.json()).toMatchObject({ ok: true, fee: '60.00', receive: '940.00', fields: {}, limits: { left_24h: '20000.00' } });
    const bad = await call(ctx.app, '/api/withdraw/check', {
      token: alice.token,
      locale: 'en',
      payload: { ps: 'sandbox-card', currency: 'RUB', amount: '1000', card_number: '4111 1111 1111 1112', card_holder: 'IVAN PETROV' },
    });
    expect(bad.json()).toMatchObject({ ok: false, fields: { card_number: 'Check the card number' } });
    const small = await call(ctx.app, '/api/withdraw/check', {
      token: alice.token,
      locale: 'en',
      payload: { ps: 'sandbox-card', currency: 'RUB', amount: '10', ...CARD },
    });
    expect(small.json()).toMatchObject({ ok: false, fields: { amount: 'The minimum is 100 RUB' } });
    const over = await call(ctx.app, '/api/withdraw/check', {
      token: bob.token,
      locale: 'en',
      payload: { ps: 'sandbox-card', currency: 'RUB', amount: '20000', ...CARD },
    });
    expect(over.json().ok).toBe(false);
    expect(over.json().fields.amount).toMatch(/Not enough RUB/);
  });

  it('at a level whose withdrawal limit is 0, every system is listed locked and refused as locked; the limits table decides', async () => {
    const carol = await createFixtureUser(ctx.db); // level 0: its withdrawal limit is 0
    await fund(ctx.db, carol.id, 'BTC', 100_000_000n);
    const systems = async () =>
      (
        (await call(ctx.app, '/api/withdraw/ps', { token: carol.token })).json().currencies as Array<{
          systems: Array<{ id: string; level: number; locked: boolean }>;
        }>
      ).flatMap((group) => group.systems);
    const listed = await systems();
    expect(listed.length).toBeGreaterThan(0);
    expect(listed.every((system) => system.locked && system.level === 1)).toBe(true);
    const res = await withdraw(carol, { currency: 'BTC', amount: '0.01', address: BTC_ADDRESS }, { ps: 'sandbox-chain' });
    expect(res.statusCode).toBe(403);
    expect(res.json()).toMatchObject({ code: 'payment_level_required', fields: { ps: expect.any(String) } });
    const checked = await call(ctx.app, '/api/withdraw/check', {
      token: carol.token,
      locale: 'en',
      payload: { ps: 'sandbox-chain', currency: 'BTC', amount: '0.01', address: BTC_ADDRESS },
    });
    expect(checked.json()).toMatchObject({ ok: false, fields: { ps: expect.any(String) } });
    expect(await heldBalance(ctx.db, carol.id, 'BTC')).toBe(0n);
    // An operator who gives level 0 a small withdrawal limit opens the systems of level 0 to it.
    await ctx.db.query(`UPDATE verification_limits SET per_24h = 5000, per_30d = 10000 WHERE level = 0 AND operation = 'withdrawal'`);
    try {
      const opened = await systems();
      expect(opened.find((system) => system.id === 'sandbox-chain')).toMatchObject({ level: 0, locked: false });
      expect(opened.filter((system) => system.locked).every((system) => system.level === 1)).toBe(true);
      const over = await withdraw(carol, { currency: 'BTC', amount: '0.01', address: BTC_ADDRESS }, { ps: 'sandbox-chain' });
      expect(over.json()).toMatchObject({ code: 'withdrawal_limit_exceeded' });
      expect(over.json().message).toBe('Over the limit of your verification level: 50 USD left for 24 hours (limit 50 USD).');
    } finally {
      await ctx.db.query(`UPDATE verification_limits SET per_24h = 0, per_30d = 0 WHERE level = 0 AND operation = 'withdrawal'`);
    }
    expect(await heldBalance(ctx.db, carol.id, 'BTC')).toBe(0n);
  });

  it('refuses a request over the level limit, with the limit shown, moving nothing', async () => {
    // Over the 24-hour limit of level 1: 20 000 USD ≈ 1 600 000+ RUB at the seeded rate.
    await fund(ctx.db, bob.id, 'RUB', 300_000_000n);
    const big = await withdraw(bob, { currency: 'RUB', amount: '2900000', iban: 'DE89370400440532013000', account_holder: 'Bob B' }, { ps: 'sandbox-bank' });
    expect(big.statusCode).toBe(422);
    expect(big.json().message).toMatch(/^Over the limit of your verification level: 20000 USD left for 24 hours \(limit 20000 USD\)\.$/);
  });

  it('auto-approves a small request: held, handed to the provider, paid by its signed webhook; the hold is captured', async () => {
    const before = await balances(alice);
    const res = await withdraw(alice, { currency: 'RUB', amount: '1000', ...CARD });
    expect(res.statusCode).toBe(200);
    const { withdrawal, wallets } = res.json() as { withdrawal: TWithdrawal; wallets: Array<{ currency: string; balance: string; held: string }> };
    expect(withdrawal).toMatchObject({ state: 'processing', amount: '1000.00', fee: '60.00', receive: '940.00', details: '•••• 1111', cancellable: false });
    expect(wallets.find((w) => w.currency === 'RUB')).toMatchObject({ held: '1000.00' });
    expect(await balances(alice)).toEqual({ available: before.available - 100_000n, held: before.held + 100_000n });
    // The sandbox pays after its delay, not before.
    expect(await runSandboxPayouts(ctx.db, providers(), NOW)).toEqual({ settled: 0, reported: 0 });
    expect(await runSandboxPayouts(ctx.db, providers(), new Date(NOW.getTime() + SANDBOX_PAYOUT_DELAY_MS))).toEqual({ settled: 1, reported: 1 });
    expect(await stateOf(withdrawal.id)).toBe('paid');
    expect(await balances(alice)).toEqual({ available: before.available - 100_000n, held: before.held });
    const [clearing] = await ctx.db.query<{ balance: string }>(
      `SELECT balance::text AS balance FROM ledger_accounts WHERE kind = 'clearing' AND name = 'sandbox-card' AND currency = 'RUB'`,
    );
    expect(clearing!.balance).toBe('94000');
    const status = await call(ctx.app, `/api/withdraw/status/${withdrawal.id}`, { token: alice.token });
    expect(status.json().withdrawal).toMatchObject({ state: 'paid', reason: null });
    expect((await checkLedger(ctx.db)).violations).toEqual([]);
  });

  it('replays a repeated key and refuses an over-balance request', async () => {
    const first = await withdraw(alice, { currency: 'RUB', amount: '200', ...CARD }, { key: 'withdraw-replay-1' });
    const again = await withdraw(alice, { currency: 'RUB', amount: '200', ...CARD }, { key: 'withdraw-replay-1' });
    expect(again.statusCode).toBe(200);
    expect(again.headers[REPLAYED_HEADER]).toBe('true');
    expect(again.json().withdrawal.id).toBe(first.json().withdrawal.id);
    const frank = await createFixtureUser(ctx.db);
    await ctx.db.query('UPDATE users SET verification_level = 1 WHERE id = $1', [frank.id]);
    await fund(ctx.db, frank.id, 'RUB', 100_000n);
    const poor = await withdraw(frank, { currency: 'RUB', amount: '5000', ...CARD });
    expect(poor.statusCode).toBe(422);
    expect(poor.json()).toMatchObject({ code: 'insufficient_funds' });
  });

  it('waits for an operator above the threshold; the user cancels while requested and the hold comes back', async () => {
    const before = await balances(alice);
    const res = await withdraw(alice, { currency: 'RUB', amount: '15000', ...CARD });
    const { withdrawal } = res.json() as { withdrawal: TWithdrawal };
    expect(withdrawal).toMatchObject({ state: 'requested', cancellable: true });
    expect(new Date(withdrawal.expected_at!).getTime()).toBeGreaterThan(NOW.getTime() + 24 * 3_600_000);
    expect((await balances(alice)).held).toBe(before.held + 1_500_000n);
    const ps = await call(ctx.app, '/api/withdraw/ps', { token: alice.token });
    expect(ps.json().open.map((w: TWithdrawal) => w.id)).toContain(withdrawal.id);
    // Another user's request answers exactly like a missing one.
    for (const res of [
      await call(ctx.app, `/api/withdraw/status/${withdrawal.id}`, { token: bob.token }),
      await call(ctx.app, `/api/withdraw/cancel/${withdrawal.id}`, { token: bob.token, payload: {}, headers: { 'idempotency-key': 'cancel-bob-1' } }),
      await call(ctx.app, '/api/withdraw/status/00000000-0000-4000-8000-000000000000', { token: alice.token }),
    ]) {
      expect(res.statusCode).toBe(404);
      expect(res.json().code).toBe('withdrawal_not_found');
    }
    const cancel = await call(ctx.app, `/api/withdraw/cancel/${withdrawal.id}`, {
      token: alice.token,
      payload: {},
      headers: { 'idempotency-key': 'cancel-1' },
    });
    expect(cancel.statusCode).toBe(200);
    expect(cancel.json().withdrawal).toMatchObject({ state: 'cancelled', reason: 'Cancelled by you', cancellable: false });
    expect(await balances(alice)).toEqual(before);
    const twice = await call(ctx.app, `/api/withdraw/cancel/${withdrawal.id}`, { token: alice.token, payload: {}, headers: { 'idempotency-key': 'cancel-2' } });
    expect(twice.json().withdrawal.state).toBe('cancelled');
    expect(await balances(alice)).toEqual(before);
  });

  it('an operator approves (then the user can no longer cancel) or rejects with a reason that releases the hold', async () => {
    const before = await balances(alice);
    const a = (await withdraw(alice, { currency: 'RUB', amount: '12000', ...CARD })).json().withdrawal as TWithdrawal;
    const b = (await withdraw(alice, { currency: 'RUB', amount: '13000', ...CARD })).json().withdrawal as TWithdrawal;
    expect(await approveWithdrawal({ db: ctx.db, cipher: testCipher() }, a.id, 'operator:test', NOW)).toEqual({ id: a.id, state: 'processing' });
    const late = await call(ctx.app, `/api/withdraw/cancel/${a.id}`, { token: alice.token, payload: {}, headers: { 'idempotency-key': 'cancel-late' } });
    expect(late.statusCode).toBe(409);
    expect(late.json().code).toBe('withdrawal_state');
    await expect(approveWithdrawal({ db: ctx.db, cipher: testCipher() }, a.id, 'operator:test', NOW)).rejects.toMatchObject({ code: 'withdrawal_state' });
    await rejectWithdrawal(ctx.db, b.id, 'details do not match the account holder', 'operator:test', NOW);
    const status = await call(ctx.app, `/api/withdraw/status/${b.id}`, { token: alice.token, locale: 'en' });
    expect(status.json().withdrawal).toMatchObject({ state: 'rejected', reason: 'Rejected by an operator: details do not match the account holder' });
    expect((await balances(alice)).held).toBe(before.held + 1_200_000n);
    await expect(rejectWithdrawal(ctx.db, a.id, 'too late', 'operator:test', NOW)).rejects.toMatchObject({ code: 'withdrawal_state' });
    await runSandboxPayouts(ctx.db, providers(), NOW, { reference: a.id, force: true });
    expect(await stateOf(a.id)).toBe('paid');
    expect(await balances(alice)).toEqual({ available: before.available - 1_200_000n, held: before.held });
    const [audit] = await ctx.db.query<{ n: number }>(`SELECT count(*)::int AS n FROM operator_audit WHERE subject = ANY ($1::text[])`, [[a.id, b.id]]);
    expect(audit!.n).toBe(2);
  });

  it('a payout the provider fails ends failed and releases the hold; forged and repeated webhooks move nothing', async () => {
    await runSandboxPayouts(ctx.db, providers(), new Date(NOW.getTime() + SANDBOX_PAYOUT_DELAY_MS)); // the earlier ones
    const before = await balances(alice);
    const w = (await withdraw(alice, { currency: 'RUB', amount: '500', card_number: SANDBOX_DECLINED_CARD, card_holder: 'IVAN PETROV' })).json()
      .withdrawal as TWithdrawal;
    expect(w.state).toBe('processing');
    const body = Buffer.from(JSON.stringify({ id: 'forged-1', type: 'payout.paid', payment_id: w.id, amount: '445.00', currency: 'RUB' }));
    const forged = await call(ctx.app, '/api/payments/webhook/sandbox-card', {
      payload: body.toString(),
      headers: { 'content-type': 'application/json', [WEBHOOK_SIGNATURE_HEADER]: signWebhook('wrong-secret', body, NOW.getTime() / 1000) },
    });
    expect(forged.statusCode).toBe(401);
    expect(await stateOf(w.id)).toBe('processing');
    await runSandboxPayouts(ctx.db, providers(), new Date(NOW.getTime() + SANDBOX_PAYOUT_DELAY_MS));
    const status = await call(ctx.app, `/api/withdraw/status/${w.id}`, { token: alice.token, locale: 'en' });
    expect(status.json().withdrawal).toMatchObject({ state: 'failed', reason: 'The payment system could not pay it out; the amount was returned' });
    expect(await balances(alice)).toEqual(before);
    // The provider's event delivered again: a duplicate, nothing moves.
    const [ref] = await ctx.db.query<{ provider_ref: string }>('SELECT provider_ref FROM sandbox_payouts WHERE reference = $1', [w.id]);
    const again = Buffer.from(
      JSON.stringify({ id: `${ref!.provider_ref}.failed`, type: 'payout.failed', payment_id: w.id, amount: '445.00', currency: 'RUB' }),
    );
    const dup = await call(ctx.app, '/api/payments/webhook/sandbox-card', {
      payload: again.toString(),
      headers: { 'content-type': 'application/json', [WEBHOOK_SIGNATURE_HEADER]: signWebhook(SECRET, again, NOW.getTime() / 1000) },
    });
    expect(dup.json()).toMatchObject({ result: 'duplicate' });
    expect(await balances(alice)).toEqual(before);
    expect((await checkLedger(ctx.db)).violations).toEqual([]);
  });

  it('is blocked for 24 hours after a security change, saying until when', async () => {
    const dave = await createFixtureUser(ctx.db);
    await ctx.db.query('UPDATE users SET verification_level = 1 WHERE id = $1', [dave.id]);
    await fund(ctx.db, dave.id, 'RUB', 1_000_000n);
    await markSecurityChanged(ctx.db, dave.id);
    const res = await withdraw(dave, { currency: 'RUB', amount: '200', ...CARD });
    expect(res.statusCode).toBe(403);
    expect(res.json().code).toBe('withdrawals_blocked');
    expect(res.json().blocked_until).toMatch(/^\d{4}-\d{2}-\d{2}T/);
    const ps = await call(ctx.app, '/api/withdraw/ps', { token: dave.token });
    expect(ps.json().blocked_until).toBe(res.json().blocked_until);
    expect(await heldBalance(ctx.db, dave.id, 'RUB')).toBe(0n);
  });

  it('asks for the second factor when 2FA is on: no code, a wrong code refused; the right one passes', async () => {
    const erin = await createFixtureUser(ctx.db);
    await ctx.db.query('UPDATE users SET verification_level = 1 WHERE id = $1', [erin.id]);
    await fund(ctx.db, erin.id, 'RUB', 1_000_000n);
    const secret = newTotpSecret();
    await ctx.db.query('INSERT INTO user_totp (user_id, secret, enabled_at) VALUES ($1, $2, now())', [erin.id, secret]);
    const none = await withdraw(erin, { currency: 'RUB', amount: '200', ...CARD });
    expect(none.statusCode).toBe(400);
    expect(none.json().code).toBe('second_factor_required');
    const right = totpCode(secret, NOW.getTime());
    const wrong = await withdraw(erin, { currency: 'RUB', amount: '200', ...CARD, code: right === '000000' ? '111111' : '000000' });
    expect(wrong.statusCode).toBe(400);
    expect(wrong.json().code).toBe('second_factor_invalid');
    expect(await heldBalance(ctx.db, erin.id, 'RUB')).toBe(0n);
    const ok = await withdraw(erin, { currency: 'RUB', amount: '200', ...CARD, code: right }, { key: 'erin-key-1' });
    expect(ok.statusCode).toBe(200);
    // The same request again (its code now spent) replays the first answer.
    const replay = await withdraw(erin, { currency: 'RUB', amount: '200', ...CARD, code: right }, { key: 'erin-key-1' });
    expect(replay.statusCode).toBe(200);
    expect(replay.json().withdrawal.id).toBe(ok.json().withdrawal.id);
  });

  it('a passkey approves a withdrawal in place of the code; its assertion does not approve a second one', async () => {
    const fay = await createFixtureUser(ctx.db);
    await ctx.db.query('UPDATE users SET verification_level = 1 WHERE id = $1', [fay.id]);
    await fund(ctx.db, fay.id, 'RUB', 1_000_000n);
    const secret = newTotpSecret();
    await ctx.db.query('INSERT INTO user_totp (user_id, secret, enabled_at) VALUES ($1, $2, now())', [fay.id, secret]);
    const send = (url: string, options: { token?: string; payload?: object }) => call(ctx.app, url, options);
    const key = await enrolSoftPasskey(send, fay.token, { code: totpCode(secret, NOW.getTime()) });
    // Adding the passkey paused withdrawals for 24 hours; this test is about the factor, not the pause.
    const paused = await withdraw(fay, { currency: 'RUB', amount: '200', ...CARD, passkey: await softSecondFactor(send, fay.token, key) });
    expect(paused.json().code).toBe('withdrawals_blocked');
    await ctx.db.query('UPDATE users SET security_changed_at = NULL WHERE id = $1', [fay.id]);
    const assertion = await softSecondFactor(send, fay.token, key);
    const ok = await withdraw(fay, { currency: 'RUB', amount: '200', ...CARD, passkey: assertion });
    expect(ok.statusCode).toBe(200);
    const again = await withdraw(fay, { currency: 'RUB', amount: '200', ...CARD, passkey: assertion });
    expect(again.json().code).toBe('passkey_invalid');
    expect(await heldBalance(ctx.db, fay.id, 'RUB')).toBe(20_000n);
  });

  it('GET /api/withdraw/history: rows with state and reason, filters, CSV', async () => {
    const all = await call(ctx.app, '/api/withdraw/history', { token: alice.token, locale: 'en' });
    expect(all.statusCode).toBe(200);
    const states = all.json().items.map((w: TWithdrawal) => w.state);
    expect(states).toEqual(expect.arrayContaining(['paid', 'cancelled', 'rejected', 'failed']));
    const rejected = await call(ctx.app, '/api/withdraw/history?status=rejected', { token: alice.token, locale: 'en' });
    expect(rejected.json()).toMatchObject({ total: 1, items: [{ state: 'rejected' }] });
    // The system by its name in the reader's language, never by its id.
    expect(rejected.json().items[0]).toMatchObject({ ps: 'sandbox-card', system: 'Bank card (sandbox)' });
    const ru = await call(ctx.app, '/api/withdraw/history?status=rejected', { token: alice.token, locale: 'ru' });
    expect(ru.json().items[0].system).toBe('Банковская карта (песочница)');
    const paged = await call(ctx.app, '/api/withdraw/history?per_page=2&page=2', { token: alice.token });
    expect(paged.json()).toMatchObject({ page: 2, per_page: 2 });
    const csv = await call(ctx.app, '/api/withdraw/history?format=csv&status=paid', { token: alice.token });
    expect(csv.headers['content-type']).toMatch(/text\/csv/);
    expect(csv.body.split('\r\n')[0]).toBe('id,created_at,ps,currency,amount,fee,receive,details,state,reason,finished_at');
    expect(csv.body).toContain(',paid,');
    expect((await call(ctx.app, '/api/withdraw/history', { token: bob.token })).json().items.every((w: TWithdrawal) => w.id !== all.json().items[0].id)).toBe(
      true,
    );
  });

  it('reconciles the providers with the ledger, listing every difference', async () => {
    const day = (d: number) => new Date(NOW.getTime() + d * 86_400_000);
    const clean = await reconcile(ctx.db, day(-1), day(1));
    expect(clean.differences).toEqual([]);
    const rub = clean.clearing.find((c) => c.provider === 'sandbox-card' && c.currency === 'RUB');
    expect(rub?.balance).toBe(rub?.expected);
    expect(BigInt(rub!.balance)).toBeGreaterThan(0n);
    // The provider's book says it paid something we never asked for.
    await ctx.db.query(
      `INSERT INTO sandbox_payouts (provider_ref, provider, reference, currency, amount, destination, state, created_at, due_at, settled_at, reported_at)
       VALUES ('po_ghost', 'sandbox-card', 'ghost-ref', 'RUB', 777, 'x', 'succeeded', $1, $1, $1, $1)`,
      [NOW],
    );
    const dirty = await reconcile(ctx.db, day(-1), day(1));
    expect(dirty.ok).toBe(false);
    expect(dirty.differences.map((d) => [d.kind, d.reference])).toEqual(
      expect.arrayContaining([
        ['payout_missing_in_ledger', 'ghost-ref'],
        ['clearing_mismatch', ''],
      ]),
    );
  });
});
