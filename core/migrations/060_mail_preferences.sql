-- Mail preferences (issue 13, /settings/mail): which optional mails an account gets. Security
-- mails (sign-in links, resets, password changes, verification decisions) have no switch.
-- No row: every optional mail is on.
CREATE TABLE mail_preferences (
  user_id bigint PRIMARY KEY REFERENCES users (id),
  news boolean NOT NULL DEFAULT true,
  referral boolean NOT NULL DEFAULT true,
  chat_digest boolean NOT NULL DEFAULT true,
  updated_at timestamptz NOT NULL DEFAULT now()
);

-- Addresses without an account that followed an unsubscribe link (a referral invitation's):
-- no more mails of that topic to them. Lower-cased.
CREATE TABLE mail_unsubscribed (
  address text NOT NULL CHECK (address = lower(address)),
  topic text NOT NULL CHECK (topic IN ('news', 'referral', 'chat_digest')),
  created_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (address, topic)
);

-- The key that signs unsubscribe links, made once by the first core that needs it (every core
-- instance reads the same one).
CREATE TABLE mail_link_key (
  id boolean PRIMARY KEY DEFAULT true CHECK (id),
  secret bytea NOT NULL CHECK (length(secret) >= 32),
  created_at timestamptz NOT NULL DEFAULT now()
);

-- Extra headers of a mail (List-Unsubscribe, List-Unsubscribe-Post), sent as they are.
ALTER TABLE mail_outbox ADD COLUMN headers jsonb;
