-- Mails when money moves, and the anti-phishing code.
--
-- A phrase the user chooses in /settings/mail, printed at the top of every mail sent to them, so
-- that a mail without it (or with another) is known not to be ours.
ALTER TABLE users ADD COLUMN anti_phishing_code text CHECK (char_length(anti_phishing_code) BETWEEN 4 AND 32);

-- The money mails' switches, one per kind of movement (a withdrawal requested is a security mail:
-- it has no switch).
ALTER TABLE mail_preferences
  ADD COLUMN deposits boolean NOT NULL DEFAULT true,
  ADD COLUMN withdrawals boolean NOT NULL DEFAULT true,
  ADD COLUMN transfers boolean NOT NULL DEFAULT true,
  ADD COLUMN cards boolean NOT NULL DEFAULT true;

-- A money mail to write: put in the transaction of the movement itself (by the SQL functions of
-- the ledger's hot paths too, which cannot render mails), written into the outbox in the user's
-- language by the money-mails job, which deletes the row in the same transaction (once).
CREATE TABLE money_mail_queue (
  id bigserial PRIMARY KEY,
  user_id bigint NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  kind text NOT NULL CHECK (kind IN ('deposit_credited', 'withdrawal_requested', 'withdrawal_sent', 'withdrawal_failed', 'transfer_received', 'card_ordered',
    'card_issued')),
  -- What the mail says: amounts in minor units as text with their currency, ids, the other party's user id.
  vars jsonb NOT NULL DEFAULT '{}',
  created_at timestamptz NOT NULL DEFAULT now()
);
