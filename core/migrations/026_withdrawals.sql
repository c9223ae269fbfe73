-- Withdrawals (issue 14 point 5): a request holds its amount (holds, migration 025) and moves
-- through requested → approved → processing → paid, or ends rejected, failed or cancelled,
-- each of those three releasing the hold in the same transaction as the state change; paid
-- captures it (what is paid out to the provider's clearing account, the fee to the house).

CREATE TABLE withdrawals (
  id bigserial PRIMARY KEY,
  -- What the user and the provider see; never the serial.
  public_id uuid NOT NULL UNIQUE DEFAULT gen_random_uuid(),
  user_id bigint NOT NULL REFERENCES users (id),
  -- The catalogue's system (payment_systems, direction 'withdraw') and the provider running it.
  system_id text NOT NULL,
  provider text NOT NULL,
  -- (no foreign key to currencies: see transfers.currency)
  currency text NOT NULL,
  -- Minor units: `amount` leaves the wallet (and is held), `fee` stays with the house,
  -- `receive` is paid out.
  amount numeric(38, 0) NOT NULL CHECK (amount > 0),
  fee numeric(38, 0) NOT NULL CHECK (fee >= 0),
  receive numeric(38, 0) NOT NULL CHECK (receive > 0),
  -- The amount's value in the limits' currency (verification_limits.currency, minor units) at
  -- request time: what it counts against the user's 24-hour and 30-day limits.
  limit_currency text NOT NULL,
  limit_value numeric(38, 0) NOT NULL CHECK (limit_value >= 0),
  -- The form as the provider needs it, and as the user sees it (card and IBAN masked).
  details jsonb NOT NULL DEFAULT '{}',
  details_shown text NOT NULL DEFAULT '',
  state text NOT NULL DEFAULT 'requested'
    CHECK (state IN ('requested', 'approved', 'processing', 'paid', 'rejected', 'failed', 'cancelled')),
  -- Why it ended rejected, failed or cancelled: an i18n key; an operator's words in reason_text.
  reason text,
  reason_text text,
  auto_approved boolean NOT NULL DEFAULT false,
  hold_id bigint NOT NULL UNIQUE REFERENCES holds (id),
  -- The provider's payout id once it accepted the payout.
  provider_ref text,
  idempotency_key text,
  created_at timestamptz NOT NULL,
  updated_at timestamptz NOT NULL,
  approved_at timestamptz,
  processing_at timestamptz,
  finished_at timestamptz,
  -- When the user may expect the money (shown with the state); NULL once it ended.
  expected_at timestamptz,
  CHECK (amount = fee + receive),
  CHECK ((state IN ('paid', 'rejected', 'failed', 'cancelled')) = (finished_at IS NOT NULL)),
  CHECK ((state IN ('processing', 'paid')) <= (provider_ref IS NOT NULL))
);
CREATE INDEX withdrawals_user ON withdrawals (user_id, created_at DESC, id DESC);
CREATE INDEX withdrawals_open ON withdrawals (state, id) WHERE state IN ('requested', 'approved', 'processing');
CREATE UNIQUE INDEX withdrawals_key ON withdrawals (user_id, idempotency_key) WHERE idempotency_key IS NOT NULL;

-- Requests up to this amount (minor units) are approved without an operator; above it an
-- operator approves or rejects (withdraw:approve / withdraw:reject). No row: every request waits.
CREATE TABLE withdraw_auto_approval (
  currency text PRIMARY KEY REFERENCES currencies (code),
  max_amount numeric(38, 0) NOT NULL CHECK (max_amount >= 0)
);
-- A fresh database gets amounts from the seed (core/src/seed/demo.ts, seedWithdrawAutoApproval).

-- The sandbox providers' own book of payouts: what "the provider" was asked to pay and what it
-- reports, kept apart from ours (reconciliation compares the two). A real provider keeps this
-- on its side; the sandbox keeps it here. One payout per (provider, our reference).
CREATE TABLE sandbox_payouts (
  id bigserial PRIMARY KEY,
  provider_ref text NOT NULL UNIQUE,
  provider text NOT NULL,
  reference text NOT NULL,
  currency text NOT NULL,
  amount numeric(38, 0) NOT NULL CHECK (amount > 0),
  destination text NOT NULL,
  state text NOT NULL DEFAULT 'pending' CHECK (state IN ('pending', 'succeeded', 'failed')),
  created_at timestamptz NOT NULL,
  due_at timestamptz NOT NULL,
  settled_at timestamptz,
  -- When its signed webhook was answered by us; until then the sandbox sends it again.
  reported_at timestamptz,
  UNIQUE (provider, reference)
);
CREATE INDEX sandbox_payouts_due ON sandbox_payouts (due_at) WHERE state = 'pending';
CREATE INDEX sandbox_payouts_unreported ON sandbox_payouts (id) WHERE state <> 'pending' AND reported_at IS NULL;
