import { describe, expect, it } from 'vitest';
import {
  CHART_RANGES,
  MAX_RATE_CANDLES,
  RATE_INTERVAL_MS,
  ZRateCandlesQuery,
  candlesChange,
  changeFraction,
  displayAxisTime,
  displayChange,
  displayUprightRate,
  inputAmount,
  invertCandles,
  invertRate,
  isRateUpright,
} from '../src/index.ts';

const NNBSP = '\u202f';

describe('the candles query', () => {
  const parse = (query: Record<string, string>) => ZRateCandlesQuery.safeParse(query);
  const messages = (query: Record<string, string>) => {
    const result = parse(query);
    return result.success ? [] : result.error.issues.map((issue) => `${issue.path.join('.')}: ${issue.message}`);
  };

  it('takes an interval and both ends; every chart range fits in one call', () => {
    expect(parse({ interval: '1h', from: '2026-01-01T00:00:00Z', to: '2026-01-02T00:00:00+03:00' }).success).toBe(true);
    for (const { spanMs, interval } of Object.values(CHART_RANGES)) {
      // The first bucket may be partial: span / step + 1 buckets.
      expect(spanMs / RATE_INTERVAL_MS[interval] + 1).toBeLessThanOrEqual(MAX_RATE_CANDLES);
    }
  });

  it('refuses an end before the start, too many buckets, an unknown interval and a time that is no instant', () => {
    expect(messages({ interval: '1m', from: '2026-01-02T00:00:00Z', to: '2026-01-01T00:00:00Z' })).toEqual(['from: rates.range_order']);
    expect(messages({ interval: '1m', from: '2026-01-01T00:00:00Z', to: '2026-01-02T01:00:00Z' })).toEqual(['from: rates.range_too_long']);
    // 1500 minutes exactly: the last one starts at 24:59.
    expect(messages({ interval: '1m', from: '2026-01-01T00:00:00Z', to: '2026-01-02T00:59:59Z' })).toEqual([]);
    expect(messages({ interval: '5m', from: '2026-01-01T00:00:00Z', to: '2026-01-01T01:00:00Z' })).toEqual(['interval: rates.interval_invalid']);
    expect(messages({ interval: '1d', from: '1 Jan', to: '2026-01-01T01:00:00Z' })).toEqual(['from: rates.time_invalid']);
    expect(messages({ interval: '1d' })).toEqual(['from: validation.required', 'to: validation.required']);
  });
});

describe('changes and the other side of a rate', () => {
  it('changeFraction: exact, to eight places, toward zero', () => {
    expect(changeFraction('100', '101.25')).toBe('0.01250000');
    expect(changeFraction('0.05', '0.055')).toBe('0.10000000');
    expect(changeFraction('3', '2')).toBe('-0.33333333');
    expect(changeFraction('0', '1')).toBeNull();
    expect(candlesChange([])).toBeNull();
    expect(
      candlesChange([
        { time: 'a', open: '10', high: '12', low: '9', close: '11' },
        { time: 'b', open: '11', high: '11', low: '8', close: '8' },
      ]),
    ).toBe('-0.20000000');
  });

  it('invertRate: twelve significant digits, rounded down, never through a float', () => {
    expect(invertRate('0.0000153846153846')).toBe('65000');
    expect(invertRate('65000')).toBe('0.0000153846153846');
    expect(invertRate('3')).toBe('0.333333333333');
    expect(invertRate('1')).toBe('1');
    expect(() => invertRate('0')).toThrow(RangeError);
    expect(() => invertRate('-2')).toThrow(RangeError);
  });

  it('invertCandles: the high is the inverse of the low', () => {
    expect(invertCandles([{ time: 't', open: '2', high: '4', low: '1', close: '0.5' }])).toEqual([
      { time: 't', open: '0.5', high: '1', low: '0.25', close: '2' },
    ]);
  });
});

describe('numbers the right way up', () => {
  it('a rate says 1 of the dearer currency first, whichever way the operation went', () => {
    expect(isRateUpright('65326.63')).toBe(true);
    expect(isRateUpright('0.0000153')).toBe(false);
    expect(displayUprightRate('BTC', 'USDT', '65326.63316', 'ru')).toBe(`1\u00a0BTC = 65${NNBSP}326,63\u00a0USDT`);
    expect(displayUprightRate('USDT', 'BTC', '0.0000153076', 'ru')).toBe(`1\u00a0BTC = 65${NNBSP}327,03\u00a0USDT`);
    expect(displayUprightRate('USDT', 'BTC', '0.0000153076', 'en')).toBe('1\u00a0BTC = 65,327.03\u00a0USDT');
    expect(displayUprightRate('RUB', 'USDT', '0.0109', 'ru')).toBe('1\u00a0USDT = 91,7431\u00a0RUB');
  });

  it('an amount for an input keeps the reader’s decimal mark and no grouping', () => {
    expect(inputAmount('0.00153000', 'ru')).toBe('0,00153');
    expect(inputAmount('0.00153000', 'en')).toBe('0.00153');
    expect(inputAmount('12345.50', 'ru')).toBe('12345,5');
    expect(inputAmount('100.000', 'ru')).toBe('100');
  });

  it('a change is signed, at most two decimals, a rounded zero unsigned', () => {
    expect(displayChange('0.0125', 'ru')).toBe('+1,25%');
    expect(displayChange('-0.004', 'en')).toBe('\u22120.4%');
    expect(displayChange('-0.0000001', 'en')).toBe('0%');
    expect(displayChange('0', 'ru')).toBe('0%');
  });

  it('an axis tick is short and in the reader’s zone', () => {
    expect(displayAxisTime('2026-01-10T10:05:00Z', 'ru', 'Europe/Moscow', 'time')).toBe('13:05');
    expect(displayAxisTime('2026-01-10T22:05:00Z', 'en', 'Europe/Moscow', 'date')).toBe('11/01');
  });
});
