-- Binding or changing an account's e-mail (/settings/bind-email). Nothing changes until the
-- link mailed to the new address is followed; the old address gets a notice with an "it was
-- not me" link that stops the change (or undoes it) and signs every device out.
CREATE TABLE email_changes (
  id bigserial PRIMARY KEY,
  user_id bigint NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  old_email text NOT NULL,
  new_email text NOT NULL CHECK (length(new_email) BETWEEN 3 AND 254),
  -- sha256 of the two one-time tokens: the confirmation (to the new address) and the report
  -- (to the old one).
  confirm_hash bytea NOT NULL UNIQUE,
  report_hash bytea NOT NULL UNIQUE,
  created_at timestamptz NOT NULL DEFAULT now(),
  expires_at timestamptz NOT NULL,
  report_until timestamptz NOT NULL,
  confirmed_at timestamptz,
  -- Replaced by a newer request, or stopped by the report.
  cancelled_at timestamptz,
  reported_at timestamptz
);
CREATE INDEX email_changes_user ON email_changes (user_id, id DESC);
