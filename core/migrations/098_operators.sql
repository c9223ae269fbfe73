-- The people who run the exchange: their own table, never a flag on a customer. An operator is
-- created by the command line with roles and a one-time enrolment link; the link sets a password
-- and enrols the second factor (TOTP) before anything else is possible.
CREATE TABLE operators (
  id bigserial PRIMARY KEY,
  email text NOT NULL UNIQUE CHECK (email = lower(email) AND length(email) BETWEEN 3 AND 254),
  password_hash text,
  totp_secret text,
  totp_last_step bigint NOT NULL DEFAULT 0,
  enrol_token_hash bytea UNIQUE,
  enrol_expires_at timestamptz,
  enrolled_at timestamptz,
  disabled_at timestamptz,
  locale text NOT NULL DEFAULT 'ru' CHECK (locale IN ('ru', 'en')),
  created_at timestamptz NOT NULL DEFAULT now(),
  CHECK (enrolled_at IS NULL OR (password_hash IS NOT NULL AND totp_secret IS NOT NULL))
);

-- Named permissions grouped in roles; each /api/ops route declares the permission it needs.
CREATE TABLE ops_permissions (name text PRIMARY KEY CHECK (name ~ '^[a-z_]+\.[a-z_]+$'));
CREATE TABLE ops_roles (name text PRIMARY KEY CHECK (name ~ '^[a-z_]+$'));
CREATE TABLE ops_role_permissions (
  role text NOT NULL REFERENCES ops_roles (name),
  permission text NOT NULL REFERENCES ops_permissions (name),
  PRIMARY KEY (role, permission)
);
CREATE TABLE operator_roles (
  operator_id bigint NOT NULL REFERENCES operators (id),
  role text NOT NULL REFERENCES ops_roles (name),
  PRIMARY KEY (operator_id, role)
);

INSERT INTO ops_permissions (name) VALUES
  ('support.reply'), ('support.view_files'), ('chat.reports'), ('kyc.review'), ('kyc.view_documents'),
  ('customers.view'), ('customers.view_personal'), ('customers.block'), ('customers.note'),
  ('audit.view'), ('operators.manage'), ('queues.view');
INSERT INTO ops_roles (name) VALUES ('support'), ('compliance'), ('finance'), ('content'), ('admin');
INSERT INTO ops_role_permissions (role, permission) VALUES
  ('support', 'support.reply'), ('support', 'support.view_files'), ('support', 'chat.reports'), ('support', 'customers.view'),
  ('support', 'customers.note'), ('support', 'queues.view'),
  ('compliance', 'kyc.review'), ('compliance', 'kyc.view_documents'), ('compliance', 'customers.view'),
  ('compliance', 'customers.view_personal'), ('compliance', 'customers.block'), ('compliance', 'customers.note'),
  ('compliance', 'chat.reports'), ('compliance', 'audit.view'), ('compliance', 'queues.view'),
  ('finance', 'customers.view'), ('finance', 'queues.view'),
  ('content', 'queues.view'),
  ('admin', 'operators.manage'), ('admin', 'audit.view'), ('admin', 'customers.view'), ('admin', 'queues.view');

-- An operator's sign-in: idle 15 minutes, at most 8 hours, revocable; when the second factor was
-- last given (step-up asks again after 5 minutes).
CREATE TABLE ops_sessions (
  id bigserial PRIMARY KEY,
  operator_id bigint NOT NULL REFERENCES operators (id),
  token_hash bytea NOT NULL UNIQUE,
  created_at timestamptz NOT NULL,
  last_seen_at timestamptz NOT NULL,
  second_factor_at timestamptz NOT NULL,
  revoked_at timestamptz,
  ip text
);
CREATE INDEX ops_sessions_operator ON ops_sessions (operator_id) WHERE revoked_at IS NULL;
