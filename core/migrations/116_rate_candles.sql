-- A pair's rate over time, thinned into candles of one minute, one hour and one day (the mid
-- rate: the operator's table and the feed's ticks). Each change upserts its three buckets, so
-- the hot path writes three rows per pair whatever the tick rate. The primary key serves the
-- chart's range read (one pair, one interval, a span of buckets) and the close before it; the
-- second index the purge job (per interval, oldest first).
CREATE TABLE rate_candles (
  src text NOT NULL,
  dst text NOT NULL,
  interval text NOT NULL CHECK (interval IN ('1m', '1h', '1d')),
  bucket timestamptz NOT NULL,
  open numeric NOT NULL CHECK (open > 0),
  high numeric NOT NULL CHECK (high > 0),
  low numeric NOT NULL CHECK (low > 0),
  close numeric NOT NULL CHECK (close > 0),
  -- When the open and close ticks happened: a late tick (another core) never replaces a newer close.
  opened_at timestamptz NOT NULL,
  closed_at timestamptz NOT NULL,
  PRIMARY KEY (src, dst, interval, bucket)
);
CREATE INDEX rate_candles_age ON rate_candles (interval, bucket);
