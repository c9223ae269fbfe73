-- A refunded fee takes its referrer's share back, in the refund's transaction: the fee's accrual
-- (p_source, p_source_id) is reversed (ledger_reverse of its 'referral' transaction: liability →
-- the fees account, through the same liquidity shards) and marked so. A pending accrual is then
-- never settled; one already paid is clawed back from the referrer's next settlement
-- (referral_settle). The accrual row is locked first (as referral_settle claims it), then
-- p_lock (the caller's accounts for the refund) with the reversal's accounts in one ascending
-- order. Returns the accrual id, or NULL when the fee accrued nothing (p_lock locked all the same).
CREATE OR REPLACE FUNCTION referral_reverse(p_source text, p_source_id bigint, p_lock bigint[], p_actor text) RETURNS bigint LANGUAGE plpgsql
  SET plan_cache_mode = force_generic_plan AS $$
DECLARE
  v_id bigint;
  v_tx bigint;
BEGIN
  SELECT id, transaction_id INTO v_id, v_tx FROM referral_accruals
    WHERE source = p_source AND source_id = p_source_id AND reversal_transaction_id IS NULL FOR UPDATE;
  IF v_id IS NULL THEN
    PERFORM ledger_lock(p_lock);
    RETURN NULL;
  END IF;
  PERFORM ledger_lock(p_lock || ARRAY(SELECT account_id FROM postings WHERE transaction_id = v_tx));
  UPDATE referral_accruals SET reversal_transaction_id = ledger_reverse(v_tx, 'referral accrual reversed: fee refunded', p_actor) WHERE id = v_id;
  RETURN v_id;
END $$;
