-- Four eyes: what one operator may not do alone is proposed as a request and run only when a
-- second operator approves it, in the transaction that records the approval. The database itself
-- refuses a decision by the proposer and any change to a decided request
-- (sql/functions/ops_request_guard.sql); a request not decided within 24 hours lapses.
INSERT INTO ops_permissions (name) VALUES ('customers.reset_second_factor');
INSERT INTO ops_role_permissions (role, permission) VALUES ('compliance', 'customers.reset_second_factor'), ('admin', 'customers.reset_second_factor');

CREATE TABLE ops_requests (
  id bigserial PRIMARY KEY,
  action text NOT NULL CHECK (action ~ '^[a-z_]+\.[a-z_]+$'),
  params jsonb NOT NULL,
  subject text NOT NULL,
  reason_code text NOT NULL,
  reason_text text,
  proposed_by bigint NOT NULL REFERENCES operators (id),
  proposed_at timestamptz NOT NULL,
  expires_at timestamptz NOT NULL CHECK (expires_at > proposed_at),
  state text NOT NULL DEFAULT 'pending' CHECK (state IN ('pending', 'approved', 'declined', 'withdrawn', 'lapsed')),
  decided_by bigint REFERENCES operators (id),
  decided_at timestamptz,
  CHECK ((state = 'pending') = (decided_at IS NULL)),
  CHECK (state NOT IN ('approved', 'declined') OR decided_by IS NOT NULL)
);
CREATE INDEX ops_requests_pending ON ops_requests (proposed_at) WHERE state = 'pending';
-- One open request per action and subject: a second proposal of the same change waits for the first.
CREATE UNIQUE INDEX ops_requests_one_open ON ops_requests (action, subject) WHERE state = 'pending';
