-- Operators' passkeys: enrolled from their own back-office page and taken at the ops sign-in in
-- place of the TOTP code (domains/ops/passkeys.ts over security/passkeys.ts). Their own tables:
-- an operator's credential is never a customer's, nor looked up as one.
CREATE TABLE operator_passkeys (
  id bigserial PRIMARY KEY,
  operator_id bigint NOT NULL REFERENCES operators (id) ON DELETE CASCADE,
  credential_id text NOT NULL UNIQUE,
  public_key bytea NOT NULL,
  counter bigint NOT NULL DEFAULT 0,
  transports text[] NOT NULL DEFAULT '{}',
  name text NOT NULL,
  created_at timestamptz NOT NULL,
  last_used_at timestamptz
);
CREATE INDEX operator_passkeys_operator ON operator_passkeys (operator_id, id);

-- As webauthn_challenges: a sign-in challenge names nobody (the password names the operator,
-- the passkey must then be theirs); an enrolment's names its operator.
CREATE TABLE operator_webauthn_challenges (
  challenge text PRIMARY KEY,
  purpose text NOT NULL CHECK (purpose IN ('register', 'sign_in')),
  operator_id bigint REFERENCES operators (id) ON DELETE CASCADE,
  rp_id text NOT NULL,
  origin text NOT NULL,
  expires_at timestamptz NOT NULL,
  used_at timestamptz,
  CHECK ((purpose = 'sign_in') = (operator_id IS NULL))
);
CREATE INDEX operator_webauthn_challenges_expires ON operator_webauthn_challenges (expires_at);
