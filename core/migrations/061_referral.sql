-- The referral programme (issue 17).

-- The terms an operator sets (`referral:terms`): the share of every fee a referee pays that
-- goes to their referrer, the currency bonuses are paid in, how long a bonus is held before it
-- is paid, and the least a settlement pays. One row; none: no programme (no accruals).
CREATE TABLE referral_terms (
  id boolean PRIMARY KEY DEFAULT true CHECK (id),
  share numeric NOT NULL CHECK (share >= 0 AND share < 1),
  currency text NOT NULL REFERENCES currencies (code),
  hold_seconds integer NOT NULL CHECK (hold_seconds >= 0),
  -- minor units of `currency`
  min_payout numeric(38, 0) NOT NULL CHECK (min_payout >= 0),
  enabled boolean NOT NULL DEFAULT true,
  updated_at timestamptz NOT NULL DEFAULT now()
);

-- Invite codes: one main code per user (label NULL, made on first use) and up to 5 labelled
-- ones (checked under the user's row lock). A retired code binds nobody.
CREATE TABLE referral_codes (
  code text PRIMARY KEY CHECK (code ~ '^[A-Z0-9]{6,16}$'),
  user_id bigint NOT NULL REFERENCES users (id),
  label text CHECK (label IS NULL OR length(label) BETWEEN 1 AND 40),
  created_at timestamptz NOT NULL DEFAULT now(),
  retired_at timestamptz,
  CHECK (label IS NOT NULL OR retired_at IS NULL)
);
CREATE UNIQUE INDEX referral_codes_main ON referral_codes (user_id) WHERE label IS NULL;
CREATE INDEX referral_codes_user ON referral_codes (user_id, created_at);

-- Who brought whom: written once, at sign-up, never changed (the primary key is the referee).
CREATE TABLE referrals (
  referee_id bigint PRIMARY KEY REFERENCES users (id),
  referrer_id bigint NOT NULL REFERENCES users (id),
  code text NOT NULL REFERENCES referral_codes (code),
  created_at timestamptz NOT NULL DEFAULT now(),
  CHECK (referee_id <> referrer_id)
);
CREATE INDEX referrals_referrer ON referrals (referrer_id, created_at DESC);

-- A settlement: what was due to one referrer in one currency, paid by one ledger transaction
-- (referral liability → the referrer's wallet) in the same database transaction that marks
-- its accruals settled.
CREATE TABLE referral_settlements (
  id bigserial PRIMARY KEY,
  referrer_id bigint NOT NULL REFERENCES users (id),
  currency text NOT NULL REFERENCES currencies (code),
  amount numeric(38, 0) NOT NULL CHECK (amount > 0),
  accruals integer NOT NULL CHECK (accruals > 0),
  transaction_id bigint NOT NULL UNIQUE REFERENCES ledger_transactions (id),
  created_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX referral_settlements_referrer ON referral_settlements (referrer_id, created_at);

-- One accrual per fee a referee paid (one exchange, later one card fee), written by
-- referral_accrue() in the fee's own database transaction with its ledger transaction: the
-- fee's share moves from the fees account to the referral liability in the payout currency.
CREATE TABLE referral_accruals (
  id bigserial PRIMARY KEY,
  referrer_id bigint NOT NULL REFERENCES users (id),
  referee_id bigint NOT NULL REFERENCES users (id),
  source text NOT NULL CHECK (source IN ('exchange', 'card')),
  source_id bigint NOT NULL,
  fee_currency text NOT NULL REFERENCES currencies (code),
  fee numeric(38, 0) NOT NULL CHECK (fee > 0),
  -- the payout currency and amount (minor units)
  currency text NOT NULL REFERENCES currencies (code),
  amount numeric(38, 0) NOT NULL CHECK (amount > 0),
  transaction_id bigint NOT NULL UNIQUE REFERENCES ledger_transactions (id),
  created_at timestamptz NOT NULL DEFAULT now(),
  due_at timestamptz NOT NULL,
  settlement_id bigint REFERENCES referral_settlements (id),
  UNIQUE (source, source_id)
);
CREATE INDEX referral_accruals_due ON referral_accruals (due_at, referrer_id) WHERE settlement_id IS NULL;
CREATE INDEX referral_accruals_referrer ON referral_accruals (referrer_id, created_at);
CREATE INDEX referral_accruals_settlement ON referral_accruals (settlement_id);

-- Invitations by mail: one row per address, whoever invited it; a new invitation only when the
-- last is 30 days old (the upsert decides, so two senders at once send one).
CREATE TABLE referral_invitations (
  address text PRIMARY KEY CHECK (address = lower(address)),
  inviter_id bigint NOT NULL REFERENCES users (id),
  sent_at timestamptz NOT NULL DEFAULT now()
);

-- Sign-up links remember the invite code of the browser that asked for them.
ALTER TABLE auth_tokens ADD COLUMN ref_code text;
