-- Identity verification (KYC): levels, limits per level, submissions with their files, and the
-- audit log of operator actions.

-- 0: e-mail confirmed; 1: identity approved. Set in the same transaction as the approval.
ALTER TABLE users ADD COLUMN verification_level smallint NOT NULL DEFAULT 0 CHECK (verification_level IN (0, 1));

-- The one limits table that payments and cards read: per level and operation, in minor units
-- of `currency` (amounts in other currencies are converted at the current rate), per rolling
-- 24 hours and 30 days. 0 means the operation is not allowed at that level. Operators change
-- the figures with `verification:limits:set`.
CREATE TABLE verification_limits (
  level smallint NOT NULL CHECK (level IN (0, 1)),
  operation text NOT NULL CHECK (operation IN ('deposit', 'withdrawal', 'card')),
  currency text NOT NULL CHECK (currency ~ '^[A-Z0-9]{2,10}$'),
  per_24h numeric(38, 0) NOT NULL CHECK (per_24h >= 0),
  per_30d numeric(38, 0) NOT NULL CHECK (per_30d >= per_24h),
  PRIMARY KEY (level, operation)
);
-- Before identity is proven money may come in, but not leave and not reach a card.
INSERT INTO verification_limits (level, operation, currency, per_24h, per_30d) VALUES
  (0, 'deposit', 'USD', 100000, 300000),
  (0, 'withdrawal', 'USD', 0, 0),
  (0, 'card', 'USD', 0, 0),
  (1, 'deposit', 'USD', 5000000, 20000000),
  (1, 'withdrawal', 'USD', 2000000, 10000000),
  (1, 'card', 'USD', 1000000, 5000000);

CREATE TABLE verifications (
  id bigserial PRIMARY KEY,
  -- What the API shows: random, so ids say nothing about how many people verify.
  public_id uuid NOT NULL UNIQUE DEFAULT gen_random_uuid(),
  user_id bigint NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  type text NOT NULL CHECK (type IN ('passport', 'id_card', 'driver_license')),
  status text NOT NULL DEFAULT 'draft' CHECK (status IN ('draft', 'submitted', 'approved', 'rejected')),
  -- After a rejection: may the user re-upload the rejected files and submit again?
  retry_allowed boolean NOT NULL DEFAULT false,
  -- The document's fields, as the user typed them at submission. The number is AES-256-GCM
  -- (iv ‖ tag ‖ ciphertext, key from DOCUMENT_KEY); its last characters are kept for masking.
  number_enc bytea,
  number_tail text CHECK (length(number_tail) <= 4),
  issuing_country text CHECK (issuing_country ~ '^[A-Z]{2}$'),
  issue_date date,
  expiry_date date,
  first_name text,
  last_name text,
  middle_name text,
  birth_date date,
  decision_note text,
  decided_by text,
  created_at timestamptz NOT NULL DEFAULT now(),
  submitted_at timestamptz,
  decided_at timestamptz,
  CHECK (status = 'draft' OR (number_enc IS NOT NULL AND submitted_at IS NOT NULL)),
  CHECK (status NOT IN ('approved', 'rejected') OR decided_at IS NOT NULL)
);
-- One open submission per account (draft, waiting, or rejected with a retry allowed), and at
-- most one approval.
CREATE UNIQUE INDEX verifications_one_open ON verifications (user_id)
  WHERE status IN ('draft', 'submitted') OR (status = 'rejected' AND retry_allowed);
CREATE UNIQUE INDEX verifications_one_approved ON verifications (user_id) WHERE status = 'approved';
-- The operator queue, oldest first.
CREATE INDEX verifications_queue ON verifications (submitted_at, id) WHERE status = 'submitted';
CREATE INDEX verifications_user ON verifications (user_id, id);

CREATE TABLE verification_files (
  id bigserial PRIMARY KEY,
  public_id uuid NOT NULL UNIQUE DEFAULT gen_random_uuid(),
  verification_id bigint NOT NULL REFERENCES verifications (id) ON DELETE CASCADE,
  side text NOT NULL CHECK (side IN ('front', 'back', 'selfie')),
  -- Server-chosen (storage/index.ts newFileKey); the user's file name is never kept.
  storage_key text NOT NULL UNIQUE,
  mime text NOT NULL CHECK (mime IN ('image/jpeg', 'image/png', 'image/webp', 'application/pdf')),
  size integer NOT NULL CHECK (size > 0),
  reencoded boolean NOT NULL,
  reject_reason text CHECK (reject_reason IN ('blurred', 'cropped', 'expired', 'mismatch', 'wrong_type', 'other')),
  reject_note text,
  created_at timestamptz NOT NULL DEFAULT now(),
  -- A rejected file replaced on retry stays for the record, out of the current set.
  superseded_at timestamptz,
  CHECK (reject_reason IS DISTINCT FROM 'other' OR length(reject_note) > 0)
);
CREATE UNIQUE INDEX verification_files_current ON verification_files (verification_id, side) WHERE superseded_at IS NULL;

-- Every operator action on personal data (viewing the queue, a submission, a file; each
-- decision): who, what, when. Append-only.
CREATE TABLE operator_audit (
  id bigserial PRIMARY KEY,
  operator text NOT NULL CHECK (length(operator) BETWEEN 1 AND 100),
  action text NOT NULL,
  subject text,
  details jsonb NOT NULL DEFAULT '{}',
  at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX operator_audit_subject ON operator_audit (subject, id);

CREATE FUNCTION refuse_audit_change() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  RAISE EXCEPTION 'operator_audit is append-only';
END
$$;
CREATE TRIGGER operator_audit_append_only BEFORE UPDATE OR DELETE OR TRUNCATE ON operator_audit
  FOR EACH STATEMENT EXECUTE FUNCTION refuse_audit_change();
