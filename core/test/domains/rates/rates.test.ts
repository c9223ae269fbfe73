import { createServer, type Server } from 'node:http';
import { execFile } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { divFloor, parseDecimal, pow10 } from '@obmen/shared';
import { ENGINES, build, until } from '../../helpers.ts';
import { quoteFromPay, quoteFromReceive } from '../../../src/domains/rates/quote.ts';
import { describeRates, listPairs, matchesSearch, setRate, syncRates } from '../../../src/domains/rates/service.ts';
import { FeedRateSource, TableRateSource, jsonNumberToRational } from '../../../src/domains/rates/source.ts';
import { openDb } from '../../../src/db/index.ts';
import { migrate } from '../../../src/db/migrate.ts';
import { seedDemoData } from '../../../src/seed/demo.ts';
import { createFixtureUser, pairTerms } from '../../fixtures.ts';
import { forgetCurrencies } from '../../../src/domains/currencies/service.ts';

const terms = pairTerms;

/** A tiny seeded PRNG for the property checks. */
function prng(seed: number) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = Math.imul(a ^ (a >>> 15), a | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

describe('quote arithmetic (the rounding rule)', () => {
  it('rounds the receive amount down, the fee up, and books the remainder as fee', () => {
    const q = quoteFromPay(terms({ rate: '0.00001', spread: '0.01' }), { src: 6, dst: 8 }, 123_456_789n);
    expect(q).toEqual({
      pay: 123_456_789n,
      fee: 123_457n,
      spent: 123_332_324n,
      remainder: 1008n,
      receive: 122_099n,
      rate: '0.0000099',
      rateInverse: '101010.101',
    });
  });

  it('holds for random pairs, precisions and amounts, both ways', () => {
    const random = prng(20260101);
    let checked = 0;
    for (let i = 0; i < 2000; i++) {
      const srcPrecision = [0, 2, 6, 8, 9, 18][Math.floor(random() * 6)]!;
      const dstPrecision = [0, 2, 6, 8, 9, 18][Math.floor(random() * 6)]!;
      const rate = `${Math.floor(random() * 100000)}.${String(Math.floor(random() * 1e9)).padStart(9, '0')}`;
      const t = terms({
        rate: rate.startsWith('0.') && /^0\.0+$/.test(rate) ? '1' : rate === '0.000000000' ? '1' : rate,
        spread: `0.00${Math.floor(random() * 9)}`,
        feePercent: `0.00${Math.floor(random() * 5)}`,
        feeFixed: BigInt(Math.floor(random() * 3)),
      });
      if (parseDecimal(t.rate).num === 0n) continue;
      const precision = { src: srcPrecision, dst: dstPrecision };
      const pay = BigInt(Math.floor(random() * 1e9) + 1) * pow10(Math.floor(random() * 6));
      let q;
      try {
        q = quoteFromPay(t, precision, pay);
      } catch (err) {
        // Only "too small to yield one minor unit" may skip a case; anything else fails the test.
        expect(err).toMatchObject({ code: 'amount_too_small' });
        continue;
      }
      checked++;
      // Exact value of (pay − fee) × user rate in dst minor units, as a fraction n/d.
      const mid = parseDecimal(t.rate);
      const spread = parseDecimal(t.spread);
      const n = (q.pay - q.fee) * mid.num * (pow10(spread.scale) - spread.num) * pow10(dstPrecision);
      const d = pow10(mid.scale + spread.scale + srcPrecision);
      expect(q.receive).toBe(divFloor(n, d)); // rounded down
      expect(q.pay).toBe(q.fee + q.spent + q.remainder);
      expect(q.remainder >= 0n && q.spent > 0n).toBe(true);
      // spent is the least src amount that buys `receive` at the user rate: one unit less buys less.
      const buys = (src: bigint) => divFloor(src * mid.num * (pow10(spread.scale) - spread.num) * pow10(dstPrecision), d);
      expect(buys(q.spent)).toBe(q.receive);
      expect(buys(q.spent - 1n) < q.receive).toBe(true);
      // Asking for that receive amount costs at most what was paid, and one unit less is not enough.
      const back = quoteFromReceive(t, precision, q.receive);
      expect(back.receive >= q.receive).toBe(true);
      expect(back.pay <= q.pay).toBe(true);
      let short;
      try {
        short = quoteFromPay(t, precision, back.pay - 1n).receive;
      } catch (err) {
        expect(err).toMatchObject({ code: 'amount_too_small' });
        short = 0n;
      }
      expect(short < q.receive).toBe(true);
    }
    // The skips must not hollow the property out: most random cases are checked in full.
    expect(checked).toBeGreaterThan(1500);
  });

  it('refuses amounts outside the limits or too small to yield anything', () => {
    expect(() => quoteFromPay(terms({ min: 1_000_000n }), { src: 6, dst: 8 }, 999_999n)).toThrowError(/amount_too_small/);
    expect(() => quoteFromPay(terms({ max: 5_000_000n }), { src: 6, dst: 8 }, 5_000_001n)).toThrowError(/amount_too_large/);
    expect(() => quoteFromPay(terms({ feeFixed: 10n }), { src: 6, dst: 8 }, 10n)).toThrowError(/amount_too_small/);
    expect(quoteFromPay(terms({ feePercent: '0' }), { src: 2, dst: 8 }, 100n).receive).toBe(1530n);
    expect(() => quoteFromPay(terms({ rate: '0.0000001' }), { src: 2, dst: 2 }, 100n)).toThrowError(/amount_too_small/);
  });

  it('reads search like the exchanges page', () => {
    const pair = { src: 'BTC', dst: 'USDT' };
    expect(['', 'BTC/', '/USDT', 'btc/usdt', 'BTC', 'USDT'].map((s) => matchesSearch(pair, s || undefined))).toEqual([true, true, true, true, true, true]);
    expect(['ETH/', '/BTC', 'BTC/ETH', 'ETH'].map((s) => matchesSearch(pair, s))).toEqual([false, false, false, false]);
  });

  it('reads JSON numbers exactly', () => {
    expect(jsonNumberToRational('65000.12')).toEqual({ n: 6500012n, d: 100n });
    expect(jsonNumberToRational('1.5e-5')).toEqual({ n: 15n, d: 1000000n });
    expect(jsonNumberToRational('2E+3')).toEqual({ n: 2000n, d: 1n });
    expect(jsonNumberToRational('abc')).toBeNull();
  });
});

/** A fake CoinGecko on 127.0.0.1: no internet needed. */
function fakeFeed() {
  const state = { calls: 0, fail: false, body: '' };
  state.body = JSON.stringify({
    bitcoin: { usd: 70000, eur: 64000.5, rub: 6300000, kzt: 31000000, uah: 2800000 },
    ethereum: { usd: 3500.25 },
    tether: { usd: 1.0001, eur: 0.92, rub: 90, kzt: 450, uah: 40 },
    'usd-coin': { usd: 0.9999 },
    'the-open-network': { usd: 6.1 },
    litecoin: { usd: 80 },
    tron: { usd: 1.2e-1 },
  });
  const server: Server = createServer((req, res) => {
    state.calls++;
    if (state.fail || !req.url?.startsWith('/api/v3/simple/price?ids=')) {
      res.writeHead(503).end();
      return;
    }
    res.writeHead(200, { 'content-type': 'application/json' }).end(state.body);
  });
  return {
    state,
    start: () =>
      new Promise<string>((resolve) => server.listen(0, '127.0.0.1', () => resolve(`http://127.0.0.1:${(server.address() as { port: number }).port}/api/v3`))),
    stop: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

describe.each(ENGINES)('rate sources on %s', (engine) => {
  let ctx: Awaited<ReturnType<typeof build>>;
  const feed = fakeFeed();
  let feedUrl: string;
  beforeAll(async () => {
    feedUrl = await feed.start();
    ctx = await build(engine, { RATES_FEED_URL: feedUrl });
  });
  afterAll(async () => {
    await ctx.close();
    await feed.stop();
  });

  it('the table source serves the seeded pairs and the operator changes them', async () => {
    const table = new TableRateSource(ctx.db);
    expect((await table.pairs()).length).toBe(132);
    expect(await table.pair('BTC', 'USDT')).toMatchObject({ rate: '65000', spread: '0.005', feePercent: '0.001', min: 2000n, max: 200_000_000n });
    await setRate(ctx.db, { src: 'BTC', dst: 'USDT', rate: '66000.5', spread: '0.004', min: '0.0001', max: 'none' }, new Date());
    expect(await table.pair('BTC', 'USDT')).toMatchObject({ rate: '66000.5', spread: '0.004', min: 10_000n, max: null, source: 'operator' });
    await setRate(ctx.db, { src: 'BTC', dst: 'USDT', enabled: 'false' }, new Date());
    expect(await table.pair('BTC', 'USDT')).toBeNull();
    await setRate(ctx.db, { src: 'BTC', dst: 'USDT', enabled: 'true' }, new Date());
    await expect(setRate(ctx.db, { src: 'BTC', dst: 'USDT', spread: '1.5' }, new Date())).rejects.toThrow(/spread/);
    await expect(setRate(ctx.db, { src: 'BTC', dst: 'USDT', min: '0.000000001' }, new Date())).rejects.toThrow(/min/);
    await expect(setRate(ctx.db, { src: 'BTC', dst: 'XXX', rate: '1' }, new Date())).rejects.toMatchObject({
      code: 'unknown_currency',
      vars: { currency: 'XXX' },
    });
    await expect(setRate(ctx.db, { src: 'BTC', dst: 'USDT', rate: '-1' }, new Date())).rejects.toThrow();
    expect((await describeRates(ctx.db, 'BTC/USDT'))[0]).toMatchObject({ rate: '66000.5', min_amount: '0.00010000', max_amount: null });
  });

  it('the kept list of pairs follows every change of a rate or a currency, whoever makes it', async () => {
    const table = new TableRateSource(ctx.db);
    const btcUsdt = async () => (await table.pairs()).find((pair) => pair.src === 'BTC' && pair.dst === 'USDT');
    const before = await table.pairs();
    expect(await table.pairs()).toBe(before);
    await setRate(ctx.db, { src: 'BTC', dst: 'USDT', rate: '67000' }, new Date());
    expect(await btcUsdt()).toMatchObject({ rate: '67000' });
    // Plain SQL from another tool, and another core's table source reading the same database.
    await ctx.db.query(`UPDATE rates SET rate = 68000 WHERE src = 'BTC' AND dst = 'USDT'`);
    expect(await btcUsdt()).toMatchObject({ rate: '68000' });
    expect((await new TableRateSource(ctx.db).pairs()).find((pair) => pair.src === 'BTC' && pair.dst === 'USDT')).toMatchObject({ rate: '68000' });
    await ctx.db.query(`UPDATE currencies SET enabled = false WHERE code = 'TRX'`);
    try {
      expect((await table.pairs()).some((pair) => pair.src === 'TRX' || pair.dst === 'TRX')).toBe(false);
    } finally {
      await ctx.db.query(`UPDATE currencies SET enabled = true WHERE code = 'TRX'`);
      forgetCurrencies(ctx.db);
    }
    expect((await table.pairs()).length).toBe(before.length);
    // A rolled-back change leaves the kept list as it was.
    await ctx.db
      .transaction(async (tx) => {
        await tx.query(`UPDATE rates SET rate = 1 WHERE src = 'BTC' AND dst = 'USDT'`);
        throw new Error('roll back');
      })
      .catch(() => {});
    expect(await btcUsdt()).toMatchObject({ rate: '68000' });
    // The public list made from it follows too.
    const listed = async () => (await listPairs(ctx.db, table, 'BTC/USDT'))[0]!.rate;
    const shown = await listed();
    await ctx.db.query(`UPDATE rates SET rate = 70000 WHERE src = 'BTC' AND dst = 'USDT'`);
    expect(Number(await listed())).toBeGreaterThan(Number(shown));
  });

  it('the feed source takes mid rates from a CoinGecko-shaped price feed, terms from the table', async () => {
    const source = new FeedRateSource({ url: feedUrl, table: new TableRateSource(ctx.db), ttlMs: 60_000 });
    const btc = await source.pair('BTC', 'USDT');
    // 70000 / 1.0001, 18 significant digits, rounded down
    expect(btc).toMatchObject({ rate: '69993.0006999300069', spread: '0.004', source: 'feed' });
    // 1 EUR = tether.usd / tether.eur USD = 1.0001 / 0.92
    expect((await source.pair('EUR', 'USD'))!.rate).toBe('1.08706521739130434');
    expect((await source.pair('TRX', 'USD'))!.rate).toBe('0.12');
    const calls = feed.state.calls;
    expect((await source.pairs()).length).toBe(132);
    expect(feed.state.calls).toBe(calls); // cached
  });

  it('keeps recent prices when the feed fails, then refuses to quote', async () => {
    const source = new FeedRateSource({ url: feedUrl, table: new TableRateSource(ctx.db), ttlMs: 0, maxAgeMs: 60_000 });
    expect(await source.pair('LTC', 'USDT')).not.toBeNull();
    feed.state.fail = true;
    expect(await source.pair('LTC', 'USDT')).not.toBeNull();
    source.options.maxAgeMs = 0;
    await expect(source.pair('LTC', 'USDT')).rejects.toMatchObject({ code: 'rates_unavailable', statusCode: 503 });
    feed.state.fail = false;
  });

  it('the app quotes from the feed when RATES_FEED_URL is set, and rates:sync copies it into the table', async () => {
    const list = await ctx.app.inject({ url: '/api/exchange/list?search=LTC/USD', headers: { 'x-obmen-locale': 'en' } });
    // mid 80 (feed), user rate 80 × (1 − 0.005)
    expect(list.json().pairs).toEqual([expect.objectContaining({ src: 'LTC', dst: 'USD', rate: '79.6' })]);
    const landing = await ctx.app.inject({ method: 'POST', url: '/api/exchange/landing', payload: { src: 'LTC', dst: 'USD', amount: '1' } });
    expect(landing.json().quote).toMatchObject({ amount: '1.00000000', amount_receive: '79.52' });
    // The fetch was a tick of every pair's history (recorded beside the answer, not in its way).
    const candle = await until('the feed tick in the history', async () => {
      const [row] = await ctx.db.query<{ close: string }>(
        `SELECT close::text AS close FROM rate_candles WHERE src = 'LTC' AND dst = 'USD' AND interval = '1d'`,
      );
      return row;
    });
    expect(candle.close).toBe('80');
    const updated = await syncRates(ctx.db, new FeedRateSource({ url: feedUrl, table: new TableRateSource(ctx.db) }), new Date());
    expect(updated).toBe(132);
    expect(await new TableRateSource(ctx.db).pair('LTC', 'USD')).toMatchObject({ rate: '80', source: 'feed' });
  });
});

describe('operator commands', () => {
  it('rates:set, balance:credit (its usage) and ledger:check work from the command line', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'obmen-cli-'));
    try {
      const db = await openDb({ DATA_DIR: dir, DB_POOL_SIZE: 1 }, { error: () => {}, warn: () => {}, info: () => {} });
      await migrate(db);
      await seedDemoData(db, { demoAccount: false, sandboxCatalogue: true });
      const user = await createFixtureUser(db);
      await db.close();
      const { DATABASE_URL: _ignored, ...env } = process.env;
      const run = (...args: string[]) =>
        promisify(execFile)(process.execPath, ['core/src/cli.ts', ...args], { env: { ...env, DATA_DIR: dir }, cwd: join(import.meta.dirname, '../../../..') });
      const set = JSON.parse((await run('rates:set', 'TON', 'USDT', 'rate=6.25', 'spread=0.01', 'fee_percent=0', 'min=1', 'max=none')).stdout);
      expect(set).toEqual([expect.objectContaining({ src: 'TON', dst: 'USDT', rate: '6.25', spread: '0.01', min_amount: '1.000000000', max_amount: null })]);
      // Without a named operator a credit is not even proposed (four eyes: core/test/cli/ledger.test.ts).
      await expect(run('balance:credit', String(user.accountId), 'TON', '12.5', 'welcome', 'bonus')).rejects.toMatchObject({
        stderr: expect.stringContaining('usage: balance:credit'),
      });
      const check = JSON.parse((await run('ledger:check')).stdout);
      expect(check).toMatchObject({ ok: true, violations: [] });
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  }, 60_000);
});
