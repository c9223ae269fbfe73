-- What operators decide about a customer: sign-in blocked (every session ends with it), and
-- withdrawals blocked until a day (on top of the security hold after a password change); and
-- their notes on the customer, which only add up (a correction is a new note).
ALTER TABLE users ADD COLUMN sign_in_blocked_at timestamptz;
ALTER TABLE users ADD COLUMN withdrawals_blocked_until timestamptz;

CREATE TABLE ops_customer_notes (
  id bigserial PRIMARY KEY,
  user_id bigint NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  operator text NOT NULL CHECK (length(operator) BETWEEN 1 AND 300),
  text text NOT NULL CHECK (length(text) BETWEEN 1 AND 2000),
  created_at timestamptz NOT NULL
);
CREATE INDEX ops_customer_notes_user ON ops_customer_notes (user_id, id);
