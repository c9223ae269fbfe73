import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isAddress, addressFormatOf, type TDepositPayment } from '@obmen/shared';
import { build, ENGINES } from '../../helpers.ts';
import { call } from '../../auth-helpers.ts';
import { createFixtureUser, type TFixtureUser } from '../../fixtures.ts';
import { COMMANDS } from '../../../src/cli/index.ts';
import { checkLedger } from '../../../src/domains/ledger/invariants.ts';
import { loadPaymentProviders } from '../../../src/providers/index.ts';
import { bankReceived, chainMine, chainSend, chainTick, SANDBOX_BLOCK_MS } from '../../../src/providers/sandbox/payments.ts';
import { processDueWebhooks, replayWebhook } from '../../../src/domains/payments/webhooks.ts';
import { testConfig } from '../../helpers.ts';

const NOW = new Date('2026-11-23T10:00:00Z');
const FORM = { 'content-type': 'application/x-www-form-urlencoded' };

describe.each(ENGINES)('sandbox providers: card page, bank transfer, chain (%s)', (engine) => {
  let ctx: Awaited<ReturnType<typeof build>>;
  let user: TFixtureUser;
  let other: TFixtureUser;
  let clock = NOW;
  const providers = loadPaymentProviders(testConfig());

  beforeAll(async () => {
    ctx = await build(engine, {}, { now: () => clock });
    user = await createFixtureUser(ctx.db);
    other = await createFixtureUser(ctx.db);
    // These deposits add up beyond a level-0 user's deposit limits (deposit.test.ts tests those).
    await ctx.db.query(`UPDATE verification_limits SET per_24h = 100000000, per_30d = 100000000 WHERE operation = 'deposit'`);
  });
  afterAll(async () => ctx?.close());

  const balance = async (currency: string, who = user) => {
    const [row] = await ctx.db.query<{ balance: string }>(
      "SELECT coalesce((SELECT balance::text FROM ledger_accounts WHERE user_id = $1 AND currency = $2), '0') AS balance",
      [who.id, currency],
    );
    return BigInt(row!.balance);
  };
  const open = async (payload: object) => {
    const res = await call(ctx.app, '/api/deposit/integration_json', { token: user.token, payload, locale: 'en' });
    expect(res.statusCode, res.body).toBe(200);
    return res.json() as { payment: TDepositPayment | null; address: { address: string; qr_svg: string; confirmations: number; min: string } | null };
  };
  const check = async (url: string, who = user) => call(ctx.app, '/api/deposit/integration_json/check', { token: who.token, payload: { url }, locale: 'en' });
  const page = (payment: TDepositPayment, form?: string, headers: Record<string, string> = {}) =>
    ctx.app.inject({
      method: form === undefined ? 'GET' : 'POST',
      url: payment.pay_url!,
      headers: { 'x-obmen-locale': 'en', ...headers, ...(form === undefined ? {} : FORM) },
      ...(form === undefined ? {} : { payload: form }),
    });
  const card = (number: string) => `action=pay&card_number=${encodeURIComponent(number)}&expiry=12%2F30&cvc=123`;

  it('card: the hosted page takes a test card, our webhook credits the deposit less its fee, the payer returns to the payment page', async () => {
    const { payment } = await open({ ps: 'sandbox-card', currency: 'RUB', amount: '1000' });
    expect(payment).toMatchObject({ state: 'created', fee: '15.00', receive: '985.00', pay_url: `/api/payments/sandbox-card/pay/${payment!.id}` });
    expect(payment!.url).toBe(`/deposit/form/sandbox-card/RUB?payment=${payment!.id}`);
    const shown = await page(payment!);
    expect(shown.statusCode).toBe(200);
    expect(shown.headers['content-type']).toMatch(/^text\/html/);
    expect(shown.body).toContain('1,000.00\u00a0RUB');
    expect(shown.body).not.toMatch(/<script/i);

    const before = await balance('RUB');
    const paid = await page(payment!, card('4242 4242 4242 4242'));
    expect(paid.statusCode).toBe(303);
    expect(paid.headers.location).toBe(payment!.url);
    expect(await balance('RUB')).toBe(before + 98_500n);
    const checked = (await check(payment!.url)).json();
    expect(checked.payment).toMatchObject({ state: 'credited', pay_url: null, receive: '985.00' });
    // Paying again, or opening the page again, moves nothing and goes back to the payment.
    expect((await page(payment!, card('4242 4242 4242 4242'))).statusCode).toBe(303);
    expect((await page(payment!)).statusCode).toBe(303);
    expect(await balance('RUB')).toBe(before + 98_500n);
    const [inbox] = await ctx.db.query<{ signature_valid: boolean; result: string }>(
      `SELECT signature_valid, result FROM payment_webhooks WHERE event_id = $1`,
      [`card_${payment!.id}_paid`],
    );
    expect(inbox).toEqual({ signature_valid: true, result: 'credited' });
  });

  it('card: the hosted page is drawn in the theme the BFF passes (x-obmen-theme), or the system’s for none or a bad one', async () => {
    const { payment } = await open({ ps: 'sandbox-card', currency: 'RUB', amount: '100' });
    const htmlTag = async (headers: Record<string, string>) => /<html[^>]*>/.exec((await page(payment!, undefined, headers)).body)?.[0];
    expect(await htmlTag({ 'x-obmen-theme': 'dark' })).toBe('<html lang="en" data-theme="dark">');
    expect(await htmlTag({ 'x-obmen-theme': 'light' })).toBe('<html lang="en" data-theme="light">');
    for (const theme of ['system', 'sepia', '"><script>']) expect(await htmlTag({ 'x-obmen-theme': theme })).toBe('<html lang="en">');
    expect(await htmlTag({})).toBe('<html lang="en">');
    // Within the page's submitted forms too (an error shown on the page keeps the theme).
    expect((await page(payment!, 'action=pay&card_number=1&expiry=1&cvc=1', { 'x-obmen-theme': 'dark' })).body).toMatch(/<html[^>]*data-theme="dark"/);
  });

  it('card: the decline card is declined and the check says so; a bad card, expiry or CVC is shown on the page and moves nothing', async () => {
    const { payment } = await open({ ps: 'sandbox-card', currency: 'USD', amount: '20' });
    const bad = await page(payment!, 'action=pay&card_number=4111111111111112&expiry=13%2F30&cvc=1');
    expect(bad.statusCode).toBe(200);
    expect(bad.body).toContain('Check the card number');
    expect(bad.body).toContain('Enter the date as MM/YY');
    expect(bad.body).toContain('3 or 4 digits');
    expect((await page(payment!, 'action=pay&card_number=4242424242424242&expiry=10%2F26&cvc=123')).body).toContain('The card has expired');
    expect((await check(payment!.url)).json().payment.state).toBe('created');
    const before = await balance('USD');
    expect((await page(payment!, card('4000000000000002'))).statusCode).toBe(303);
    const checked = (await check(payment!.url)).json();
    expect(checked.payment).toMatchObject({ state: 'declined', reason: 'payments.declined_by_provider' });
    expect(await balance('USD')).toBe(before);
  });

  it('card: 3-D Secure: the challenge makes the payment pending; two wrong codes are told, the right one pays; cancel declines', async () => {
    const { payment } = await open({ ps: 'sandbox-card', currency: 'EUR', amount: '100' });
    const challenge = await page(payment!, card('4000000000003220'));
    expect(challenge.statusCode).toBe(200);
    expect(challenge.body).toContain('3-D Secure');
    expect((await check(payment!.url)).json().payment.state).toBe('pending');
    expect((await page(payment!)).body).toContain('3-D Secure');
    expect((await page(payment!, 'action=challenge&code=0000')).body).toContain('Wrong code');
    expect((await page(payment!, 'action=challenge&code=1111')).body).toContain('Wrong code');
    const before = await balance('EUR');
    expect((await page(payment!, 'action=challenge&code=1234')).statusCode).toBe(303);
    expect((await check(payment!.url)).json().payment.state).toBe('credited');
    expect(await balance('EUR')).toBe(before + 9_850n);

    const cancelled = (await open({ ps: 'sandbox-card', currency: 'EUR', amount: '100' })).payment!;
    expect((await page(cancelled, 'action=cancel')).statusCode).toBe(303);
    expect((await check(cancelled.url)).json().payment.state).toBe('declined');
    const third = (await open({ ps: 'sandbox-card', currency: 'EUR', amount: '100' })).payment!;
    await page(third, card('4000000000003220'));
    for (const code of ['1', '2', '3']) await page(third, `action=challenge&code=${code}`);
    expect((await check(third.url)).json().payment.state).toBe('declined');
    expect((await ctx.app.inject({ url: '/api/payments/sandbox-card/pay/00000000-0000-4000-8000-000000000000' })).statusCode).toBe(404);
    expect((await ctx.app.inject({ url: '/api/payments/sandbox-card/page.css' })).headers['content-type']).toMatch(/^text\/css/);
  });

  it('check: only the caller sees their payment; a garbage url names nothing', async () => {
    const { payment } = await open({ ps: 'sandbox-card', currency: 'USD', amount: '5' });
    expect((await check(payment!.id)).statusCode).toBe(200);
    const foreign = await check(payment!.url, other);
    const missing = await check('/deposit/form/sandbox-card/USD?payment=00000000-0000-4000-8000-000000000000', other);
    expect(foreign.statusCode).toBe(404);
    expect(foreign.json()).toEqual(missing.json());
    expect(foreign.json()).toMatchObject({ code: 'payment_not_found', message: 'This payment was not found' });
    expect((await check('not a url')).statusCode).toBe(404);
    expect((await call(ctx.app, '/api/deposit/integration_json/check', { token: user.token, payload: {} })).json().fields).toHaveProperty('url');
    expect((await call(ctx.app, '/api/deposit/integration_json/check', { payload: { url: payment!.id } })).statusCode).toBe(401);
  });

  it('bank: details and a reference to quote; the operator marks the transfer received; another amount moves nothing', async () => {
    const { payment } = await open({ ps: 'sandbox-bank', currency: 'RUB', amount: '5000' });
    expect(payment!.bank).toMatchObject({
      bank: 'Sandbox Bank AG',
      iban: 'DE89 3704 0044 0532 0130 00',
      reference: expect.stringMatching(/^OBM-[A-Z2-9]{8}$/),
    });
    expect(Date.parse(payment!.expires_at) - NOW.getTime()).toBe(3 * 24 * 3600 * 1000);
    const before = await balance('RUB');
    const wrong = await bankReceived(ctx.db, providers, { reference: payment!.bank!.reference.toLowerCase(), amount: '4999', now: clock });
    expect(wrong).toMatchObject({ amount: '4999.00', result: 'amount_mismatch' });
    expect(await balance('RUB')).toBe(before);
    const right = await COMMANDS['payments:bank:received']!(ctx.db, [payment!.bank!.reference]);
    expect(right).toMatchObject({ amount: '5000.00', result: 'credited' });
    expect(await balance('RUB')).toBe(before + 500_000n);
    await expect(COMMANDS['payments:bank:received']!(ctx.db, ['OBM-NOTHING1'])).rejects.toThrow(/no bank deposit/);
    await expect(COMMANDS['payments:bank:received']!(ctx.db, [])).rejects.toThrow(/usage/);
  });

  it('chain: an address per user and currency in its real format with a QR code; a transaction is credited once it has its confirmations', async () => {
    const first = await open({ ps: 'sandbox-chain', currency: 'BTC' });
    expect(first.payment).toBeNull();
    const address = first.address!.address;
    expect(isAddress(addressFormatOf('BTC')!, address)).toBe(true);
    expect(first.address).toMatchObject({ confirmations: 2, min: '0.00010000' });
    expect(first.address!.qr_svg).toMatch(/^<svg[^>]*viewBox/);
    expect((await open({ ps: 'sandbox-chain', currency: 'BTC' })).address!.address).toBe(address);
    for (const currency of ['ETH', 'USDT', 'TON', 'LTC']) {
      const made = (await open({ ps: 'sandbox-chain', currency })).address!.address;
      expect(isAddress(addressFormatOf(currency)!, made), `${currency} ${made}`).toBe(true);
    }

    const before = await balance('BTC');
    const sent = await chainSend(ctx.db, providers, { outputs: [{ address, amount: '0.015' }], now: clock });
    expect(sent.outputs[0]!.result).toBe('pending');
    const [row] = await ctx.db.query<{ public_id: string }>('SELECT public_id::text AS public_id FROM payments WHERE external_id = $1', [`${sent.txid}:0`]);
    const url = `/deposit/form/sandbox-chain/BTC?payment=${row!.public_id}`;
    expect((await check(url)).json().payment).toMatchObject({ state: 'pending', confirmations: 0, required_confirmations: 2, amount: '0.01500000' });
    // Blocks come with time (the payments timer's tick), one per SANDBOX_BLOCK_MS.
    clock = new Date(clock.getTime() + SANDBOX_BLOCK_MS);
    expect(await chainTick(ctx.db, providers, clock)).toBe(1);
    expect(await chainTick(ctx.db, providers, clock)).toBe(0);
    expect((await check(url)).json().payment).toMatchObject({ state: 'pending', confirmations: 1 });
    expect(await balance('BTC')).toBe(before);
    const mined = (await COMMANDS['payments:chain:mine']!(ctx.db, ['blocks=1'])) as { reported: number };
    expect(mined.reported).toBe(1);
    expect((await check(url)).json().payment).toMatchObject({ state: 'credited', confirmations: 2 });
    expect(await balance('BTC')).toBe(before + 1_500_000n);
    // Later blocks report nothing more; a transaction to an unknown address is refused by the command.
    expect((await chainMine(ctx.db, providers, { blocks: 3, now: clock })).reported).toBe(0);
    await expect(
      chainSend(ctx.db, providers, { outputs: [{ address: 'bc1qw508d6qejxtdg4y5r3zarvary0c5xw7kv8f3t4', amount: '1' }], now: clock }),
    ).rejects.toThrow(/no sandbox-chain/);
    expect((await checkLedger(ctx.db)).violations).toEqual([]);
  });

  it('chain: one transaction paying two users’ addresses (and one of them twice) credits every output once', async () => {
    const mine = (await open({ ps: 'sandbox-chain', currency: 'LTC' })).address!.address;
    const theirs = (
      (await call(ctx.app, '/api/deposit/integration_json', { token: other.token, payload: { ps: 'sandbox-chain', currency: 'LTC' } })).json() as {
        address: { address: string };
      }
    ).address.address;
    const before = { mine: await balance('LTC'), theirs: await balance('LTC', other) };
    const sent = await chainSend(ctx.db, providers, {
      outputs: [
        { address: mine, amount: '1' },
        { address: theirs, amount: '2' },
        { address: mine, amount: '0.5' },
      ],
      now: clock,
    });
    expect(sent.outputs.map((output) => output.result)).toEqual(['pending', 'pending', 'pending']);
    await chainMine(ctx.db, providers, { blocks: 10, now: clock });
    const deposits = await ctx.db.query<{ external_id: string; state: string; user_id: string }>(
      `SELECT external_id, state, user_id::text AS user_id FROM payments WHERE external_id LIKE $1 ORDER BY external_id`,
      [`${sent.txid}:%`],
    );
    expect(deposits).toEqual([
      { external_id: `${sent.txid}:0`, state: 'credited', user_id: user.id },
      { external_id: `${sent.txid}:1`, state: 'credited', user_id: other.id },
      { external_id: `${sent.txid}:2`, state: 'credited', user_id: user.id },
    ]);
    const fee = async (external: string) =>
      BigInt((await ctx.db.query<{ fee: string }>('SELECT fee::text AS fee FROM payments WHERE external_id = $1', [external]))[0]!.fee);
    expect((await balance('LTC')) - before.mine).toBe(150_000_000n - (await fee(`${sent.txid}:0`)) - (await fee(`${sent.txid}:2`)));
    expect((await balance('LTC', other)) - before.theirs).toBe(200_000_000n - (await fee(`${sent.txid}:1`)));
    expect((await checkLedger(ctx.db)).violations).toEqual([]);
  });

  it('webhooks whose processing failed are retried with backoff from the inbox; an operator replays one; nothing is credited twice', async () => {
    const { payment } = await open({ ps: 'sandbox-card', currency: 'USD', amount: '50' });
    const before = await balance('USD');
    // The database refuses every new event for a while (a stand-in for an outage during processing).
    await ctx.db.exec(`CREATE FUNCTION pg_temp_refuse() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'refused for the test'; END $$;
      CREATE TRIGGER refuse_events BEFORE INSERT ON payment_events FOR EACH ROW EXECUTE FUNCTION pg_temp_refuse();`);
    const failed = await page(payment!, card('4242424242424242'));
    expect(failed.statusCode).toBe(500);
    const [stored] = await ctx.db.query<{ id: string; attempts: number; next_attempt_at: Date; last_error: string; processed_at: Date | null }>(
      `SELECT id::text AS id, attempts, next_attempt_at, last_error, processed_at FROM payment_webhooks WHERE event_id = $1`,
      [`card_${payment!.id}_paid`],
    );
    expect(stored).toMatchObject({ attempts: 1, processed_at: null, last_error: expect.stringContaining('refused for the test') });
    expect(stored!.next_attempt_at.getTime()).toBe(clock.getTime() + 10_000);
    // Still failing: the next attempt waits twice as long.
    expect(await processDueWebhooks(ctx.db, providers, new Date(clock.getTime() + 10_000))).toEqual({ processed: 0, failed: 1 });
    const [again] = await ctx.db.query<{ attempts: number; next_attempt_at: Date }>('SELECT attempts, next_attempt_at FROM payment_webhooks WHERE id = $1', [
      stored!.id,
    ]);
    expect(again!.attempts).toBe(2);
    expect(again!.next_attempt_at.getTime()).toBe(clock.getTime() + 10_000 + 20_000);
    expect(await processDueWebhooks(ctx.db, providers, new Date(clock.getTime() + 20_000))).toEqual({ processed: 0, failed: 0 });
    await ctx.db.exec('DROP TRIGGER refuse_events ON payment_events; DROP FUNCTION pg_temp_refuse();');
    expect(await processDueWebhooks(ctx.db, providers, new Date(clock.getTime() + 30_000))).toEqual({ processed: 1, failed: 0 });
    expect(await balance('USD')).toBe(before + 4_925n);
    expect((await check(payment!.url)).json().payment.state).toBe('credited');
    // A replay of the processed delivery is a duplicate and keeps its record.
    expect(await replayWebhook(ctx.db, providers, stored!.id, clock)).toEqual({ webhook_id: stored!.id, was_processed: true, result: 'duplicate' });
    expect(await COMMANDS['payments:webhook:replay']!(ctx.db, [stored!.id])).toMatchObject({ result: 'duplicate' });
    expect(await balance('USD')).toBe(before + 4_925n);
    const [kept] = await ctx.db.query<{ result: string }>('SELECT result FROM payment_webhooks WHERE id = $1', [stored!.id]);
    expect(kept!.result).toBe('credited');
    await expect(COMMANDS['payments:webhook:replay']!(ctx.db, ['999999999'])).rejects.toThrow(/no webhook delivery/);
    await expect(COMMANDS['payments:webhook:replay']!(ctx.db, ['x'])).rejects.toThrow(/usage/);
    const [forged] = await ctx.db.query<{ id: string }>(
      `INSERT INTO payment_webhooks (provider, raw_body, signature, signature_valid, received_at) VALUES ('sandbox-card', '\\x7b7d', 'bad', false, now()) RETURNING id::text AS id`,
    );
    await expect(replayWebhook(ctx.db, providers, forged!.id, clock)).rejects.toThrow(/not validly signed/);
    expect((await checkLedger(ctx.db)).violations).toEqual([]);
  });
});
