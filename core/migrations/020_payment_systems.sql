-- The payment-system catalogue (issue 14): what each system does (deposit, withdraw, purchase),
-- through which provider, in which currencies, at what fee and limits, from which verification
-- level, and which fields its form asks for. Operators edit it with the payments:system:*
-- commands; a fresh database gets the sandbox systems from the seed (core/src/seed).

CREATE TABLE payment_systems (
  direction text NOT NULL CHECK (direction IN ('deposit', 'withdraw', 'purchase')),
  id text NOT NULL CHECK (id ~ '^[a-z0-9][a-z0-9-]{1,39}$'),
  -- The provider adapter in core (domains/payments/providers.ts) that runs it.
  provider text NOT NULL,
  names jsonb NOT NULL CHECK (jsonb_typeof(names) = 'object' AND names ? 'ru' AND names ? 'en'),
  logo text NOT NULL,
  -- The users.verification_level a user needs to use it.
  level smallint NOT NULL DEFAULT 0 CHECK (level IN (0, 1)),
  -- The form's fields (shared/src/payment-fields.ts PAYMENT_FIELDS).
  fields text[] NOT NULL DEFAULT '{}' CHECK (fields <@ ARRAY['card_number', 'card_holder', 'iban', 'account_holder', 'address', 'memo']),
  enabled boolean NOT NULL DEFAULT true,
  position integer NOT NULL DEFAULT 0,
  PRIMARY KEY (direction, id)
);

-- A system's terms per currency, in minor units of that currency (for a purchase: the currency
-- paid with). The fee is fee_percent percent of the amount, rounded up, plus fee_fixed.
CREATE TABLE payment_system_currencies (
  direction text NOT NULL,
  system_id text NOT NULL,
  currency text NOT NULL REFERENCES currencies (code),
  fee_percent numeric(7, 4) NOT NULL DEFAULT 0 CHECK (fee_percent >= 0 AND fee_percent < 100),
  fee_fixed numeric(38, 0) NOT NULL DEFAULT 0 CHECK (fee_fixed >= 0),
  min_amount numeric(38, 0) NOT NULL CHECK (min_amount > 0),
  max_amount numeric(38, 0) NOT NULL CHECK (max_amount >= min_amount),
  -- Chain systems: confirmations a transaction needs before it is credited.
  confirmations integer NOT NULL DEFAULT 0 CHECK (confirmations >= 0 AND confirmations <= 1000),
  enabled boolean NOT NULL DEFAULT true,
  PRIMARY KEY (direction, system_id, currency),
  FOREIGN KEY (direction, system_id) REFERENCES payment_systems (direction, id) ON DELETE CASCADE
);

-- Payments name the system they went through and keep the fee it charged. Every direction of
-- the catalogue may have payments (withdrawals may keep their own table; the check only allows).
ALTER TABLE payments DROP CONSTRAINT payments_direction_check;
ALTER TABLE payments ADD CONSTRAINT payments_direction_check CHECK (direction IN ('deposit', 'withdraw', 'purchase'));
ALTER TABLE payments ADD COLUMN system_id text;
UPDATE payments SET system_id = provider WHERE system_id IS NULL;
ALTER TABLE payments ALTER COLUMN system_id SET NOT NULL;
ALTER TABLE payments ADD COLUMN fee numeric(38, 0) NOT NULL DEFAULT 0 CHECK (fee >= 0);
ALTER TABLE payments ADD CONSTRAINT payments_fee_below_amount CHECK (fee < amount);
