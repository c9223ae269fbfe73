-- Account security (issue 13): TOTP second factor, recovery codes, the "security changed at"
-- mark that holds withdrawals for 24 hours, the sign-in log and the second step of a password
-- sign-in.

-- Set on password change and reset, on turning 2FA off and on an e-mail change: withdrawals
-- wait 24 hours after it (domains/security/service.ts withdrawalsBlockedUntil).
ALTER TABLE users ADD COLUMN security_changed_at timestamptz;

-- One TOTP secret per user (RFC 6238, SHA-1, 6 digits, 30 s). enabled_at NULL: enrolment
-- started (the secret is shown), not yet confirmed by a code; such a row does nothing.
CREATE TABLE user_totp (
  user_id bigint PRIMARY KEY REFERENCES users (id) ON DELETE CASCADE,
  secret text NOT NULL CHECK (secret ~ '^[A-Z2-7]{32}$'),
  created_at timestamptz NOT NULL DEFAULT now(),
  enabled_at timestamptz,
  -- The time step of the last accepted code: a code (or an older one) is never accepted twice.
  last_step bigint NOT NULL DEFAULT 0
);

-- Ten single-use recovery codes (80 random bits each), kept as sha256.
CREATE TABLE recovery_codes (
  id bigserial PRIMARY KEY,
  user_id bigint NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  code_hash bytea NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  used_at timestamptz,
  UNIQUE (user_id, code_hash)
);

-- Every sign-in attempt of a known account: the last 20 are shown on /settings/security.
CREATE TABLE sign_ins (
  id bigserial PRIMARY KEY,
  user_id bigint NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  at timestamptz NOT NULL DEFAULT now(),
  ip text,
  user_agent text,
  method text NOT NULL CHECK (method IN ('password', 'link', 'second_factor')),
  success boolean NOT NULL,
  -- Why it failed: 'password' or 'code'.
  failure text CHECK (failure IN ('password', 'code', 'expired'))
);
CREATE INDEX sign_ins_user ON sign_ins (user_id, id DESC);

-- The second step of a password sign-in with 2FA on: the password was right, the session is
-- made only after a code. A short-lived, single-use token (sha256 kept), 5 tries at most.
CREATE TABLE sign_in_challenges (
  id bigserial PRIMARY KEY,
  token_hash bytea NOT NULL UNIQUE,
  user_id bigint NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  created_at timestamptz NOT NULL DEFAULT now(),
  expires_at timestamptz NOT NULL,
  used_at timestamptz,
  attempts integer NOT NULL DEFAULT 0
);
CREATE INDEX sign_in_challenges_expires ON sign_in_challenges (expires_at);
