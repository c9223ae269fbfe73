-- The payments desk (/ops/payments, `payments.review`, finance): failed provider deliveries,
-- bank payments that matched no deposit, chain deposits waiting for confirmations, card orders
-- waiting on the issuer. Matching a bank payment to a deposit of another amount is a four-eyes
-- request (`payments.match`) under the same permission.
INSERT INTO ops_permissions (name) VALUES ('payments.review');
INSERT INTO ops_role_permissions (role, permission) VALUES ('finance', 'payments.review');

-- A bank payment that arrived and credited nothing (its reference matched no open deposit, or the
-- deposit expected another amount or currency, or had expired): the money is at our bank, so it
-- is held here, written in the inbox transaction that applied its event (once per event id),
-- until an operator matches it to a customer's deposit. Amount in minor units of its currency.
CREATE TABLE bank_payments_held (
  id bigserial PRIMARY KEY,
  provider text NOT NULL,
  event_id text NOT NULL,
  -- The bank's id of the transfer (the event's payment_id).
  transfer_id text NOT NULL,
  reference text,
  payer text,
  currency text NOT NULL REFERENCES currencies (code),
  amount numeric(38, 0) NOT NULL CHECK (amount > 0),
  -- Why it credited nothing: the inbox's result (unknown_payment, amount_mismatch, currency_mismatch, wrong_state).
  why text NOT NULL,
  received_at timestamptz NOT NULL,
  state text NOT NULL DEFAULT 'held' CHECK (state IN ('held', 'matched')),
  -- The deposit it was matched to and credited through; one payment credits one deposit once.
  payment_id bigint UNIQUE REFERENCES payments (id),
  matched_by text,
  matched_at timestamptz,
  UNIQUE (provider, event_id),
  CHECK ((state = 'matched') = (payment_id IS NOT NULL AND matched_at IS NOT NULL))
);
CREATE INDEX bank_payments_held_waiting ON bank_payments_held (received_at) WHERE state = 'held';
