import { z } from 'zod';
import { ZOk } from './api.ts';
import { invertRate } from './format.ts';
import { formatAmount, parseDecimal, pow10 } from './money.ts';

/*
 * A pair's rate over time (GET /api/exchange/rates/{src}/{dst}): candles of one minute, one
 * hour or one day, each the open, high, low and close of the pair's mid rate in its bucket.
 */

/** Each interval's length: buckets start at whole multiples of it since the epoch (UTC). */
export const RATE_INTERVAL_MS = { '1m': 60_000, '1h': 3_600_000, '1d': 86_400_000 } as const;
export type TRateInterval = keyof typeof RATE_INTERVAL_MS;
export const RATE_INTERVALS = Object.keys(RATE_INTERVAL_MS) as TRateInterval[];
/** The most candles one call answers (a year of days, a month of hours, a day of minutes fit). */
export const MAX_RATE_CANDLES = 1500;

/** The chart's ranges: how far back each looks and in which candles. */
export const CHART_RANGES = {
  day: { spanMs: 86_400_000, interval: '1m' },
  week: { spanMs: 7 * 86_400_000, interval: '1h' },
  month: { spanMs: 30 * 86_400_000, interval: '1h' },
  year: { spanMs: 365 * 86_400_000, interval: '1d' },
} as const satisfies Record<string, { spanMs: number; interval: TRateInterval }>;
export type TChartRange = keyof typeof CHART_RANGES;
export const CHART_RANGE_NAMES = Object.keys(CHART_RANGES) as TChartRange[];

const ZInstant = z.iso.datetime({ offset: true, error: (issue) => (issue.input === undefined ? 'validation.required' : 'rates.time_invalid') });

/** The query: both ends inclusive, from ≤ to, at most MAX_RATE_CANDLES buckets between them. */
export const ZRateCandlesQuery = z
  .object({
    interval: z.enum(RATE_INTERVALS as [TRateInterval, ...TRateInterval[]], { error: 'rates.interval_invalid' }),
    from: ZInstant,
    to: ZInstant,
  })
  .superRefine((query, ctx) => {
    // Zod runs this even past a refused field: only two instants make a range.
    if (!ZInstant.safeParse(query.from).success || !ZInstant.safeParse(query.to).success || !(query.interval in RATE_INTERVAL_MS)) return;
    const from = Date.parse(query.from);
    const to = Date.parse(query.to);
    if (from > to) return ctx.addIssue({ code: 'custom', path: ['from'], message: 'rates.range_order' });
    const step = RATE_INTERVAL_MS[query.interval];
    if (Math.floor(to / step) - Math.floor(from / step) + 1 > MAX_RATE_CANDLES)
      ctx.addIssue({ code: 'custom', path: ['from'], message: 'rates.range_too_long' });
  });
export type TRateCandlesQuery = z.infer<typeof ZRateCandlesQuery>;

/** One bucket: `time` its start; rates are exact decimals (dst per 1 src). */
export const ZRateCandle = z.object({ time: z.string(), open: z.string(), high: z.string(), low: z.string(), close: z.string() });
export type TRateCandle = z.infer<typeof ZRateCandle>;

/**
 * Every bucket from the first one with a known rate to `to`: a bucket in which the rate did
 * not change is flat at the close before it; before the pair's first rate there is nothing.
 */
export const ZRateCandlesResponse = ZOk.extend({
  src: z.string(),
  dst: z.string(),
  interval: z.enum(RATE_INTERVALS as [TRateInterval, ...TRateInterval[]]),
  candles: z.array(ZRateCandle),
});
export type TRateCandlesResponse = z.infer<typeof ZRateCandlesResponse>;

/** How far back the pairs list looks: 24 hourly closes, the last one the current hour's. */
export const RATE_SUMMARY_HOURS = 24;

/**
 * GET /api/exchange/rates: every usable pair's last 24 hours (dst per 1 src): the hourly closes
 * from the first one known (`points`, oldest first), the rate 24 hours ago (`open`) and the
 * change since (both null when not known: a pair without history that far back).
 */
export const ZRateSummaryResponse = ZOk.extend({
  pairs: z.array(z.object({ src: z.string(), dst: z.string(), open: z.string().nullable(), change: z.string().nullable(), points: z.array(z.string()) })),
});
export type TRateSummaryResponse = z.infer<typeof ZRateSummaryResponse>;
export type TRateSummary = TRateSummaryResponse['pairs'][number];

/** The change from the first open to the last close as a fraction ("0.0125" is 1.25 %); null without candles. */
export function candlesChange(candles: readonly TRateCandle[]): string | null {
  const first = candles[0];
  const last = candles.at(-1);
  if (!first || !last) return null;
  return changeFraction(first.open, last.close);
}

/** (b − a) / a as an exact decimal to eight places, rounded toward zero; null when a is zero. */
export function changeFraction(a: string, b: string): string | null {
  const x = parseDecimal(a);
  const y = parseDecimal(b);
  const scale = Math.max(x.scale, y.scale);
  const xn = x.num * pow10(scale - x.scale);
  const yn = y.num * pow10(scale - y.scale);
  if (xn === 0n) return null;
  return formatAmount(((yn - xn) * pow10(8)) / xn, 8);
}

/** Candles read from the other side of the pair: src per 1 dst (the high is the inverse of the low). */
export function invertCandles(candles: readonly TRateCandle[]): TRateCandle[] {
  return candles.map((candle) => ({
    time: candle.time,
    open: invertRate(candle.open),
    high: invertRate(candle.low),
    low: invertRate(candle.high),
    close: invertRate(candle.close),
  }));
}
