-- The withdrawal address book: destinations (a card number, an IBAN, a chain address and memo) a
-- user saved per payment system and currency. One is added with the second factor (when 2FA is
-- on) and a link confirmed by e-mail, and may be used only from usable_from (24 hours after it
-- was added). The destination itself is kept only as a keyed hash (the document cipher's lookup
-- key) and a masked form to show.
CREATE TABLE withdraw_destinations (
  id bigserial PRIMARY KEY,
  public_id uuid NOT NULL UNIQUE DEFAULT gen_random_uuid(),
  user_id bigint NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  system_id text NOT NULL,
  currency text NOT NULL REFERENCES currencies (code),
  label text NOT NULL CHECK (char_length(label) BETWEEN 1 AND 60),
  shown text NOT NULL,
  destination_hash bytea NOT NULL,
  confirm_hash bytea UNIQUE,
  created_at timestamptz NOT NULL,
  usable_from timestamptz NOT NULL,
  confirmed_at timestamptz,
  removed_at timestamptz
);
CREATE UNIQUE INDEX withdraw_destinations_one ON withdraw_destinations (user_id, destination_hash) WHERE removed_at IS NULL;

-- "Allow-list only": withdrawals go only to usable book entries. Turning it off takes 24 hours
-- (it stays on until withdraw_allowlist_off_at).
ALTER TABLE users ADD COLUMN withdraw_allowlist boolean NOT NULL DEFAULT false;
ALTER TABLE users ADD COLUMN withdraw_allowlist_off_at timestamptz;
