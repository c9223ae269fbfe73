-- Leaving with your data: an export of everything the exchange holds about an account (a ZIP of
-- JSON and CSV, made by the data-exports job into private storage, offered for 24 hours), and
-- closing the account.
CREATE TABLE data_exports (
  id bigserial PRIMARY KEY,
  public_id uuid NOT NULL UNIQUE DEFAULT gen_random_uuid(),
  user_id bigint NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  -- The identity documents' files themselves too (otherwise only what was typed and decided).
  with_files boolean NOT NULL DEFAULT false,
  state text NOT NULL DEFAULT 'queued' CHECK (state IN ('queued', 'ready', 'failed', 'expired')),
  storage_key text,
  size bigint,
  created_at timestamptz NOT NULL,
  ready_at timestamptz,
  expires_at timestamptz,
  CHECK (state <> 'ready' OR (storage_key IS NOT NULL AND expires_at IS NOT NULL))
);
CREATE INDEX data_exports_user ON data_exports (user_id, id);
CREATE INDEX data_exports_queued ON data_exports (id) WHERE state = 'queued';

-- A closed account: every session ended, sign-in refused; its data are kept for the legal period
-- and then erased (personal data removed, the ledger's rows kept, named by the account number
-- only) by the account-erasure job from erase_after.
ALTER TABLE users ADD COLUMN closed_at timestamptz;
ALTER TABLE users ADD COLUMN erase_after timestamptz;
ALTER TABLE users ADD COLUMN erased_at timestamptz;
CREATE INDEX users_erase_due ON users (erase_after) WHERE erased_at IS NULL AND erase_after IS NOT NULL;
