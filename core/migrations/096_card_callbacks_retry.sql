-- The card issuers' callbacks go through the same inbox as the payment webhooks (core/src/inbox/):
-- a failed apply is retried with backoff, and a copy of an event whose first delivery is still
-- being processed is answered `duplicate` at once. The same columns and indexes as
-- payment_webhooks (migrations 021 and 087); existing rows need nothing (attempts 0, no retry due).
ALTER TABLE card_issuer_callbacks ADD COLUMN attempts integer NOT NULL DEFAULT 0;
ALTER TABLE card_issuer_callbacks ADD COLUMN next_attempt_at timestamptz;
ALTER TABLE card_issuer_callbacks ADD COLUMN last_error text;
CREATE INDEX card_issuer_callbacks_due ON card_issuer_callbacks (next_attempt_at) WHERE processed_at IS NULL AND signature_valid;
CREATE INDEX card_issuer_callbacks_in_flight ON card_issuer_callbacks (issuer, event_id)
  WHERE processed_at IS NULL AND signature_valid AND event_id IS NOT NULL;
