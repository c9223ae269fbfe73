-- Payments through payment systems (issue 14): deposits and the webhook inbox.
--
-- A deposit moves money from the provider's clearing account (ledger kind 'clearing', name =
-- the provider) to the user's wallet: one ledger transaction, in the same database transaction
-- as the state change to 'credited' and as the record of the provider event that caused it.

CREATE TABLE payments (
  id bigserial PRIMARY KEY,
  -- What the payer and the provider see; never the serial.
  public_id uuid NOT NULL UNIQUE DEFAULT gen_random_uuid(),
  direction text NOT NULL CHECK (direction IN ('deposit')),
  provider text NOT NULL,
  user_id bigint NOT NULL REFERENCES users (id),
  currency text NOT NULL REFERENCES currencies (code),
  amount numeric(38, 0) NOT NULL CHECK (amount > 0),
  state text NOT NULL DEFAULT 'created' CHECK (state IN ('created', 'pending', 'paid', 'credited', 'declined', 'expired')),
  -- Why a payment ended declined or expired, as an i18n key.
  reason text,
  ledger_transaction_id bigint UNIQUE REFERENCES ledger_transactions (id),
  expires_at timestamptz NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  paid_at timestamptz,
  credited_at timestamptz,
  -- Credited exactly when its ledger transaction exists.
  CHECK ((state = 'credited') = (ledger_transaction_id IS NOT NULL)),
  CHECK ((state IN ('paid', 'credited')) = (paid_at IS NOT NULL))
);
CREATE INDEX payments_user ON payments (user_id, id DESC);

-- Every delivery to a webhook, as received, whatever became of it.
CREATE TABLE payment_webhooks (
  id bigserial PRIMARY KEY,
  provider text NOT NULL,
  raw_body bytea NOT NULL,
  signature text,
  signature_valid boolean NOT NULL,
  -- The provider's event id, when the body could be read.
  event_id text,
  received_at timestamptz NOT NULL,
  processed_at timestamptz,
  -- credited, declined, pending, duplicate, bad_signature, stale, malformed, unknown_payment,
  -- amount_mismatch, currency_mismatch, wrong_state. NULL: not processed yet.
  result text
);
CREATE INDEX payment_webhooks_unprocessed ON payment_webhooks (id) WHERE processed_at IS NULL;

-- The exactly-once key: an event is applied by the one transaction that inserts its row here
-- (a concurrent duplicate waits on the unique key and then finds it taken).
CREATE TABLE payment_events (
  provider text NOT NULL,
  event_id text NOT NULL,
  webhook_id bigint NOT NULL REFERENCES payment_webhooks (id),
  payment_id bigint REFERENCES payments (id),
  result text NOT NULL,
  processed_at timestamptz NOT NULL,
  PRIMARY KEY (provider, event_id)
);
