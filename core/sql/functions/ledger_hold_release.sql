-- Releases a hold: its whole amount goes back from held to available, in one ledger
-- transaction (kind 'release'), once. Locks: the hold row first, then the two accounts in
-- ascending id order (ledger_post); a concurrent release or capture of the same hold waits on
-- the row and then finds it no longer held ('hold_not_held', with its state).
-- Returns the ledger transaction id.
CREATE OR REPLACE FUNCTION ledger_hold_release(p_hold bigint, p_memo text DEFAULT NULL, p_actor text DEFAULT NULL) RETURNS bigint LANGUAGE plpgsql
  SET plan_cache_mode = force_generic_plan AS $$
DECLARE
  h holds;
  v_tx bigint;
BEGIN
  h := ledger_hold_lock(p_hold);
  v_tx := ledger_post('release', ARRAY[ledger_hold_account(h.user_id, h.currency), ledger_user_account(h.user_id, h.currency)],
    ARRAY[-h.amount, h.amount], coalesce(p_memo, h.purpose), coalesce(p_actor, 'system'));
  UPDATE holds SET state = 'released', final_transaction_id = v_tx, finished_at = now() WHERE id = p_hold;
  RETURN v_tx;
END $$;
