-- Wrong passwords per (client address, account): after a few, that address waits longer and
-- longer before its next try for that account, while the owner signs in from anywhere else
-- (an account-wide lock let anyone lock the owner out). `email_key` is the lower-cased address
-- typed, known or not, so the answers tell nothing about which addresses have accounts.
CREATE TABLE password_failures (
  ip_key text NOT NULL,
  email_key text NOT NULL,
  failures integer NOT NULL,
  last_failed_at timestamptz NOT NULL,
  PRIMARY KEY (ip_key, email_key)
);
CREATE INDEX password_failures_last ON password_failures (last_failed_at);

-- When the owner was last told that someone kept trying wrong passwords: one mail a day at most.
CREATE TABLE password_failure_notices (
  user_id bigint PRIMARY KEY REFERENCES users (id) ON DELETE CASCADE,
  mailed_at timestamptz NOT NULL
);
