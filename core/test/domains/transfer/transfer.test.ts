import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ENGINES, build } from '../../helpers.ts';
import { createFixtureUser, fund, type TFixtureUser } from '../../fixtures.ts';
import { checkLedger } from '../../../src/domains/ledger/invariants.ts';
import { postForm } from '../../auth-helpers.ts';

describe.each(ENGINES)('transfers on %s', (engine) => {
  let ctx: Awaited<ReturnType<typeof build>>;
  let alice: TFixtureUser;
  let bob: TFixtureUser;
  let carol: TFixtureUser;
  let key = 0;
  const nextKey = () => `test-key-${engine}-${++key}-${Date.now()}`;

  /** Form data, as the site sends it. */
  const post = (user: TFixtureUser, url: string, payload: Record<string, string>, idem?: string) => postForm(ctx.app, user, url, payload, idem);
  const get = (user: TFixtureUser, url: string) => ctx.app.inject({ url, headers: { authorization: `Bearer ${user.token}`, 'x-obmen-locale': 'en' } });
  const balance = async (user: TFixtureUser, currency: string) =>
    (await get(user, '/api/wallets')).json().wallets.find((w: { currency: string }) => w.currency === currency).balance as string;

  beforeAll(async () => {
    ctx = await build(engine);
    alice = await createFixtureUser(ctx.db, { firstName: 'Alice', lastName: 'Archer' });
    bob = await createFixtureUser(ctx.db, { firstName: 'Bob', lastName: 'smith' });
    carol = await createFixtureUser(ctx.db, { email: 'carol.c@example.org' });
    await fund(ctx.db, alice.id, 'USDT', 100_000_000n);
  });
  afterAll(() => ctx.close());

  it('GET /api/transfer lists currencies with limits, fees and balances, and the wallets', async () => {
    const res = await get(alice, '/api/transfer');
    expect(res.statusCode).toBe(200);
    const body = res.json();
    const usdt = body.currencies.find((c: { code: string }) => c.code === 'USDT');
    expect(usdt).toMatchObject({ precision: 6, balance: '100.000000', fee_percent: '0', fee_fixed: '0.000000' });
    expect(usdt.min).toMatch(/^\d+\.\d{6}$/);
    expect(body.wallets.find((w: { currency: string }) => w.currency === 'USDT')).toMatchObject({
      number: `${alice.accountId}-USDT`,
      balance: '100.000000',
      last_exchange: false,
    });
    expect(body.total_balance).toMatchObject({ currency: 'USD', amount: '100.00' });
  });

  it('check is rate-limited per user, so account numbers cannot be walked for names', async () => {
    const prober = await createFixtureUser(ctx.db, {});
    const probe = (n: number) => post(prober, '/api/transfer/check', { account_id: String(10_000_000 + n), currency: 'USDT', amount: '1' });
    for (let n = 0; n < 60; n++) expect((await probe(n)).statusCode).not.toBe(429);
    const limited = await probe(60);
    expect(limited.statusCode).toBe(429);
    expect(limited.json().code).toBe('rate_limited');
    expect(Number(limited.headers['retry-after'])).toBeGreaterThan(0);
    // Another user is not affected.
    const other = await post(alice, '/api/transfer/check', { account_id: String(bob.accountId), currency: 'USDT', amount: '1' });
    expect(other.statusCode).toBe(200);
  });

  it('check answers the masked recipient and the fee, or why not', async () => {
    const ok = await post(alice, '/api/transfer/check', { account_id: String(bob.accountId), currency: 'usdt', amount: '10' });
    expect(ok.statusCode).toBe(200);
    expect(ok.json()).toEqual({
      status: 'ok',
      recipient: { account_id: bob.accountId, name: 'Bob S.' },
      currency: 'USDT',
      amount: '10.000000',
      fee: '0.000000',
      total: '10.000000',
      balance: '100.000000',
      second_factor: false,
      totp: false,
    });
    const masked = await post(alice, '/api/transfer/check', { account_id: String(carol.accountId), currency: 'USDT', amount: '1' });
    expect(masked.json().recipient.name).toBe('ca***@e***.org');

    const unknown = await post(alice, '/api/transfer/check', { account_id: '10000009', currency: 'USDT', amount: '1' });
    expect(unknown.statusCode).toBe(422);
    expect(unknown.json()).toMatchObject({ code: 'recipient_not_found', message: 'There is no account 10000009', fields: { account_id: 'No such account' } });

    const self = await post(alice, '/api/transfer/check', { account_id: String(alice.accountId), currency: 'USDT', amount: '1' });
    expect(self.json()).toMatchObject({ code: 'transfer_to_self', message: 'You cannot transfer to yourself' });

    const poor = await post(alice, '/api/transfer/check', { account_id: String(bob.accountId), currency: 'USDT', amount: '500' });
    expect(poor.statusCode).toBe(422);
    expect(poor.json()).toMatchObject({ code: 'insufficient_funds', message: 'Not enough USDT: the balance is 100, 500 is needed' });

    const precise = await post(alice, '/api/transfer/check', { account_id: String(bob.accountId), currency: 'USDT', amount: '0.0000001' });
    expect(precise.statusCode).toBe(400);
    expect(precise.json()).toMatchObject({ code: 'amount_too_precise', message: 'USDT allows at most 6 digits after the point' });

    const tiny = await post(alice, '/api/transfer/check', { account_id: String(bob.accountId), currency: 'USDT', amount: '0.000001' });
    expect(tiny.json()).toMatchObject({ code: 'amount_too_small' });

    const bad = await post(alice, '/api/transfer/check', { account_id: '12', currency: 'USDT', amount: 'abc' });
    expect(bad.statusCode).toBe(400);
    expect(Object.keys(bad.json().fields).sort()).toEqual(['account_id', 'amount']);
  });

  it('moves the money once per idempotency key, with the new wallets in the answer', async () => {
    const missing = await post(alice, '/api/transfer', { account_id: String(bob.accountId), currency: 'USDT', amount: '10' });
    expect(missing.statusCode).toBe(400);
    expect(missing.json().code).toBe('idempotency_key_required');

    const idem = nextKey();
    const first = await post(alice, '/api/transfer', { account_id: String(bob.accountId), currency: 'USDT', amount: '10', comment: 'lunch' }, idem);
    expect(first.statusCode).toBe(200);
    const body = first.json();
    expect(body).toMatchObject({
      status: 'ok',
      message: 'Sent 10.00 USDT to Bob S.',
      transfer: {
        direction: 'out',
        account_id: bob.accountId,
        name: 'Bob S.',
        currency: 'USDT',
        amount: '10.000000',
        fee: '0.000000',
        comment: 'lunch',
        status: 'completed',
      },
      total_balance: { currency: 'USD', amount: '90.00' },
    });
    expect(body.wallets.find((w: { currency: string }) => w.currency === 'USDT').balance).toBe('90.000000');

    const again = await post(alice, '/api/transfer', { account_id: String(bob.accountId), currency: 'USDT', amount: '10.00', comment: 'lunch' }, idem);
    expect(again.statusCode).toBe(200);
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(again.json().transfer).toEqual(body.transfer);
    expect(await balance(alice, 'USDT')).toBe('90.000000');
    expect(await balance(bob, 'USDT')).toBe('10.000000');

    const other = await post(alice, '/api/transfer', { account_id: String(bob.accountId), currency: 'USDT', amount: '11', comment: 'lunch' }, idem);
    expect(other.statusCode).toBe(422);
    expect(other.json().code).toBe('idempotency_key_reused');
  });

  it('20 concurrent requests with one key apply once and all get the same answer', async () => {
    const idem = nextKey();
    const answers = await Promise.all(
      Array.from({ length: 20 }, () => post(alice, '/api/transfer', { account_id: String(carol.accountId), currency: 'USDT', amount: '1' }, idem)),
    );
    expect(answers.map((a) => a.statusCode)).toEqual(Array(20).fill(200));
    expect(new Set(answers.map((a) => a.json().transfer.id)).size).toBe(1);
    expect(answers.filter((a) => a.headers['idempotent-replayed'] !== 'true')).toHaveLength(1);
    expect(await balance(carol, 'USDT')).toBe('1.000000');
  });

  it('a failed transfer leaves the key free and changes nothing', async () => {
    const idem = nextKey();
    const poor = await post(alice, '/api/transfer', { account_id: String(bob.accountId), currency: 'USDT', amount: '1000' }, idem);
    expect(poor.statusCode).toBe(422);
    expect(poor.json().code).toBe('insufficient_funds');
    expect(await balance(alice, 'USDT')).toBe('89.000000');
    const retry = await post(alice, '/api/transfer', { account_id: String(bob.accountId), currency: 'USDT', amount: '1' }, idem);
    expect(retry.statusCode).toBe(200);
  });

  it('charges a configured fee on top, into the fee account', async () => {
    await ctx.db.query(`UPDATE transfer_settings SET fee_percent = 0.01, fee_fixed = 100000 WHERE currency = 'USDT'`);
    const check = await post(bob, '/api/transfer/check', { account_id: String(alice.accountId), currency: 'USDT', amount: '5' });
    expect(check.json()).toMatchObject({ amount: '5.000000', fee: '0.150000', total: '5.150000' });
    const res = await post(bob, '/api/transfer', { account_id: String(alice.accountId), currency: 'USDT', amount: '5' }, nextKey());
    expect(res.json().transfer.fee).toBe('0.150000');
    expect(await balance(bob, 'USDT')).toBe('5.850000');
    const [fees] = await ctx.db.query<{ balance: string }>(
      `SELECT sum(balance)::text AS balance FROM ledger_accounts WHERE kind = 'fees' AND currency = 'USDT'`,
    );
    expect(fees?.balance).toBe('150000');
    await ctx.db.query(`UPDATE transfer_settings SET fee_percent = 0, fee_fixed = 0 WHERE currency = 'USDT'`);
  });

  it('needs a signed-in user', async () => {
    const res = await ctx.app.inject({ method: 'POST', url: '/api/transfer', payload: { account_id: String(bob.accountId), currency: 'USDT', amount: '1' } });
    expect(res.statusCode).toBe(401);
  });

  it('leaves a consistent ledger', async () => {
    const report = await checkLedger(ctx.db);
    expect(report.violations).toEqual([]);
  });
});
