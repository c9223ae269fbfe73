-- Holds (issue 14): money a user still owns but may not spend, because a withdrawal or a card
-- order waits for it. A held balance is its own ledger account per user and currency (kind
-- 'hold'), so placing, releasing and capturing a hold are ordinary balanced ledger
-- transactions: available → held (place), held → available (release), held → a house account
-- (capture: clearing, fees, card_fees). The functions are core/sql/functions/ledger_hold_*.sql.
--
-- A hold account names its user in `holder_id`, not `user_id`: `user_id` keeps meaning "the
-- available wallet" (unique per user and currency), so every existing lookup of a user's
-- account by (user_id, currency) still finds exactly one row. Its name ('user:<id>') keeps
-- house-account names unique too.

-- Adds values to a column CHECK of the form `col IN (...)`, keeping whatever values it allows
-- now (another migration may have added its own).
CREATE OR REPLACE FUNCTION pg_temp.widen_in_check(p_table text, p_constraint text, p_column text, p_values text[]) RETURNS void LANGUAGE plpgsql AS $$
DECLARE
  v_def text;
  v_values text[];
BEGIN
  SELECT pg_get_constraintdef(c.oid) INTO v_def FROM pg_constraint c
    WHERE c.conrelid = p_table::regclass AND c.conname = p_constraint;
  SELECT array_agg(DISTINCT v) INTO v_values FROM (
    SELECT (regexp_matches(coalesce(v_def, ''), '''([a-z_]+)''', 'g'))[1] AS v
    UNION SELECT unnest(p_values)) AS all_values;
  EXECUTE format('ALTER TABLE %I DROP CONSTRAINT IF EXISTS %I', p_table, p_constraint);
  EXECUTE format('ALTER TABLE %I ADD CONSTRAINT %I CHECK (%I = ANY (%L::text[]))', p_table, p_constraint, p_column, v_values);
END $$;

SELECT pg_temp.widen_in_check('ledger_accounts', 'ledger_accounts_kind_check', 'kind', ARRAY['hold']);
-- hold: placing one; release: giving it back. A capture is posted with its purpose's own kind
-- (withdrawal, card).
SELECT pg_temp.widen_in_check('ledger_transactions', 'ledger_transactions_kind_check', 'kind', ARRAY['hold', 'release']);

ALTER TABLE ledger_accounts ADD COLUMN holder_id bigint REFERENCES users (id);
ALTER TABLE ledger_accounts ADD CONSTRAINT ledger_accounts_holder CHECK ((kind = 'hold') = (holder_id IS NOT NULL));
-- As for wallets: the last line of defence (ledger_post refuses first, with a clear error).
ALTER TABLE ledger_accounts ADD CONSTRAINT hold_balance_not_negative CHECK (kind <> 'hold' OR balance >= 0);
CREATE UNIQUE INDEX ledger_accounts_hold ON ledger_accounts (holder_id, currency) WHERE holder_id IS NOT NULL;

-- One row per hold: what it is for, how much, and the ledger transactions that placed and
-- ended it. It ends once: released or captured, never both (the row lock and `state = 'held'`
-- decide; see ledger_hold_release / ledger_hold_capture).
CREATE TABLE holds (
  id bigserial PRIMARY KEY,
  user_id bigint NOT NULL REFERENCES users (id),
  -- (no foreign key to currencies: see transfers.currency)
  currency text NOT NULL,
  amount numeric(38, 0) NOT NULL CHECK (amount > 0),
  -- What waits for it, e.g. 'withdrawal:42', 'card_order:7'.
  purpose text NOT NULL,
  state text NOT NULL DEFAULT 'held' CHECK (state IN ('held', 'released', 'captured')),
  place_transaction_id bigint NOT NULL UNIQUE REFERENCES ledger_transactions (id),
  final_transaction_id bigint UNIQUE REFERENCES ledger_transactions (id),
  created_at timestamptz NOT NULL DEFAULT now(),
  finished_at timestamptz,
  CHECK ((state = 'held') = (final_transaction_id IS NULL)),
  CHECK ((state = 'held') = (finished_at IS NULL))
);
CREATE INDEX holds_user ON holds (user_id, currency) WHERE state = 'held';
CREATE INDEX holds_purpose ON holds (purpose);
