-- Captures a hold: its whole amount leaves the user's held balance for house accounts
-- (clearing of the payment system, fees, card_fees...), split as p_accounts/p_amounts say (the
-- amounts, all positive, sum to the hold's amount), in one ledger transaction of kind p_kind
-- (the purpose's own: 'withdrawal', 'card'), once. Locks as ledger_hold_release: the hold row,
-- then every account in ascending id order. Returns the ledger transaction id.
CREATE OR REPLACE FUNCTION ledger_hold_capture(
  p_hold bigint, p_accounts bigint[], p_amounts numeric[], p_kind text, p_memo text DEFAULT NULL, p_actor text DEFAULT NULL
) RETURNS bigint LANGUAGE plpgsql
  SET plan_cache_mode = force_generic_plan AS $$
DECLARE
  h holds;
  v_total numeric := 0;
  v_amount numeric;
  v_tx bigint;
BEGIN
  h := ledger_hold_lock(p_hold);
  IF coalesce(array_length(p_accounts, 1), 0) = 0 OR array_length(p_accounts, 1) <> coalesce(array_length(p_amounts, 1), 0) THEN
    RAISE EXCEPTION 'ledger_hold_capture: % accounts, % amounts', array_length(p_accounts, 1), array_length(p_amounts, 1) USING ERRCODE = 'OB902';
  END IF;
  FOREACH v_amount IN ARRAY p_amounts LOOP
    IF v_amount IS NULL OR v_amount < 0 THEN
      RAISE EXCEPTION 'ledger_hold_capture: amount % is not positive', v_amount USING ERRCODE = 'OB902';
    END IF;
    v_total := v_total + v_amount;
  END LOOP;
  IF v_total <> h.amount THEN
    RAISE EXCEPTION 'ledger_hold_capture: % captured of a hold of %', v_total, h.amount USING ERRCODE = 'OB902';
  END IF;
  IF EXISTS (SELECT 1 FROM ledger_accounts WHERE id = ANY (p_accounts) AND kind IN ('user', 'hold')) THEN
    RAISE EXCEPTION 'ledger_hold_capture: a hold is captured by house accounts only' USING ERRCODE = 'OB902';
  END IF;
  v_tx := ledger_post(p_kind, ledger_hold_account(h.user_id, h.currency) || p_accounts, (-h.amount) || p_amounts,
    coalesce(p_memo, h.purpose), coalesce(p_actor, 'system'));
  UPDATE holds SET state = 'captured', final_transaction_id = v_tx, finished_at = now() WHERE id = p_hold;
  RETURN v_tx;
END $$;
