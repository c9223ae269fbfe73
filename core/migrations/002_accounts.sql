-- Accounts: users, sessions, one-time links, the mail outbox and rate-limit counters.

CREATE TABLE users (
  id bigserial PRIMARY KEY,
  -- What people see and type (header, transfers): 7 random digits and a Luhn check digit, so
  -- ids say nothing about sign-up order or user count and a mistyped digit is caught.
  account_id integer NOT NULL UNIQUE CHECK (account_id BETWEEN 10000000 AND 99999999),
  email text NOT NULL CHECK (length(email) BETWEEN 3 AND 254),
  -- NULL: the user signed up by a one-time link and has not set a password yet.
  password_hash text,
  locale text NOT NULL DEFAULT 'ru' CHECK (locale IN ('ru', 'en')),
  need_set_password boolean NOT NULL DEFAULT false,
  email_confirmed_at timestamptz,
  -- Personal data (GET/POST /api/user/info).
  first_name text,
  last_name text,
  middle_name text,
  birth_date date,
  phone text,
  country text CHECK (country ~ '^[A-Z]{2}$'),
  city text,
  address text,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now()
);
-- Case-insensitive uniqueness without citext (PGlite has no citext).
CREATE UNIQUE INDEX users_email_lower ON users (lower(email));

CREATE TABLE sessions (
  id bigserial PRIMARY KEY,
  -- sha256 of the 256-bit token: a database leak hands out no usable session.
  token_hash bytea NOT NULL UNIQUE,
  user_id bigint NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  created_at timestamptz NOT NULL DEFAULT now(),
  last_seen_at timestamptz NOT NULL DEFAULT now(),
  expires_at timestamptz NOT NULL,
  revoked_at timestamptz,
  ip text,
  user_agent text
);
CREATE INDEX sessions_user_live ON sessions (user_id) WHERE revoked_at IS NULL;
CREATE INDEX sessions_expires ON sessions (expires_at);

-- One-time links: passwordless sign-in, password reset, email confirmation (and sign-up,
-- which carries the chosen password hash until the mailbox owner confirms).
CREATE TABLE auth_tokens (
  id bigserial PRIMARY KEY,
  kind text NOT NULL CHECK (kind IN ('sign_in', 'reset', 'confirm_email')),
  token_hash bytea NOT NULL UNIQUE,
  user_id bigint REFERENCES users (id) ON DELETE CASCADE,
  -- For a link to an address with no account yet (sign-up, first passwordless sign-in).
  email text,
  locale text NOT NULL DEFAULT 'ru' CHECK (locale IN ('ru', 'en')),
  password_hash text,
  created_at timestamptz NOT NULL DEFAULT now(),
  expires_at timestamptz NOT NULL,
  used_at timestamptz,
  CHECK (user_id IS NOT NULL OR email IS NOT NULL)
);
CREATE INDEX auth_tokens_user_open ON auth_tokens (user_id, kind) WHERE used_at IS NULL;
CREATE INDEX auth_tokens_expires ON auth_tokens (expires_at);

-- Every mail is written here first. With SMTP configured a sender delivers and marks it;
-- without, it stays here and the dev-only mailbox shows it.
CREATE TABLE mail_outbox (
  id bigserial PRIMARY KEY,
  kind text NOT NULL,
  to_address text NOT NULL,
  subject text NOT NULL,
  text_body text NOT NULL,
  html_body text NOT NULL,
  locale text NOT NULL CHECK (locale IN ('ru', 'en')),
  created_at timestamptz NOT NULL DEFAULT now(),
  sent_at timestamptz,
  attempts integer NOT NULL DEFAULT 0,
  next_attempt_at timestamptz NOT NULL DEFAULT now(),
  last_error text
);
CREATE INDEX mail_outbox_pending ON mail_outbox (next_attempt_at) WHERE sent_at IS NULL;
CREATE INDEX mail_outbox_to ON mail_outbox (lower(to_address), id);

-- Fixed-window counters shared by every core instance: nothing is kept in process memory.
CREATE TABLE rate_limits (
  key text PRIMARY KEY,
  window_start timestamptz NOT NULL,
  window_seconds integer NOT NULL,
  hits integer NOT NULL
);
CREATE INDEX rate_limits_window ON rate_limits (window_start);
