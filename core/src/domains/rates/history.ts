import {
  RATE_INTERVAL_MS,
  RATE_INTERVALS,
  RATE_SUMMARY_HOURS,
  changeFraction,
  type TRateCandle,
  type TRateCandlesQuery,
  type TRateInterval,
  type TRateSummary,
} from '@obmen/shared';
import { statement, type Queryable } from '../../db/index.ts';
import { notFoundOf } from '../../errors.ts';
import { USABLE } from './source.ts';

/*
 * A pair's rate over time (migration 116): every change of a mid rate (rates:set, the back
 * office, rates:sync, a feed fetch) upserts the bucket of each interval it falls in, so the
 * history costs one statement per change and the chart reads a bounded span by primary key.
 */

/** Minute candles serve the one-day range; hours and days the year the chart looks back. */
export const RATE_KEEP_MS: Record<TRateInterval, number> = {
  '1m': 7 * RATE_INTERVAL_MS['1d'],
  '1h': 366 * RATE_INTERVAL_MS['1d'],
  '1d': 366 * RATE_INTERVAL_MS['1d'],
};

export type TRateTick = { src: string; dst: string; rate: string };

const bucketOf = (ms: number, interval: TRateInterval) => Math.floor(ms / RATE_INTERVAL_MS[interval]) * RATE_INTERVAL_MS[interval];

const RECORD = statement(
  'rate_candles_record',
  `INSERT INTO rate_candles AS c (src, dst, interval, bucket, open, high, low, close, opened_at, closed_at)
   SELECT p.src, p.dst, b.interval, b.bucket, p.rate, p.rate, p.rate, p.rate, $4, $4
   FROM unnest($1::text[], $2::text[], $3::numeric[]) AS p(src, dst, rate)
   CROSS JOIN unnest($5::text[], $6::timestamptz[]) AS b(interval, bucket)
   ON CONFLICT (src, dst, interval, bucket) DO UPDATE SET
     high = GREATEST(c.high, EXCLUDED.high),
     low = LEAST(c.low, EXCLUDED.low),
     open = CASE WHEN EXCLUDED.opened_at < c.opened_at THEN EXCLUDED.open ELSE c.open END,
     opened_at = LEAST(c.opened_at, EXCLUDED.opened_at),
     close = CASE WHEN EXCLUDED.closed_at >= c.closed_at THEN EXCLUDED.close ELSE c.close END,
     closed_at = GREATEST(c.closed_at, EXCLUDED.closed_at)`,
);

/** Records mid rates seen at `at` (the caller's transaction when it changes the rates table). */
export async function recordRates(db: Queryable, ticks: readonly TRateTick[], at: Date): Promise<void> {
  // One row per pair: an upsert may not touch the same row twice in one statement.
  const byPair = new Map(ticks.map((tick) => [`${tick.src}/${tick.dst}`, tick]));
  if (!byPair.size) return;
  const pairs = [...byPair.values()];
  const ms = at.getTime();
  await db.query(RECORD, [
    pairs.map((pair) => pair.src),
    pairs.map((pair) => pair.dst),
    pairs.map((pair) => pair.rate),
    at.toISOString(),
    RATE_INTERVALS,
    RATE_INTERVALS.map((interval) => new Date(bucketOf(ms, interval)).toISOString()),
  ]);
}

type TCandleRow = { bucket: string; open: string; high: string; low: string; close: string };

/**
 * The last close before `first` (ms): the newest of each interval's last bucket wholly before
 * it (a coarser bucket still open at `first` is skipped: its close may be later).
 */
const CLOSE_BEFORE = ['1m', '1h', '1d']
  .map(
    (interval) =>
      `(SELECT close, closed_at FROM rate_candles WHERE src = $1 AND dst = $2 AND interval = '${interval}' AND bucket < $3 AND closed_at < $3 ORDER BY bucket DESC LIMIT 1)`,
  )
  .join(' UNION ALL ');

/**
 * GET /api/exchange/rates/{src}/{dst}: every bucket from `from` to `to` (never past `now`);
 * one without a change is flat at the close before it; a pair that has had its rate since
 * before the range and no recorded change starts flat at that rate.
 */
export async function rateCandles(db: Queryable, src: string, dst: string, query: TRateCandlesQuery, now: Date): Promise<TRateCandle[]> {
  const [pair] = await db.query<{ rate: string; since: string }>(
    `SELECT r.rate::text AS rate, (extract(epoch FROM r.updated_at) * 1000)::bigint::text AS since FROM rates r WHERE r.src = $1 AND r.dst = $2 AND ${USABLE}`,
    [src, dst],
  );
  if (!pair) throw notFoundOf('pair');
  const { interval } = query;
  const step = RATE_INTERVAL_MS[interval];
  const first = bucketOf(Date.parse(query.from), interval);
  const last = Math.min(bucketOf(Date.parse(query.to), interval), bucketOf(now.getTime(), interval));
  if (last < first) return [];
  const firstIso = new Date(first).toISOString();
  const [rows, before] = await Promise.all([
    db.query<TCandleRow>(
      `SELECT (extract(epoch FROM bucket) * 1000)::bigint::text AS bucket, open::text AS open, high::text AS high, low::text AS low, close::text AS close
       FROM rate_candles WHERE src = $1 AND dst = $2 AND interval = $3 AND bucket BETWEEN $4 AND $5 ORDER BY bucket`,
      [src, dst, interval, firstIso, new Date(last).toISOString()],
    ),
    db.query<{ close: string }>(`SELECT close::text AS close FROM (${CLOSE_BEFORE}) AS t ORDER BY closed_at DESC LIMIT 1`, [src, dst, firstIso]),
  ]);
  let close: string | null = before[0]?.close ?? (Number(pair.since) < first ? pair.rate : null);
  const byBucket = new Map(rows.map((row) => [Number(row.bucket), row]));
  const candles: TRateCandle[] = [];
  for (let bucket = first; bucket <= last; bucket += step) {
    const row = byBucket.get(bucket);
    const time = new Date(bucket).toISOString();
    if (row) {
      candles.push({ time, open: row.open, high: row.high, low: row.low, close: row.close });
      close = row.close;
    } else if (close !== null) {
      candles.push({ time, open: close, high: close, low: close, close });
    }
  }
  return candles;
}

/**
 * GET /api/exchange/rates (the pairs list): each usable pair's hourly closes over the last day
 * and its change since the close before that day. Two reads whatever the number of pairs: the
 * day's hour candles by age, and each pair's close before them by its key.
 */
export async function rateSummaries(db: Queryable, now: Date): Promise<TRateSummary[]> {
  const step = RATE_INTERVAL_MS['1h'];
  const last = bucketOf(now.getTime(), '1h');
  const first = last - (RATE_SUMMARY_HOURS - 1) * step;
  const firstIso = new Date(first).toISOString();
  const [pairs, rows] = await Promise.all([
    db.query<{ src: string; dst: string; rate: string; since: string; before: string | null }>(
      `SELECT r.src, r.dst, r.rate::text AS rate, (extract(epoch FROM r.updated_at) * 1000)::bigint::text AS since, prev.close::text AS before
       FROM rates r
       LEFT JOIN LATERAL (SELECT c.close FROM rate_candles c WHERE c.src = r.src AND c.dst = r.dst AND c.interval = '1h' AND c.bucket < $1 ORDER BY c.bucket DESC LIMIT 1) prev ON true
       WHERE ${USABLE}
       ORDER BY r.src, r.dst`,
      [firstIso],
    ),
    db.query<{ src: string; dst: string; bucket: string; close: string }>(
      `SELECT src, dst, (extract(epoch FROM bucket) * 1000)::bigint::text AS bucket, close::text AS close
       FROM rate_candles WHERE interval = '1h' AND bucket BETWEEN $1 AND $2`,
      [firstIso, new Date(last).toISOString()],
    ),
  ]);
  const closes = new Map<string, Map<number, string>>();
  for (const row of rows) {
    const key = `${row.src}/${row.dst}`;
    closes.set(key, (closes.get(key) ?? new Map()).set(Number(row.bucket), row.close));
  }
  return pairs.map((pair) => {
    const byBucket = closes.get(`${pair.src}/${pair.dst}`);
    const opening = pair.before ?? (Number(pair.since) < first ? pair.rate : null);
    let close = opening;
    const points: string[] = [];
    for (let bucket = first; bucket <= last; bucket += step) {
      close = byBucket?.get(bucket) ?? close;
      if (close !== null) points.push(close);
    }
    const latest = points.at(-1);
    return { src: pair.src, dst: pair.dst, open: opening, change: opening !== null && latest ? changeFraction(opening, latest) : null, points };
  });
}

/** The purge job: candles older than their interval is kept. */
export async function purgeRateCandles(db: Queryable, now: Date): Promise<void> {
  for (const interval of RATE_INTERVALS) {
    await db.query('DELETE FROM rate_candles WHERE interval = $1 AND bucket < $2', [interval, new Date(now.getTime() - RATE_KEEP_MS[interval]).toISOString()]);
  }
}
