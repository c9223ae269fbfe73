-- Keys for bots (domains/apikeys): a public id the client sends and a secret it signs requests
-- with (HMAC-SHA256). The secret is shown once; HMAC needs it on this side too, so it is kept
-- sealed with the document cipher (never in plain text, never in logs), not as a one-way hash.
CREATE TABLE api_keys (
  id bigserial PRIMARY KEY,
  public_id text NOT NULL UNIQUE,
  user_id bigint NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  label text NOT NULL CHECK (char_length(label) BETWEEN 1 AND 60),
  secret_sealed bytea NOT NULL,
  scopes text[] NOT NULL CHECK (scopes <@ ARRAY['read', 'exchange', 'transfer'] AND cardinality(scopes) > 0),
  ips text[] NOT NULL DEFAULT '{}',
  created_at timestamptz NOT NULL,
  expires_at timestamptz,
  last_used_at timestamptz,
  last_used_ip text,
  revoked_at timestamptz
);
CREATE INDEX api_keys_user ON api_keys (user_id, id) WHERE revoked_at IS NULL;

-- Each signed request's nonce, once per key. A nonce older than the signature window can no
-- longer be replayed (its timestamp is refused first), so the purge job drops it.
CREATE TABLE api_key_nonces (
  key_id bigint NOT NULL REFERENCES api_keys (id) ON DELETE CASCADE,
  nonce text NOT NULL,
  used_at timestamptz NOT NULL,
  PRIMARY KEY (key_id, nonce)
);
CREATE INDEX api_key_nonces_used ON api_key_nonces (used_at);
