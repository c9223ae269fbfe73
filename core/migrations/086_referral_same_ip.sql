-- Same-IP self-referral (issue 17): a sign-up from an address the referrer's account used in
-- the last `same_ip_days` days (its sessions, its successful sign-ins) binds nobody; 0 turns
-- the check off.
ALTER TABLE referral_terms ADD COLUMN same_ip_days integer NOT NULL DEFAULT 30 CHECK (same_ip_days >= 0);

-- The address that asked for a sign-up link, checked together with the one that follows it.
ALTER TABLE auth_tokens ADD COLUMN ref_ip text;

-- Why a valid invite code bound nobody (the sign-up itself says nothing): for operators
-- (`referral:refusals`). Written once, never changed.
CREATE TABLE referral_refusals (
  id bigserial PRIMARY KEY,
  referee_id bigint NOT NULL REFERENCES users (id),
  referrer_id bigint NOT NULL REFERENCES users (id),
  code text NOT NULL REFERENCES referral_codes (code),
  reason text NOT NULL CHECK (reason IN ('same_ip')),
  ip text NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX referral_refusals_created ON referral_refusals (created_at DESC);
