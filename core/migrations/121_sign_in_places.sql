-- The devices (browser and system, without versions) and networks (IPv4 /24, IPv6 /48) each
-- account has signed in from. A successful sign-in from one not seen before, on an account that
-- has signed in before, mails its owner (with a "this wasn't me" link).
CREATE TABLE sign_in_places (
  user_id bigint NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  kind text NOT NULL CHECK (kind IN ('device', 'network')),
  key text NOT NULL CHECK (char_length(key) <= 200),
  first_seen_at timestamptz NOT NULL,
  last_seen_at timestamptz NOT NULL,
  PRIMARY KEY (user_id, kind, key)
);

-- The "this wasn't me" link of each such mail: 7 days, spent once (sessions revoked, withdrawals
-- held 24 hours, a password reset opened).
CREATE TABLE sign_in_alerts (
  id bigserial PRIMARY KEY,
  user_id bigint NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  report_hash bytea NOT NULL UNIQUE,
  created_at timestamptz NOT NULL,
  report_until timestamptz NOT NULL,
  reported_at timestamptz
);
