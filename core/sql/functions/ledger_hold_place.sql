-- Places a hold: p_amount (minor units) moves from the user's available balance to their held
-- balance in one ledger transaction (kind 'hold'), and a `holds` row records it. An overdraft
-- is refused by ledger_post ('insufficient_funds', with the balance and the amount needed).
-- Locks: the two accounts, in ascending id order (ledger_post). Returns the hold's id.
CREATE OR REPLACE FUNCTION ledger_hold_place(
  p_user bigint, p_currency text, p_amount numeric, p_purpose text, p_actor text DEFAULT NULL
) RETURNS bigint LANGUAGE plpgsql
  SET plan_cache_mode = force_generic_plan AS $$
DECLARE
  v_available bigint;
  v_tx bigint;
  v_id bigint;
BEGIN
  IF p_amount IS NULL OR p_amount <= 0 THEN
    RAISE EXCEPTION 'amount_not_positive' USING ERRCODE = 'OB000', DETAIL = json_build_object('currency', p_currency)::text;
  END IF;
  v_available := ledger_spending_account(p_user, p_currency, p_amount);
  v_tx := ledger_post('hold', ARRAY[v_available, ledger_hold_account(p_user, p_currency)], ARRAY[-p_amount, p_amount],
    p_purpose, coalesce(p_actor, 'user:' || p_user));
  INSERT INTO holds (user_id, currency, amount, purpose, place_transaction_id)
    VALUES (p_user, p_currency, p_amount, p_purpose, v_tx) RETURNING id INTO v_id;
  RETURN v_id;
END $$;
