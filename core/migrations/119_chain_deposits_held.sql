-- A chain deposit whose confirmations are complete but whose value is above what its customer's
-- verification level may bring in (verification_limits, 24 hours and 30 days): the money is on
-- our address all the same, so the deposit is held (it stays `pending`, held_at set) until an
-- operator releases it to the customer's wallet from the payments desk (`payments.review`).
ALTER TABLE payments ADD COLUMN held_at timestamptz;
CREATE INDEX payments_held ON payments (held_at) WHERE held_at IS NOT NULL AND state = 'pending';
