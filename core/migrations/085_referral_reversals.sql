-- Referral accruals of refunded fees (issue 17: card fees). A refunded fee's accrual is
-- reversed in the refund's transaction (ledger_reverse of its 'referral' transaction): a
-- pending one is never paid; one already paid is clawed back from the referrer's next
-- settlement (`clawed_by`), which pays that much less.
ALTER TABLE referral_accruals
  ADD COLUMN reversal_transaction_id bigint UNIQUE REFERENCES ledger_transactions (id),
  ADD COLUMN clawed_by bigint REFERENCES referral_settlements (id),
  ADD CHECK (clawed_by IS NULL OR (reversal_transaction_id IS NOT NULL AND settlement_id IS NOT NULL));
CREATE INDEX referral_accruals_clawback ON referral_accruals (referrer_id, currency)
  WHERE reversal_transaction_id IS NOT NULL AND settlement_id IS NOT NULL AND clawed_by IS NULL;

-- What a settlement held back for paid accruals reversed since: its accruals sum to amount + clawed.
ALTER TABLE referral_settlements ADD COLUMN clawed numeric(38, 0) NOT NULL DEFAULT 0 CHECK (clawed >= 0);
