import { describe, expect, it } from 'vitest';
import { sparkPoints, trendOf, uprightTrend } from '../src/lib/spark.ts';
import { mergeCandles } from '../src/islands/RateChart.tsx';

describe('the pairs list’s spark line and change', () => {
  it('scales the closes into the box, the highest at the top; a flat day across the middle; nothing from one point', () => {
    expect(sparkPoints(['1', '3', '2'], 10, 12)).toBe('0.0,10.0 5.0,2.0 10.0,6.0');
    expect(sparkPoints(['5', '5'], 10, 12)).toBe('0.0,6.0 10.0,6.0');
    expect(sparkPoints(['5'], 10, 12)).toBeNull();
  });

  it('reads a pair shown from its other side upside down, its change from the inverses', () => {
    const summary = { src: 'USDT', dst: 'BTC', open: '0.00002', change: '-0.5', points: ['0.00002', '0.00001'] };
    expect(uprightTrend(summary, false)).toEqual({ points: ['0.00002', '0.00001'], change: '-0.5' });
    expect(uprightTrend(summary, true)).toEqual({ points: ['50000', '100000'], change: '1.00000000' });
    expect(uprightTrend({ ...summary, open: null, change: null }, true).change).toBeNull();
  });

  it('a direction follows the change as shown', () => {
    expect(trendOf('+1,25%')).toBe('up');
    expect(trendOf('\u22120.4%')).toBe('down');
    expect(trendOf('0%')).toBe('flat');
    expect(trendOf(null)).toBe('flat');
  });
});

describe('the chart’s live candles', () => {
  const candle = (time: string, close: string) => ({ time, open: close, high: close, low: close, close });
  it('the newest replace the buckets they share and follow the rest', () => {
    const kept = [candle('2026-01-10T10:00:00.000Z', '1'), candle('2026-01-10T10:01:00.000Z', '2')];
    expect(mergeCandles(kept, [candle('2026-01-10T10:01:00.000Z', '3'), candle('2026-01-10T10:02:00.000Z', '4')])).toEqual([
      kept[0],
      candle('2026-01-10T10:01:00.000Z', '3'),
      candle('2026-01-10T10:02:00.000Z', '4'),
    ]);
    expect(mergeCandles(kept, [])).toEqual(kept);
  });
});
