-- Chats (issue 15): the support conversation of each user, private conversations between two
-- users, their messages and files, read cursors, blocks and reports.

CREATE TABLE conversations (
  id bigserial PRIMARY KEY,
  kind text NOT NULL CHECK (kind IN ('support', 'private')),
  -- support: the user; private: the pair, lower id first (one conversation per pair).
  user_a bigint NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  user_b bigint REFERENCES users (id) ON DELETE CASCADE,
  -- support only: closed by an operator, opened again by the user's next message.
  status text NOT NULL DEFAULT 'open' CHECK (status IN ('open', 'closed')),
  -- support only: since when the user's oldest unanswered message waits (NULL: nothing waits).
  waiting_since timestamptz,
  last_message_at timestamptz,
  created_at timestamptz NOT NULL DEFAULT now(),
  CHECK ((kind = 'support' AND user_b IS NULL) OR (kind = 'private' AND user_b IS NOT NULL AND user_a < user_b))
);
CREATE UNIQUE INDEX conversations_support ON conversations (user_a) WHERE kind = 'support';
CREATE UNIQUE INDEX conversations_private ON conversations (user_a, user_b) WHERE kind = 'private';
CREATE INDEX conversations_private_b ON conversations (user_b) WHERE kind = 'private';
CREATE INDEX conversations_waiting ON conversations (waiting_since) WHERE kind = 'support' AND status = 'open';

CREATE TABLE chat_messages (
  id bigserial PRIMARY KEY,
  conversation_id bigint NOT NULL REFERENCES conversations (id) ON DELETE CASCADE,
  -- NULL with an operator name: a support reply.
  sender_id bigint REFERENCES users (id) ON DELETE CASCADE,
  operator text CHECK (length(operator) BETWEEN 1 AND 100),
  text text NOT NULL DEFAULT '' CHECK (length(text) <= 4000),
  created_at timestamptz NOT NULL DEFAULT now(),
  CHECK ((sender_id IS NULL) <> (operator IS NULL))
);
CREATE INDEX chat_messages_conversation ON chat_messages (conversation_id, id);

CREATE TABLE chat_files (
  id bigserial PRIMARY KEY,
  public_id uuid NOT NULL UNIQUE DEFAULT gen_random_uuid(),
  message_id bigint NOT NULL REFERENCES chat_messages (id) ON DELETE CASCADE,
  storage_key text NOT NULL,
  mime text NOT NULL,
  size integer NOT NULL CHECK (size > 0),
  reencoded boolean NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX chat_files_message ON chat_files (message_id);

-- Read cursors: per user and conversation, the last message they have read (never goes back).
CREATE TABLE chat_reads (
  conversation_id bigint NOT NULL REFERENCES conversations (id) ON DELETE CASCADE,
  user_id bigint NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  last_read_message bigint NOT NULL DEFAULT 0,
  PRIMARY KEY (conversation_id, user_id)
);
CREATE INDEX chat_reads_user ON chat_reads (user_id);

-- user_id does not want messages from blocked_id (either may then not write to the other).
CREATE TABLE chat_blocks (
  user_id bigint NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  blocked_id bigint NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  created_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (user_id, blocked_id)
);

CREATE TABLE chat_reports (
  id bigserial PRIMARY KEY,
  conversation_id bigint NOT NULL REFERENCES conversations (id) ON DELETE CASCADE,
  reporter_id bigint NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  reason text NOT NULL DEFAULT '' CHECK (length(reason) <= 1000),
  created_at timestamptz NOT NULL DEFAULT now(),
  reviewed_at timestamptz
);
CREATE INDEX chat_reports_open ON chat_reports (created_at) WHERE reviewed_at IS NULL;
