-- Payment cards (issue 16): the catalogue, orders that become cards, the issuer's signed
-- callbacks, the built-in sandbox issuer's own records, card activity and monthly fees.
--
-- A card's money is its own ledger account (kind 'card', name 'card:<public id>'): top-ups and
-- withdrawals are ordinary ledger transactions between the user's wallet and it. Its balance
-- never goes below zero (CHECK below; ledger_post refuses first with a clear error).

-- Adds values to a column CHECK of the form `col IN (...)`, keeping whatever values it allows
-- now (other migrations add their own: 025 adds 'hold'). It reads both forms PostgreSQL prints
-- such a CHECK in (ARRAY['a'::text, …] and '{a,b}'::text[]) and writes the first one back.
CREATE OR REPLACE FUNCTION pg_temp.cards_widen_in_check(p_table text, p_constraint text, p_column text, p_values text[]) RETURNS void LANGUAGE plpgsql AS $$
DECLARE
  v_def text;
  v_values text[];
BEGIN
  SELECT pg_get_constraintdef(c.oid) INTO v_def FROM pg_constraint c
    WHERE c.conrelid = p_table::regclass AND c.conname = p_constraint;
  SELECT array_agg(DISTINCT v ORDER BY v) INTO v_values FROM (
    SELECT (regexp_matches(coalesce(v_def, ''), '''([a-z_]+)''', 'g'))[1] AS v
    UNION SELECT unnest(string_to_array(substring(coalesce(v_def, '') FROM '''\{([a-z_,]*)\}'''), ','))
    UNION SELECT unnest(p_values)) AS all_values
    WHERE v IS NOT NULL AND v <> '';
  EXECUTE format('ALTER TABLE %I DROP CONSTRAINT IF EXISTS %I', p_table, p_constraint);
  EXECUTE format('ALTER TABLE %I ADD CONSTRAINT %I CHECK (%I IN (%s))', p_table, p_constraint, p_column,
    (SELECT string_agg(quote_literal(v), ', ') FROM unnest(v_values) AS v));
END $$;

SELECT pg_temp.cards_widen_in_check('ledger_accounts', 'ledger_accounts_kind_check', 'kind', ARRAY['card']);
ALTER TABLE ledger_accounts ADD CONSTRAINT card_balance_not_negative CHECK (kind <> 'card' OR balance >= 0);

-- ---- catalogue ------------------------------------------------------------------------------

CREATE TABLE card_products (
  id text PRIMARY KEY CHECK (id ~ '^[a-z0-9][a-z0-9-]{1,39}$'),
  kind text NOT NULL CHECK (kind IN ('virtual', 'physical')),
  -- {"ru": …, "en": …}
  names jsonb NOT NULL,
  descriptions jsonb NOT NULL DEFAULT '{}',
  -- The currencies a card of this product can hold (the user picks one).
  currencies text[] NOT NULL CHECK (cardinality(currencies) > 0),
  -- Both fees are charged in this currency, from the user's wallet (minor units).
  fee_currency text NOT NULL REFERENCES currencies (code),
  issue_fee numeric(38, 0) NOT NULL DEFAULT 0 CHECK (issue_fee >= 0),
  monthly_fee numeric(38, 0) NOT NULL DEFAULT 0 CHECK (monthly_fee >= 0),
  -- Spending limits per card currency, minor units: {"USD": {"day": "500000", "month": "2000000"}}
  limits jsonb NOT NULL DEFAULT '{}',
  delivery_days integer CHECK (delivery_days IS NULL OR delivery_days BETWEEN 1 AND 90),
  image text NOT NULL,
  issuer text NOT NULL DEFAULT 'sandbox',
  enabled boolean NOT NULL DEFAULT false,
  position integer NOT NULL DEFAULT 0,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  CHECK ((kind = 'physical') = (delivery_days IS NOT NULL))
);

-- ---- orders and cards -----------------------------------------------------------------------

CREATE TABLE cards (
  id bigserial PRIMARY KEY,
  public_id uuid NOT NULL UNIQUE DEFAULT gen_random_uuid(),
  user_id bigint NOT NULL REFERENCES users (id),
  product_id text NOT NULL REFERENCES card_products (id),
  kind text NOT NULL CHECK (kind IN ('virtual', 'physical')),
  currency text NOT NULL REFERENCES currencies (code),
  name_on_card text NOT NULL,
  -- Physical cards: {country, city, postcode, line}.
  address jsonb,
  -- The fees as they were when ordered.
  fee_currency text NOT NULL,
  issue_fee numeric(38, 0) NOT NULL CHECK (issue_fee >= 0),
  monthly_fee numeric(38, 0) NOT NULL CHECK (monthly_fee >= 0),
  status text NOT NULL DEFAULT 'placed' CHECK (status IN (
    'placed', 'confirmed', 'issuing', 'issued', 'shipped', 'delivered', 'active', 'frozen', 'closed', 'cancelled', 'failed')),
  -- Why it failed, as an i18n key.
  reason text,
  issuer text NOT NULL,
  -- The issuer's id of the order and card, once it accepted the order.
  issuer_ref text,
  bin text,
  last4 text,
  expiry_month integer,
  expiry_year integer,
  -- The hold of the issue fee (migration 025), placed with the order; released or captured once.
  hold_id bigint UNIQUE REFERENCES holds (id),
  -- The card's own ledger account (kind 'card'), made when the card is issued.
  account_id bigint REFERENCES ledger_accounts (id),
  -- The issue fee charged at confirmation, and its refund when the issuer failed the order.
  fee_transaction_id bigint UNIQUE REFERENCES ledger_transactions (id),
  refund_transaction_id bigint UNIQUE REFERENCES ledger_transactions (id),
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  confirmed_at timestamptz,
  issued_at timestamptz,
  closed_at timestamptz,
  UNIQUE (issuer, issuer_ref),
  CHECK ((kind = 'physical') = (address IS NOT NULL)),
  -- The fee is charged exactly when the order went past `placed` (a free product charges nothing).
  CHECK (status IN ('placed', 'cancelled') OR issue_fee = 0 OR fee_transaction_id IS NOT NULL),
  CHECK (status NOT IN ('placed', 'cancelled') OR fee_transaction_id IS NULL),
  CHECK ((refund_transaction_id IS NOT NULL) <= (status = 'failed')),
  CHECK ((status IN ('issued', 'shipped', 'delivered', 'active', 'frozen', 'closed')) = (account_id IS NOT NULL))
);
CREATE INDEX cards_user ON cards (user_id, id DESC);
CREATE INDEX cards_billable ON cards (id) WHERE status IN ('active', 'frozen');

-- What happened to a card, for its owner: each reveal of the number, each freeze, each move.
CREATE TABLE card_activity (
  id bigserial PRIMARY KEY,
  card_id bigint NOT NULL REFERENCES cards (id),
  kind text NOT NULL,
  amount numeric(38, 0),
  currency text,
  ledger_transaction_id bigint REFERENCES ledger_transactions (id),
  -- 'user:<id>', 'issuer:<id>', 'system', 'operator'
  actor text NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX card_activity_card ON card_activity (card_id, id DESC);

-- One monthly fee per card and month (YYYY-MM): the primary key makes a second core's run of the
-- same job wait, then find the month taken. `unpaid`: the wallet lacked it; retried later.
CREATE TABLE card_monthly_fees (
  card_id bigint NOT NULL REFERENCES cards (id),
  period text NOT NULL CHECK (period ~ '^\d{4}-\d{2}$'),
  amount numeric(38, 0) NOT NULL CHECK (amount > 0),
  currency text NOT NULL,
  state text NOT NULL CHECK (state IN ('paid', 'unpaid')),
  ledger_transaction_id bigint UNIQUE REFERENCES ledger_transactions (id),
  created_at timestamptz NOT NULL,
  paid_at timestamptz,
  PRIMARY KEY (card_id, period),
  CHECK ((state = 'paid') = (ledger_transaction_id IS NOT NULL))
);
CREATE INDEX card_monthly_fees_unpaid ON card_monthly_fees (card_id) WHERE state = 'unpaid';

-- ---- the issuer's callbacks: an inbox like payment_webhooks ---------------------------------

CREATE TABLE card_issuer_callbacks (
  id bigserial PRIMARY KEY,
  issuer text NOT NULL,
  raw_body bytea NOT NULL,
  signature text,
  signature_valid boolean NOT NULL,
  event_id text,
  received_at timestamptz NOT NULL,
  processed_at timestamptz,
  -- applied, duplicate, bad_signature, stale, malformed, unknown_order, wrong_state
  result text
);

-- The exactly-once key of an issuer event (as payment_events).
CREATE TABLE card_issuer_events (
  issuer text NOT NULL,
  event_id text NOT NULL,
  callback_id bigint NOT NULL REFERENCES card_issuer_callbacks (id),
  card_id bigint REFERENCES cards (id),
  result text NOT NULL,
  processed_at timestamptz NOT NULL,
  PRIMARY KEY (issuer, event_id)
);

-- ---- the built-in sandbox issuer's own records ----------------------------------------------

-- What the sandbox issuer knows: the orders sent to it and the cards it made. The number and
-- the CVC are AES-256-GCM sealed (the document cipher: iv ‖ tag ‖ ciphertext); only the BIN and
-- the last four are kept in clear. `next_step` runs at `next_at` (housekeeping or the worker).
CREATE TABLE card_sandbox_orders (
  reference uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  -- Our card's public id, as the issuer was told it.
  order_ref text NOT NULL UNIQUE,
  kind text NOT NULL CHECK (kind IN ('virtual', 'physical')),
  delivery_days integer,
  name text NOT NULL,
  next_step text CHECK (next_step IN ('accept', 'issue', 'ship', 'deliver', 'activate', 'fail')),
  next_at timestamptz,
  pan_enc bytea,
  cvc_enc bytea,
  bin text,
  last4 text,
  expiry_month integer,
  expiry_year integer,
  -- The event made by the last step and not yet delivered (delivered again until it is).
  outbox jsonb,
  -- Events made so far, numbered for their ids.
  events_sent integer NOT NULL DEFAULT 0,
  created_at timestamptz NOT NULL,
  updated_at timestamptz NOT NULL
);
CREATE INDEX card_sandbox_orders_due ON card_sandbox_orders (next_at) WHERE next_step IS NOT NULL OR outbox IS NOT NULL;
