-- The built-in providers that really run (issue 14): the card sandbox's hosted page, bank
-- transfers quoting a reference, chain deposits to per-user addresses with confirmations; and
-- the retry of webhook deliveries whose processing failed.

-- What each deposit carries beyond its amount: the bank reference the payer must quote, the
-- chain address and transaction with its confirmations.
ALTER TABLE payments ADD COLUMN reference text UNIQUE;
ALTER TABLE payments ADD COLUMN address text;
ALTER TABLE payments ADD COLUMN external_id text;
ALTER TABLE payments ADD COLUMN confirmations integer NOT NULL DEFAULT 0 CHECK (confirmations >= 0);
ALTER TABLE payments ADD COLUMN required_confirmations integer NOT NULL DEFAULT 0 CHECK (required_confirmations >= 0);
-- One payment per provider transaction (a chain transaction seen again is the same deposit).
CREATE UNIQUE INDEX payments_external ON payments (provider, external_id) WHERE external_id IS NOT NULL;
CREATE INDEX payments_open ON payments (expires_at) WHERE state IN ('created', 'pending');

-- A deposit address per user, currency and chain system, in the currency's real format.
CREATE TABLE deposit_addresses (
  user_id bigint NOT NULL REFERENCES users (id),
  currency text NOT NULL REFERENCES currencies (code),
  provider text NOT NULL,
  -- The deposit system it was made for (its terms apply to what arrives).
  system_id text NOT NULL,
  address text NOT NULL UNIQUE,
  created_at timestamptz NOT NULL,
  PRIMARY KEY (user_id, currency, provider)
);

-- The sandbox providers' own books: what the provider knows, apart from ours (reconciliation
-- compares the two). `id`: the card sandbox's payment id (= our public id), the bank's
-- reference, the chain's transaction id.
CREATE TABLE sandbox_payments (
  provider text NOT NULL,
  id text NOT NULL,
  payment_id uuid,
  currency text NOT NULL,
  amount text NOT NULL,
  -- card: open, challenge, paid, declined; bank: received; chain: seen, confirmed.
  state text NOT NULL,
  address text,
  included_height bigint,
  -- The confirmations last reported to us by webhook.
  reported_confirmations integer NOT NULL DEFAULT 0,
  challenge_attempts integer NOT NULL DEFAULT 0,
  card_last4 text,
  created_at timestamptz NOT NULL,
  updated_at timestamptz NOT NULL,
  PRIMARY KEY (provider, id)
);
CREATE INDEX sandbox_payments_unconfirmed ON sandbox_payments (provider, included_height) WHERE state = 'seen';

-- The chain sandbox's one chain: its height and when the last block was made.
CREATE TABLE sandbox_chain (
  id smallint PRIMARY KEY CHECK (id = 1),
  height bigint NOT NULL,
  mined_at timestamptz NOT NULL
);

-- Webhook deliveries whose processing failed (a database error, a crash before commit) are
-- processed again from the stored raw body: at next_attempt_at, with backoff per attempt.
ALTER TABLE payment_webhooks ADD COLUMN attempts integer NOT NULL DEFAULT 0;
ALTER TABLE payment_webhooks ADD COLUMN next_attempt_at timestamptz;
ALTER TABLE payment_webhooks ADD COLUMN last_error text;
CREATE INDEX payment_webhooks_due ON payment_webhooks (next_attempt_at) WHERE processed_at IS NULL AND signature_valid;
