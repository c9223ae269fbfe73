-- Passkeys (WebAuthn): sign-in with a passkey alone, and a passkey in place of a TOTP code
-- wherever the second factor is asked (domains/security/passkeys.ts).

-- One row per credential. credential_id is the authenticator's id (base64url, as browsers send
-- it); counter is the signature counter the library checks against clones.
CREATE TABLE user_passkeys (
  id bigserial PRIMARY KEY,
  user_id bigint NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  credential_id text NOT NULL UNIQUE,
  public_key bytea NOT NULL,
  counter bigint NOT NULL DEFAULT 0,
  transports text[] NOT NULL DEFAULT '{}',
  name text NOT NULL,
  created_at timestamptz NOT NULL,
  last_used_at timestamptz
);
CREATE INDEX user_passkeys_user ON user_passkeys (user_id, id);

-- A challenge handed to the browser: spent once, within its minutes, for its purpose (and its
-- user, except for a sign-in, where nobody is known yet). The relying party it was made for is
-- kept with it, so checking an answer needs no configuration.
CREATE TABLE webauthn_challenges (
  challenge text PRIMARY KEY,
  purpose text NOT NULL CHECK (purpose IN ('register', 'sign_in', 'second_factor')),
  user_id bigint REFERENCES users (id) ON DELETE CASCADE,
  rp_id text NOT NULL,
  origin text NOT NULL,
  expires_at timestamptz NOT NULL,
  used_at timestamptz,
  CHECK ((purpose = 'sign_in') = (user_id IS NULL))
);
CREATE INDEX webauthn_challenges_expires ON webauthn_challenges (expires_at);

ALTER TABLE sign_ins DROP CONSTRAINT sign_ins_method_check;
ALTER TABLE sign_ins ADD CONSTRAINT sign_ins_method_check CHECK (method IN ('password', 'link', 'second_factor', 'passkey'));

-- session_find() also answers whether 2FA is on (its file creates it anew).
DROP FUNCTION session_find(bytea, integer);
