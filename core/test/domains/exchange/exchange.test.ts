import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ENGINES, build } from '../../helpers.ts';
import { createFixtureUser, fund, type TFixtureUser } from '../../fixtures.ts';
import { checkLedger } from '../../../src/domains/ledger/invariants.ts';
import { setRate } from '../../../src/domains/rates/service.ts';
import { postForm } from '../../auth-helpers.ts';

type TWallet = { currency: string; balance: string; last_exchange: boolean };

describe.each(ENGINES)('exchange on %s', (engine) => {
  let ctx: Awaited<ReturnType<typeof build>>;
  let alice: TFixtureUser;
  let bob: TFixtureUser;
  let seq = 0;
  const nextKey = () => `exchange-${engine}-${++seq}-${Date.now()}`;

  const headers = (user: TFixtureUser | null, idem?: string) => ({
    ...(user ? { authorization: `Bearer ${user.token}` } : {}),
    'x-obmen-locale': 'en',
    'content-type': 'application/x-www-form-urlencoded',
    ...(idem ? { 'idempotency-key': idem } : {}),
  });
  const post = (user: TFixtureUser | null, url: string, payload: Record<string, string>, idem?: string) => postForm(ctx.app, user, url, payload, idem);
  const get = (user: TFixtureUser | null, url: string) => ctx.app.inject({ url, headers: headers(user) });
  const wallets = async (user: TFixtureUser): Promise<TWallet[]> => (await get(user, '/api/wallets')).json().wallets;
  const balance = async (user: TFixtureUser, currency: string) => (await wallets(user)).find((w) => w.currency === currency)!.balance;
  const systemBalance = async (kind: string, currency: string) => {
    // House accounts are sharded by user: their sum is the house's position.
    const [row] = await ctx.db.query<{ balance: string }>(
      'SELECT coalesce(sum(balance), 0)::text AS balance FROM ledger_accounts WHERE kind = $1 AND currency = $2',
      [kind, currency],
    );
    return row!.balance;
  };

  beforeAll(async () => {
    ctx = await build(engine);
    alice = await createFixtureUser(ctx.db);
    bob = await createFixtureUser(ctx.db);
    await fund(ctx.db, alice.id, 'USDT', 1_000_000_000n); // 1000 USDT
    // A pair with round terms, so the expected figures can be worked out by hand.
    await setRate(ctx.db, { src: 'USDT', dst: 'BTC', rate: '0.00001', spread: '0.01', fee_percent: '0.001', fee_fixed: '0', min: '1', max: '500' }, new Date());
  });
  afterAll(() => ctx.close());

  it('lists pairs publicly, filtered by search', async () => {
    const all = (await get(null, '/api/exchange/list')).json();
    expect(all.pairs.length).toBe(12 * 11);
    expect(all.currencies.map((c: { code: string }) => c.code)).toContain('TON');
    const selling = (await get(null, '/api/exchange/list?search=BTC/')).json().pairs;
    expect(selling).toHaveLength(11);
    expect(selling.every((p: { src: string }) => p.src === 'BTC')).toBe(true);
    const buying = (await get(null, `/api/exchange/list?search=${encodeURIComponent('/USDT')}`)).json().pairs;
    expect(buying).toHaveLength(11);
    expect(buying.every((p: { dst: string }) => p.dst === 'USDT')).toBe(true);
    const one = (await get(null, '/api/exchange/list?search=usdt/btc')).json().pairs;
    expect(one).toEqual([
      expect.objectContaining({
        src: 'USDT',
        dst: 'BTC',
        rate: '0.0000099',
        rate_inverse: '101010.101',
        fee_percent: '0.001',
        min: '1.000000',
        max: '500.000000',
      }),
    ]);
  });

  it('shows one pair with the signed-in user balances', async () => {
    const anonymous = (await get(null, '/api/exchange/USDT/BTC')).json();
    expect(anonymous).toMatchObject({ pair: { src: 'USDT', dst: 'BTC' }, src: { code: 'USDT', precision: 6 }, dst: { code: 'BTC', precision: 8 } });
    expect(anonymous.balances).toBeUndefined();
    expect((await get(alice, '/api/exchange/USDT/BTC')).json().balances).toEqual({ src: '1000.000000', dst: '0.00000000' });
  });

  it('quotes either side, rounding in the house favour', async () => {
    const pay = await post(alice, '/api/exchange/check', { src: 'USDT', dst: 'BTC', amount: '123.456789' });
    expect(pay.statusCode).toBe(200);
    // fee = ceil(123456789 × 0.001) = 123457; net 123333332; receive = floor(net × 0.00099) = 122099 sat;
    // spent = ceil(122099 / 0.00099) = 123332324; remainder 1008 → shown fee 124465.
    expect(pay.json().quote).toMatchObject({
      src: 'USDT',
      dst: 'BTC',
      amount: '123.456789',
      amount_receive: '0.00122099',
      fee: '0.124465',
      rate: '0.0000099',
      limits: { min: '1.000000', max: '500.000000' },
      expires_in: 30,
      balance: '1000.000000',
      sufficient: true,
    });
    expect(pay.json().quote.token).toMatch(/^[A-Za-z0-9_-]{32}$/);
    const receive = await post(alice, '/api/exchange/check', { src: 'USDT', dst: 'BTC', amount_receive: '0.00122099' });
    // The smallest pay that yields 122099 sat: 123455780 (one unit less yields 122098).
    expect(receive.json().quote).toMatchObject({ amount: '123.455780', amount_receive: '0.00122099' });
    const landing = await post(null, '/api/exchange/landing', { src: 'USDT', dst: 'BTC', amount: '123.456789' });
    expect(landing.statusCode).toBe(200);
    expect(landing.json().quote).toMatchObject({ amount_receive: '0.00122099' });
    expect(landing.json().quote.token).toBeUndefined();
    expect((await post(null, '/api/exchange/check', { src: 'USDT', dst: 'BTC', amount: '1' })).statusCode).toBe(401);
  });

  it('refuses amounts outside the limits and unknown or disabled pairs, localized', async () => {
    const small = await post(alice, '/api/exchange/check', { src: 'USDT', dst: 'BTC', amount: '0.5' });
    expect(small.statusCode).toBe(422);
    expect(small.json()).toMatchObject({ code: 'amount_too_small', message: 'The minimum is 1 USDT' });
    const large = await post(alice, '/api/exchange/check', { src: 'USDT', dst: 'BTC', amount: '501' });
    expect(large.json()).toMatchObject({ code: 'amount_too_large', message: 'The maximum is 500 USDT' });
    const ru = await ctx.app.inject({
      method: 'POST',
      url: '/api/exchange/check',
      headers: { ...headers(alice), 'x-obmen-locale': 'ru' },
      payload: 'src=USDT&dst=BTC&amount=501',
    });
    expect(ru.json().message).toBe('Максимальная сумма — 500 USDT');
    await setRate(ctx.db, { src: 'USDT', dst: 'TON', enabled: 'false' }, new Date());
    const disabled = await post(alice, '/api/exchange/check', { src: 'USDT', dst: 'TON', amount: '10' });
    expect(disabled.json()).toMatchObject({ code: 'pair_unavailable', message: 'Exchange USDT → TON is not available' });
    const same = await post(alice, '/api/exchange/check', { src: 'USDT', dst: 'usdt', amount: '10' });
    expect(same.statusCode).toBe(400);
    const none = await post(alice, '/api/exchange/check', { src: 'USDT', dst: 'BTC' });
    expect(none.json().fields).toEqual({ amount: 'Enter the amount to pay or to receive' });
  });

  it('credits exactly the quoted amount through the liquidity accounts, once', async () => {
    const quote = (await post(alice, '/api/exchange/check', { src: 'USDT', dst: 'BTC', amount: '123.456789' })).json().quote;
    const idem = nextKey();
    const res = await post(alice, '/api/exchange/USDT/BTC', { quote: quote.token }, idem);
    expect(res.statusCode).toBe(200);
    const body = res.json();
    expect(body).toMatchObject({
      status: 'ok',
      message: 'Exchanged 123.456789 USDT for 0.00122099 BTC',
      exchange: { src: 'USDT', dst: 'BTC', amount: '123.456789', amount_receive: '0.00122099', fee: '0.124465', rate: '0.0000099', status: 'completed' },
    });
    const btc = body.wallets.find((w: TWallet) => w.currency === 'BTC');
    expect(btc).toMatchObject({ balance: '0.00122099', last_exchange: true });
    expect(body.wallets.find((w: TWallet) => w.currency === 'USDT')).toMatchObject({ balance: '876.543211', last_exchange: false });
    expect(await systemBalance('liquidity', 'BTC')).toBe('-122099');
    expect(await systemBalance('liquidity', 'USDT')).toBe('123332324');
    expect(await systemBalance('fees', 'USDT')).toBe('124465');

    const [legs] = await ctx.db.query<{ src_tx: string; dst_tx: string }>(
      'SELECT src_transaction_id::text AS src_tx, dst_transaction_id::text AS dst_tx FROM exchanges WHERE id = $1',
      [body.exchange.id],
    );
    expect(legs!.src_tx).not.toBe(legs!.dst_tx);

    const replay = await post(alice, '/api/exchange/USDT/BTC', { quote: quote.token }, idem);
    expect(replay.statusCode).toBe(200);
    expect(replay.headers['idempotent-replayed']).toBe('true');
    expect(replay.json().exchange).toEqual(body.exchange);

    const reused = await post(alice, '/api/exchange/USDT/BTC', { quote: quote.token }, nextKey());
    expect(reused.statusCode).toBe(409);
    expect(reused.json()).toMatchObject({ code: 'quote_used', message: 'This quote has already been used. Here is a fresh one.' });
    expect(reused.json().quote).toMatchObject({ src: 'USDT', dst: 'BTC', amount: '123.456789', amount_receive: '0.00122099' });
    expect(reused.json().quote.token).not.toBe(quote.token);
    expect(await balance(alice, 'BTC')).toBe('0.00122099');

    const status = await get(alice, `/api/exchange/status/${body.exchange.id}`);
    expect(status.json().exchange).toEqual(body.exchange);
    // Another user's exchange answers exactly like a missing or malformed id: nothing tells them apart.
    const others = await get(bob, `/api/exchange/status/${body.exchange.id}`);
    expect(others.statusCode).toBe(404);
    expect(others.json()).toEqual({ status: 'error', code: 'exchange_not_found', message: 'This exchange was not found' });
    for (const id of ['999999999999', 'abc', '1'.repeat(19)]) {
      const missing = await get(bob, `/api/exchange/status/${id}`);
      expect([missing.statusCode, missing.body]).toEqual([404, others.body]);
    }
  });

  it('refuses an expired quote with a fresh one, and a quote for another pair or user', async () => {
    const quote = (await post(alice, '/api/exchange/check', { src: 'USDT', dst: 'BTC', amount_receive: '0.0001' })).json().quote;
    await ctx.db.query(`UPDATE exchange_quotes SET expires_at = now() - interval '1 second' WHERE expires_at > now()`);
    const expired = await post(alice, '/api/exchange/USDT/BTC', { quote: quote.token }, nextKey());
    expect(expired.statusCode).toBe(409);
    expect(expired.json()).toMatchObject({ code: 'quote_expired', quote: { amount_receive: '0.00010000' } });
    const fresh = expired.json().quote;
    const wrongPair = await post(alice, '/api/exchange/USDT/ETH', { quote: fresh.token }, nextKey());
    expect(wrongPair.json().code).toBe('quote_invalid');
    const wrongUser = await post(bob, '/api/exchange/USDT/BTC', { quote: fresh.token }, nextKey());
    expect(wrongUser.json().code).toBe('quote_invalid');
    const ok = await post(alice, '/api/exchange/USDT/BTC', { quote: fresh.token }, nextKey());
    expect(ok.statusCode).toBe(200);
    expect(ok.json().exchange.amount_receive).toBe('0.00010000');
  });

  it('a quote is used once even when confirmed 10 times at once', async () => {
    const quote = (await post(alice, '/api/exchange/check', { src: 'USDT', dst: 'BTC', amount: '10' })).json().quote;
    const before = await balance(alice, 'BTC');
    const answers = await Promise.all(Array.from({ length: 10 }, () => post(alice, '/api/exchange/USDT/BTC', { quote: quote.token }, nextKey())));
    expect(answers.filter((a) => a.statusCode === 200)).toHaveLength(1);
    expect(answers.filter((a) => a.statusCode === 409).every((a) => a.json().code === 'quote_used')).toBe(true);
    const after = await balance(alice, 'BTC');
    expect(BigInt(after.replace('.', '')) - BigInt(before.replace('.', ''))).toBe(BigInt(quote.amount_receive.replace('.', '')));
  });

  it('refuses an exchange the balance does not cover, and the quote stays usable', async () => {
    const quote = (await post(bob, '/api/exchange/check', { src: 'USDT', dst: 'BTC', amount: '10' })).json().quote;
    expect(quote.sufficient).toBe(false);
    const poor = await post(bob, '/api/exchange/USDT/BTC', { quote: quote.token }, nextKey());
    expect(poor.statusCode).toBe(422);
    expect(poor.json()).toMatchObject({ code: 'insufficient_funds', message: 'Not enough USDT: the balance is 0, 10 is needed' });
    await fund(ctx.db, bob.id, 'USDT', 10_000_000n);
    const ok = await post(bob, '/api/exchange/USDT/BTC', { quote: quote.token }, nextKey());
    expect(ok.statusCode).toBe(200);
    expect(await balance(bob, 'USDT')).toBe('0.000000');
  });

  it('converts all wallets into one currency, leg by leg, reporting each honestly', async () => {
    const carol = await createFixtureUser(ctx.db);
    await fund(ctx.db, carol.id, 'BTC', 100_000n); // 0.001 BTC
    await fund(ctx.db, carol.id, 'ETH', 500_000_000_000_000_000n); // 0.5 ETH
    await fund(ctx.db, carol.id, 'TRX', 1n); // dust: below the TRX→USDT minimum
    await fund(ctx.db, carol.id, 'LTC', 100_000_000n); // 1 LTC: its leg will fail while posting
    const preview = await get(carol, '/api/exchange/all/USDT');
    expect(preview.statusCode).toBe(200);
    expect(preview.json().preview.legs.map((l: { src: string; status: string }) => [l.src, l.status])).toEqual([
      ['BTC', 'planned'],
      ['ETH', 'planned'],
      ['LTC', 'planned'],
      ['TRX', 'unavailable'],
    ]);
    expect((await get(carol, '/api/exchange/all')).json().currency).toBe('USDT');

    // Make the LTC leg fail inside the database, after its checks passed.
    await ctx.db.exec(`CREATE FUNCTION test_fail_ltc() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN IF NEW.src = 'LTC' AND NEW.status = 'completed' THEN
        RAISE EXCEPTION 'currency_disabled' USING ERRCODE = 'OB000', DETAIL = '{"currency":"LTC"}'; END IF; RETURN NEW; END $$;
      CREATE TRIGGER test_fail_ltc BEFORE INSERT ON exchanges FOR EACH ROW EXECUTE FUNCTION test_fail_ltc();`);
    const idem = nextKey();
    const res = await post(carol, '/api/exchange/all/USDT', {}, idem);
    await ctx.db.exec('DROP TRIGGER test_fail_ltc ON exchanges; DROP FUNCTION test_fail_ltc();');
    expect(res.statusCode).toBe(200);
    const { batch } = res.json();
    expect(batch.status).toBe('partial');
    expect(res.json().message).toMatch(/^Partly converted: [\d,]+\.\d+ USDT received/);
    const legs = Object.fromEntries(batch.legs.map((l: { src: string }) => [l.src, l]));
    expect(legs.BTC).toMatchObject({ status: 'completed', amount: '0.00100000' });
    expect(legs.ETH).toMatchObject({ status: 'completed', amount: '0.500000000000000000' });
    expect(legs.LTC).toMatchObject({ status: 'failed', error_code: 'currency_disabled', error: 'LTC is not available right now' });
    expect(legs.TRX).toMatchObject({ status: 'unavailable', error_code: 'amount_too_small' });
    expect(legs.TRX.error).toMatch(/^The minimum is \d+(\.\d*[1-9])? TRX$/);
    const after = Object.fromEntries((res.json().wallets as TWallet[]).map((w) => [w.currency, w.balance]));
    expect(after).toMatchObject({ BTC: '0.00000000', ETH: '0.000000000000000000', LTC: '1.00000000', TRX: '0.000001' });
    const received = BigInt(legs.BTC.amount_receive.replace('.', '')) + BigInt(legs.ETH.amount_receive.replace('.', ''));
    expect(after.USDT).toBe(batch.amount_receive);
    expect(BigInt(after.USDT!.replace('.', ''))).toBe(received);

    const replay = await post(carol, '/api/exchange/all/USDT', {}, idem);
    expect(replay.headers['idempotent-replayed']).toBe('true');
    expect(replay.json().batch).toEqual(batch);
    const status = await get(carol, `/api/exchange/all/status/${batch.id}`);
    expect(status.json().batch).toEqual(batch);
    const others = await get(alice, `/api/exchange/all/status/${batch.id}`);
    expect(others.statusCode).toBe(404);
    expect(others.json()).toEqual({ status: 'error', code: 'exchange_batch_not_found', message: 'This exchange of all balances was not found' });
    for (const id of ['999999999999', 'x1']) expect((await get(alice, `/api/exchange/all/status/${id}`)).body).toBe(others.body);

    // A chosen set only, via POST /api/exchange/all with the currency in the form.
    const only = await post(carol, '/api/exchange/all', { currency: 'BTC', currencies: 'LTC' }, nextKey());
    expect(only.json().batch).toMatchObject({ currency: 'BTC', status: 'completed', legs: [expect.objectContaining({ src: 'LTC', status: 'completed' })] });
    const empty = await post(carol, '/api/exchange/all/LTC', { currencies: 'LTC,BTC' }, nextKey());
    expect(empty.json().batch.legs.map((l: { src: string }) => l.src)).toEqual(['BTC']);
  });

  it('leaves a consistent ledger', async () => {
    expect((await checkLedger(ctx.db)).violations).toEqual([]);
  });
});
