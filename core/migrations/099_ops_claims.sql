-- Who holds an item of a back-office queue (a support conversation, a verification, …): one live
-- claim per item. A claim lapses once `touched_at` is older than the lapse (15 minutes, kept in
-- code), so an item is never stuck with an operator who went away; replying or deciding touches it.
CREATE TABLE ops_claims (
  queue text NOT NULL CHECK (queue ~ '^[a-z_]+$'),
  item_id text NOT NULL,
  operator_id bigint NOT NULL REFERENCES operators (id),
  claimed_at timestamptz NOT NULL,
  touched_at timestamptz NOT NULL,
  PRIMARY KEY (queue, item_id)
);
