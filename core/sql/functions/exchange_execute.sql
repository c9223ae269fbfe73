-- POST /api/exchange/{src}/{dst} in one round trip: claims the idempotency key
-- (idempotency_claim), spends the quote (once, unexpired, this user's, this pair), posts exactly
-- its amounts (money_exchange) and stores the answer. A quote that cannot be spent raises
-- 'quote_used' or 'quote_expired' with what the user asked for in the detail (core quotes it
-- afresh), or 'quote_invalid'; the transaction rolls back and the key is free again. The user
-- gets a "wallets" event (other tabs and devices update their balances).
CREATE OR REPLACE FUNCTION exchange_execute(
  p_user bigint, p_key text, p_hash text, p_token_hash bytea, p_src text, p_dst text
) RETURNS jsonb LANGUAGE plpgsql
  SET plan_cache_mode = force_generic_plan AS $$
DECLARE
  v_prev jsonb;
  q record;
  v_lapsed record;
  v_result jsonb;
BEGIN
  v_prev := idempotency_claim(p_user, p_key, p_hash);
  IF v_prev IS NOT NULL THEN
    RETURN jsonb_build_object('replayed', true, 'result', v_prev);
  END IF;
  UPDATE exchange_quotes SET used_at = now()
    WHERE token_hash = p_token_hash AND user_id = p_user AND used_at IS NULL AND expires_at > now()
    RETURNING id, src, dst, pay, fee, spent, remainder, receive, rate INTO q;
  IF NOT FOUND THEN
    SELECT src, dst, used_at IS NOT NULL AS used, requested, requested_amount INTO v_lapsed
      FROM exchange_quotes WHERE token_hash = p_token_hash AND user_id = p_user;
    IF NOT FOUND THEN
      RAISE EXCEPTION 'quote_invalid' USING ERRCODE = 'OB000', DETAIL = '{}';
    END IF;
    RAISE EXCEPTION USING MESSAGE = CASE WHEN v_lapsed.used THEN 'quote_used' ELSE 'quote_expired' END, ERRCODE = 'OB000',
      DETAIL = json_build_object('src', v_lapsed.src, 'dst', v_lapsed.dst, 'requested', v_lapsed.requested,
        'requested_amount', v_lapsed.requested_amount::text)::text;
  END IF;
  IF q.src <> p_src OR q.dst <> p_dst THEN
    RAISE EXCEPTION 'quote_invalid' USING ERRCODE = 'OB000', DETAIL = '{}';
  END IF;
  v_result := jsonb_build_object('exchange',
    money_exchange(p_user, q.src, q.dst, q.pay, q.fee, q.spent, q.remainder, q.receive, q.rate, NULL, q.id, p_key));
  PERFORM idempotency_store(p_user, p_key, v_result);
  PERFORM event_record(p_user, 'wallets', NULL);
  RETURN jsonb_build_object('replayed', false, 'result', v_result);
END $$;
