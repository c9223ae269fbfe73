-- The signed inboxes (payment_webhooks, card_issuer_callbacks) store only validly signed
-- deliveries. A refused one (forged: bad_signature; outside the time window: stale) is counted
-- here per inbox, source and reason, and only a bounded sample of them is kept for diagnosis:
-- anyone can send them, so nothing of theirs may grow with their number.
CREATE TABLE inbox_refusals (
  inbox text NOT NULL CHECK (inbox IN ('payment_webhooks', 'card_issuer_callbacks')),
  -- The provider or issuer the delivery was addressed to (a known one: others are a 404).
  source text NOT NULL,
  -- bad_signature, stale, or rate_limited (refused past the sender address's limit, not sampled).
  reason text NOT NULL,
  refused bigint NOT NULL,
  first_at timestamptz NOT NULL,
  last_at timestamptz NOT NULL,
  PRIMARY KEY (inbox, source, reason)
);

-- The last refused deliveries per inbox, source and reason: a ring, slot = count modulo its size
-- (signed-inbox.ts), so the table never holds more than its size per key whatever the flood.
CREATE TABLE inbox_refused_samples (
  inbox text NOT NULL,
  source text NOT NULL,
  reason text NOT NULL,
  slot integer NOT NULL CHECK (slot >= 0),
  address text,
  signature text,
  -- The body's first bytes, and its whole size.
  body_head bytea NOT NULL,
  body_size integer NOT NULL,
  received_at timestamptz NOT NULL,
  PRIMARY KEY (inbox, source, reason, slot)
);

-- Processed deliveries are purged after WEBHOOK_RETENTION_DAYS (housekeeping); the exactly-once
-- key of their event stays, and loses only its link to the purged delivery.
ALTER TABLE payment_events ALTER COLUMN webhook_id DROP NOT NULL;
ALTER TABLE payment_events DROP CONSTRAINT payment_events_webhook_id_fkey,
  ADD CONSTRAINT payment_events_webhook_id_fkey FOREIGN KEY (webhook_id) REFERENCES payment_webhooks (id) ON DELETE SET NULL;
ALTER TABLE card_issuer_events ALTER COLUMN callback_id DROP NOT NULL;
ALTER TABLE card_issuer_events DROP CONSTRAINT card_issuer_events_callback_id_fkey,
  ADD CONSTRAINT card_issuer_events_callback_id_fkey FOREIGN KEY (callback_id) REFERENCES card_issuer_callbacks (id) ON DELETE SET NULL;

-- What earlier versions stored of refused deliveries: no event came of them, none refers to them.
DELETE FROM payment_webhooks WHERE NOT signature_valid;
DELETE FROM card_issuer_callbacks WHERE NOT signature_valid;
