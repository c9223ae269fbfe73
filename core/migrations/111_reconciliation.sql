-- Reconciliation (/ops/reconciliation): finance sees the providers' records against the ledger's
-- clearing accounts (`reconciliation.view`) and resolves what differs (`reconciliation.resolve`):
-- explained in words, or by a `ledger.adjust` proposal a second operator approves.
INSERT INTO ops_permissions (name) VALUES ('reconciliation.view'), ('reconciliation.resolve');
INSERT INTO ops_role_permissions (role, permission) VALUES ('finance', 'reconciliation.view'), ('finance', 'reconciliation.resolve');

-- The suspense list: each difference a reconciliation found, once (a run over the same period
-- again finds the same key), until it is explained or its adjustment approved. Amounts in minor
-- units, as the reconciliation found them.
CREATE TABLE reconciliation_suspense (
  id bigserial PRIMARY KEY,
  kind text NOT NULL,
  provider text NOT NULL,
  currency text NOT NULL,
  reference text NOT NULL,
  provider_amount numeric,
  ledger_amount numeric,
  found_at timestamptz NOT NULL,
  explanation text,
  -- The latest adjustment proposed for it; a declined or lapsed one leaves the item open.
  request_id bigint REFERENCES ops_requests (id),
  resolved_by bigint REFERENCES operators (id),
  resolved_at timestamptz,
  UNIQUE (provider, kind, currency, reference)
);
CREATE INDEX reconciliation_suspense_open ON reconciliation_suspense (found_at) WHERE explanation IS NULL;
