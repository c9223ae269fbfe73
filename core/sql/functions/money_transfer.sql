-- A whole transfer in one round trip: idempotency key (idempotency_claim), checks, ledger,
-- record, the sender's wallets. Same key and hash: the first answer again ({replayed: true});
-- same key, other hash: 'idempotency_key_reused'. Both users get a "wallets" event (recorded
-- in ascending user id, see event_record); `users` names them for the realtime bus.
CREATE OR REPLACE FUNCTION money_transfer(
  p_user bigint, p_key text, p_hash text, p_recipient_account integer, p_currency text, p_amount numeric, p_comment text
) RETURNS jsonb LANGUAGE plpgsql
  SET plan_cache_mode = force_generic_plan AS $$
DECLARE
  v_prev jsonb;
  p record;
  v_from bigint;
  v_to bigint;
  v_tx bigint;
  v_id bigint;
  v_at timestamptz;
  v_result jsonb;
BEGIN
  v_prev := idempotency_claim(p_user, p_key, p_hash);
  IF v_prev IS NOT NULL THEN
    RETURN jsonb_build_object('replayed', true, 'result', v_prev, 'wallet', wallet_state(p_user));
  END IF;

  SELECT * INTO p FROM transfer_prepare(p_user, p_recipient_account, p_currency, p_amount);
  v_from := ledger_spending_account(p_user, p_currency, p_amount + p.fee);
  v_to := ledger_user_account(p.recipient_id, p_currency);
  IF p.fee > 0 THEN
    v_tx := ledger_post('transfer', ARRAY[v_from, v_to, ledger_house_account('fees', p_currency, p_user)],
      ARRAY[-(p_amount + p.fee), p_amount, p.fee], NULL, 'user:' || p_user);
  ELSE
    v_tx := ledger_post('transfer', ARRAY[v_from, v_to], ARRAY[-p_amount, p_amount], NULL, 'user:' || p_user);
  END IF;
  INSERT INTO transfers (sender_id, recipient_id, currency, amount, fee, comment, ledger_transaction_id, idempotency_key)
    VALUES (p_user, p.recipient_id, p_currency, p_amount, p.fee, p_comment, v_tx, p_key)
    RETURNING id, created_at INTO v_id, v_at;
  v_result := jsonb_build_object('transfer', jsonb_build_object(
    'id', v_id::text, 'direction', 'out', 'account_id', p_recipient_account, 'name', p.recipient_name,
    'currency', p_currency, 'amount', p_amount::text, 'fee', p.fee::text, 'comment', p_comment,
    'status', 'completed', 'created_at', iso_time(v_at)));
  PERFORM idempotency_store(p_user, p_key, v_result);
  PERFORM event_record(least(p_user, p.recipient_id), 'wallets', NULL);
  PERFORM event_record(greatest(p_user, p.recipient_id), 'wallets', NULL);
  RETURN jsonb_build_object('replayed', false, 'result', v_result, 'wallet', wallet_state(p_user),
    'users', jsonb_build_array(p_user::text, p.recipient_id::text));
END $$;
