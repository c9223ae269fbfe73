-- Realtime events (issue 15): every user-facing change writes one row here in the SAME
-- transaction as the change (event_record(), core/src/domains/events), numbered per user
-- 1, 2, 3, … without gaps: the counter row of event_seqs is locked until commit, so a later
-- event of the same user can neither commit first nor take a number a rolled-back one freed.
-- Delivery (LISTEN/NOTIFY or NATS) only says "user X has news"; the rows are the truth a
-- reconnecting browser replays from. Kept EVENTS_KEEP (housekeeping purges older rows).
CREATE TABLE event_seqs (
  user_id bigint PRIMARY KEY REFERENCES users (id) ON DELETE CASCADE,
  seq bigint NOT NULL
);

CREATE TABLE events (
  user_id bigint NOT NULL,
  seq bigint NOT NULL,
  type text NOT NULL CHECK (type ~ '^[a-z_]+(\.[a-z_]+)*$'),
  -- NULL: filled in at delivery (the "wallets" event carries the wallets as they are then).
  payload jsonb,
  created_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (user_id, seq)
);
-- Rows arrive in time order: a BRIN index serves the purge for almost no cost per insert.
CREATE INDEX events_created ON events USING brin (created_at);
