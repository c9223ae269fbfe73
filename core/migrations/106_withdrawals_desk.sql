-- The withdrawals desk (/ops/withdrawals): finance reviews the requests that wait for an operator
-- and the payouts in trouble (`withdrawals.review`); a withdrawal at or above its currency's
-- four-eyes amount is approved by a second operator (`withdrawals.approve_large`, an ops request).
INSERT INTO ops_permissions (name) VALUES ('withdrawals.review'), ('withdrawals.approve_large');
INSERT INTO ops_role_permissions (role, permission) VALUES ('finance', 'withdrawals.review'), ('finance', 'withdrawals.approve_large');

-- Per currency, from which amount (minor units) a manual approval needs a second operator; a
-- currency without a row needs one operator. Set with `ops withdraw:large <CUR> <amount>`; the
-- seed fills an empty table.
CREATE TABLE withdraw_large_amounts (
  currency text PRIMARY KEY REFERENCES currencies (code),
  min_amount numeric NOT NULL CHECK (min_amount > 0)
);
