import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TRateSummary } from '@obmen/shared';
import { ENGINES, build } from '../../helpers.ts';
import { setRate } from '../../../src/domains/rates/service.ts';
import { purgeRateCandles, rateCandles, recordRates } from '../../../src/domains/rates/history.ts';

/** Candles made from a sequence of rate changes, on the injected clock (January 2026, before any seed). */
describe.each(ENGINES)('rate history on %s', (engine) => {
  let ctx: Awaited<ReturnType<typeof build>>;
  let clock = new Date('2026-01-10T10:00:00Z');
  const at = (iso: string) => (clock = new Date(iso));
  const candles = (interval: '1m' | '1h' | '1d', from: string, to: string, src = 'BTC', dst = 'USDT') =>
    rateCandles(ctx.db, src, dst, { interval, from, to }, clock);
  const flat = (time: string, rate: string) => ({ time, open: rate, high: rate, low: rate, close: rate });

  beforeAll(async () => {
    ctx = await build(engine, {}, { now: () => clock });
    // Ticks through each path: the operator's rates:set, and a tick as a feed fetch records it.
    at('2026-01-10T10:00:30Z');
    await setRate(ctx.db, { src: 'BTC', dst: 'USDT', rate: '65000' }, clock);
    at('2026-01-10T10:00:50Z');
    await setRate(ctx.db, { src: 'BTC', dst: 'USDT', rate: '65500.25' }, clock);
    // Exactly on a minute's boundary: the next bucket.
    at('2026-01-10T10:01:00Z');
    await recordRates(ctx.db, [{ src: 'BTC', dst: 'USDT', rate: '64000' }], clock);
    at('2026-01-10T10:01:59.999Z');
    await setRate(ctx.db, { src: 'BTC', dst: 'USDT', rate: '66000' }, clock);
    // A change of terms only is no tick.
    await setRate(ctx.db, { src: 'BTC', dst: 'USDT', spread: '0.004' }, clock);
    // A gap of three minutes, then one more change.
    at('2026-01-10T10:05:10Z');
    await setRate(ctx.db, { src: 'BTC', dst: 'USDT', rate: '65000' }, clock);
    at('2026-01-10T10:06:30Z');
  });
  afterAll(async () => {
    await ctx.close();
  });

  it('minute candles: open, high, low and close per bucket, boundaries in the next one, gaps flat at the close before', async () => {
    expect(await candles('1m', '2026-01-10T09:58:00Z', '2026-01-10T10:06:00Z')).toEqual([
      { time: '2026-01-10T10:00:00.000Z', open: '65000', high: '65500.25', low: '65000', close: '65500.25' },
      { time: '2026-01-10T10:01:00.000Z', open: '64000', high: '66000', low: '64000', close: '66000' },
      flat('2026-01-10T10:02:00.000Z', '66000'),
      flat('2026-01-10T10:03:00.000Z', '66000'),
      flat('2026-01-10T10:04:00.000Z', '66000'),
      { time: '2026-01-10T10:05:00.000Z', open: '65000', high: '65000', low: '65000', close: '65000' },
      flat('2026-01-10T10:06:00.000Z', '65000'),
    ]);
  });

  it('a range that starts after a change opens at the close before it, and never runs past now', async () => {
    const range = await candles('1m', '2026-01-10T10:03:20Z', '2026-01-10T12:00:00Z');
    expect(range[0]).toEqual(flat('2026-01-10T10:03:00.000Z', '66000'));
    expect(range.at(-1)!.time).toBe('2026-01-10T10:06:00.000Z');
    expect(range).toHaveLength(4);
  });

  it('hour and day candles hold the whole sequence', async () => {
    const hour = { time: '2026-01-10T10:00:00.000Z', open: '65000', high: '66000', low: '64000', close: '65000' };
    expect(await candles('1h', '2026-01-10T09:00:00Z', '2026-01-10T10:59:59Z')).toEqual([hour]);
    expect(await candles('1d', '2026-01-01T00:00:00Z', '2026-01-10T23:00:00Z')).toEqual([{ ...hour, time: '2026-01-10T00:00:00.000Z' }]);
  });

  it('a late tick (another core, an earlier clock) widens high and low but never replaces a newer close or an older open', async () => {
    await recordRates(ctx.db, [{ src: 'BTC', dst: 'USDT', rate: '70000' }], new Date('2026-01-10T10:00:40Z'));
    await recordRates(ctx.db, [{ src: 'BTC', dst: 'USDT', rate: '60000' }], new Date('2026-01-10T10:00:10Z'));
    expect((await candles('1m', '2026-01-10T10:00:00Z', '2026-01-10T10:00:00Z'))[0]).toEqual({
      time: '2026-01-10T10:00:00.000Z',
      open: '60000',
      high: '70000',
      low: '60000',
      close: '65500.25',
    });
    expect((await candles('1h', '2026-01-10T10:00:00Z', '2026-01-10T10:00:00Z'))[0]).toMatchObject({ open: '60000', high: '70000', close: '65000' });
  });

  it('a pair without a change recorded in the range has nothing before its rate was set', async () => {
    expect(await candles('1m', '2026-01-10T10:00:00Z', '2026-01-10T10:06:00Z', 'ETH', 'USDT')).toEqual([]);
  });

  it('the pairs list: each pair’s hourly closes over the last day and its change since the rate a day ago', async () => {
    await recordRates(ctx.db, [{ src: 'ETH', dst: 'BTC', rate: '0.05' }], new Date('2026-01-09T08:30:00Z'));
    await recordRates(ctx.db, [{ src: 'ETH', dst: 'BTC', rate: '0.055' }], new Date('2026-01-10T09:15:00Z'));
    const response = await ctx.app.inject({ method: 'GET', url: '/api/exchange/rates' });
    expect(response.statusCode).toBe(200);
    const pairs = response.json().pairs as TRateSummary[];
    expect(pairs).toHaveLength(132);
    expect(pairs.find((pair) => pair.src === 'ETH' && pair.dst === 'BTC')).toEqual({
      src: 'ETH',
      dst: 'BTC',
      open: '0.05',
      change: '0.10000000',
      points: [...Array(22).fill('0.05'), '0.055', '0.055'],
    });
    // No history before the day: the closes it has, no change.
    expect(pairs.find((pair) => pair.src === 'BTC' && pair.dst === 'USDT')).toMatchObject({ open: null, change: null, points: ['65000'] });
  });

  it('the purge keeps minutes a week and hours and days a year', async () => {
    at('2026-01-18T00:00:00Z');
    await purgeRateCandles(ctx.db, clock);
    expect(await candles('1m', '2026-01-10T10:00:00Z', '2026-01-10T10:06:00Z')).toEqual([]);
    expect(await candles('1h', '2026-01-10T10:00:00Z', '2026-01-10T12:00:00Z')).toHaveLength(3);
    at('2027-01-12T00:00:00Z');
    await purgeRateCandles(ctx.db, clock);
    expect(await candles('1d', '2026-01-10T00:00:00Z', '2026-01-12T00:00:00Z')).toEqual([]);
    at('2026-01-10T10:06:30Z');
  });

  describe('GET /api/exchange/rates/{src}/{dst}', () => {
    const get = (path: string, locale = 'en') => ctx.app.inject({ method: 'GET', url: path, headers: { 'x-obmen-locale': locale } });

    it('answers candles', async () => {
      await setRate(ctx.db, { src: 'ETH', dst: 'USDT', rate: '3100' }, clock);
      const response = await get('/api/exchange/rates/eth/usdt?interval=1m&from=2026-01-10T10:05:00Z&to=2026-01-10T10:07:00Z');
      expect(response.statusCode).toBe(200);
      expect(response.json()).toEqual({ status: 'ok', src: 'ETH', dst: 'USDT', interval: '1m', candles: [flat('2026-01-10T10:06:00.000Z', '3100')] });
    });

    it('refuses bad ranges clearly, in the reader’s language', async () => {
      const backwards = await get('/api/exchange/rates/BTC/USDT?interval=1m&from=2026-01-10T10:05:00Z&to=2026-01-10T10:00:00Z');
      expect(backwards.statusCode).toBe(400);
      expect(backwards.json().fields).toEqual({ from: 'The start of the range comes after its end.' });
      const ru = await get('/api/exchange/rates/BTC/USDT?interval=1m&from=2026-01-10T10:05:00Z&to=2026-01-10T10:00:00Z', 'ru');
      expect(ru.json().fields).toEqual({ from: 'Начало периода позже его конца.' });
      // 1501 minutes.
      const long = await get('/api/exchange/rates/BTC/USDT?interval=1m&from=2026-01-09T10:00:00Z&to=2026-01-10T11:00:00Z');
      expect(long.statusCode).toBe(400);
      expect(long.json().fields).toEqual({ from: 'Too many candles for one request: at most 1500.' });
      // Exactly 1500 is fine.
      expect((await get('/api/exchange/rates/BTC/USDT?interval=1m&from=2026-01-09T10:00:00Z&to=2026-01-10T10:59:00Z')).statusCode).toBe(200);
      const interval = await get('/api/exchange/rates/BTC/USDT?interval=5m&from=2026-01-10T10:00:00Z&to=2026-01-10T11:00:00Z');
      expect(interval.statusCode).toBe(400);
      expect(interval.json().fields).toEqual({ interval: 'The interval is one of 1m, 1h and 1d.' });
      const time = await get('/api/exchange/rates/BTC/USDT?interval=1h&from=yesterday&to=2026-01-10T11:00:00Z');
      expect(time.json().fields).toEqual({ from: 'Give a time like 2026-05-01T12:00:00Z.' });
      const missing = await get('/api/exchange/rates/BTC/USDT?interval=1h');
      expect(missing.statusCode).toBe(400);
      expect(missing.json().fields).toMatchObject({ from: 'This field is required.', to: 'This field is required.' });
    });

    it('an unknown or disabled pair is not found', async () => {
      const range = 'interval=1h&from=2026-01-10T10:00:00Z&to=2026-01-10T11:00:00Z';
      for (const path of ['BTC/XXX', 'BTC/BTC', 'B!/USDT']) {
        const response = await get(`/api/exchange/rates/${path}?${range}`);
        expect(response.statusCode, path).toBe(404);
        expect(response.json()).toMatchObject({ status: 'error', code: 'pair_not_found', message: 'There is no such pair.' });
      }
      await setRate(ctx.db, { src: 'TON', dst: 'USDT', enabled: 'false' }, clock);
      expect((await get(`/api/exchange/rates/TON/USDT?${range}`)).statusCode).toBe(404);
    });
  });
});
