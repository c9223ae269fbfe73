-- Purchases (issue 14): buying a currency by paying another through a payment system (the card
-- sandbox's hosted page). The quote is locked when the purchase opens; when the payment is
-- paid, the fiat credit and the exchange at the locked rate are ONE ledger transaction (kind
-- 'purchase'). A quote expired by then is re-quoted: within the tolerance the exchange runs at
-- the new rate, beyond it the user keeps the fiat (outcome says which).

CREATE TABLE purchases (
  payment_id bigint PRIMARY KEY REFERENCES payments (id),
  buy_currency text NOT NULL REFERENCES currencies (code),
  -- The locked quote of the amount left after the system's fee (pay, in the paid currency's
  -- minor units): the pair's fee, the part that buys `receive` (spent), the rounding remainder.
  pay numeric(38, 0) NOT NULL CHECK (pay > 0),
  pair_fee numeric(38, 0) NOT NULL CHECK (pair_fee >= 0),
  spent numeric(38, 0) NOT NULL CHECK (spent > 0),
  remainder numeric(38, 0) NOT NULL CHECK (remainder >= 0),
  receive numeric(38, 0) NOT NULL CHECK (receive > 0),
  rate text NOT NULL,
  quote_expires_at timestamptz NOT NULL,
  -- What happened when the payment was paid: at the locked quote, re-quoted within the
  -- tolerance (the final figures below), or the fiat kept in the wallet.
  outcome text CHECK (outcome IN ('exchanged', 'requoted', 'kept_fiat')),
  final_receive numeric(38, 0),
  final_rate text,
  CHECK (pay = pair_fee + spent + remainder),
  CHECK ((outcome IN ('exchanged', 'requoted')) = (final_receive IS NOT NULL))
);

-- Adds 'purchase' to the transaction kinds, keeping every kind allowed now, whichever form the
-- constraint's definition has (ARRAY['a'::text, …] or '{a,b}'::text[]: migration 025 writes the
-- latter); written back as an IN list, the form 025 reads.
DO $$
DECLARE
  v_def text;
  v_values text[];
BEGIN
  SELECT pg_get_constraintdef(c.oid) INTO v_def FROM pg_constraint c
    WHERE c.conrelid = 'ledger_transactions'::regclass AND c.conname = 'ledger_transactions_kind_check';
  SELECT array_agg(DISTINCT v ORDER BY v) INTO v_values FROM (
    SELECT (regexp_matches(coalesce(v_def, ''), '([a-z_]+)', 'g'))[1] AS v
    UNION SELECT 'purchase') AS found
    WHERE v NOT IN ('kind', 'any', 'array', 'text', 'check');
  ALTER TABLE ledger_transactions DROP CONSTRAINT IF EXISTS ledger_transactions_kind_check;
  EXECUTE format('ALTER TABLE ledger_transactions ADD CONSTRAINT ledger_transactions_kind_check CHECK (kind IN (%s))',
    (SELECT string_agg(quote_literal(v), ', ') FROM unnest(v_values) AS v));
END $$;
