-- The validly signed deliveries not processed yet, by event: the webhook intake answers a copy of
-- an event whose earlier delivery is still being processed `duplicate` at once (the earlier one
-- carries the event, retried until processed). Only unprocessed rows are in it: a few.
CREATE INDEX payment_webhooks_in_flight ON payment_webhooks (provider, event_id)
  WHERE processed_at IS NULL AND signature_valid AND event_id IS NOT NULL;
