-- A correction: the same postings with the opposite sign, at most once per transaction.
CREATE OR REPLACE FUNCTION ledger_reverse(p_tx bigint, p_memo text, p_actor text) RETURNS bigint LANGUAGE plpgsql
  SET plan_cache_mode = force_generic_plan AS $$
DECLARE
  v_accounts bigint[];
  v_amounts numeric[];
BEGIN
  IF EXISTS (SELECT 1 FROM ledger_transactions WHERE reverses = p_tx) THEN
    RAISE EXCEPTION 'already_reversed' USING ERRCODE = 'OB000', DETAIL = json_build_object('transaction', p_tx::text)::text;
  END IF;
  SELECT array_agg(account_id ORDER BY id), array_agg(-amount ORDER BY id) INTO v_accounts, v_amounts
    FROM postings WHERE transaction_id = p_tx;
  IF v_accounts IS NULL THEN
    RAISE EXCEPTION 'transaction_not_found' USING ERRCODE = 'OB000', DETAIL = json_build_object('transaction', p_tx::text)::text;
  END IF;
  RETURN ledger_post('reversal', v_accounts, v_amounts, p_memo, p_actor, p_tx);
END $$;
