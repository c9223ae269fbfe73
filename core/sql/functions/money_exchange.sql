-- Posts one exchange with amounts computed by core (rates/quote.ts):
--   src leg: user −pay; liquidity +spent; fees +(fee + remainder)
--   dst leg: liquidity −receive; user +receive
-- All five accounts are locked first, in id order (house accounts: the user's shard), with
-- those of the fee's referral accrual (referral_accounts): a referee's fee earns their referrer
-- a share in this same transaction (referral_accrue).
CREATE OR REPLACE FUNCTION money_exchange(
  p_user bigint, p_src text, p_dst text, p_pay numeric, p_fee numeric, p_spent numeric, p_remainder numeric,
  p_receive numeric, p_rate text, p_batch bigint, p_quote bigint, p_key text
) RETURNS jsonb LANGUAGE plpgsql
  SET plan_cache_mode = force_generic_plan AS $$
DECLARE
  v_user_src bigint;
  v_user_dst bigint;
  v_liq_src bigint;
  v_liq_dst bigint;
  v_fees bigint;
  v_referral bigint[];
  v_src_tx bigint;
  v_dst_tx bigint;
  v_id bigint;
  v_at timestamptz;
  v_result jsonb;
BEGIN
  IF p_pay <> p_fee + p_spent + p_remainder OR p_receive <= 0 OR p_spent <= 0 OR p_fee < 0 OR p_remainder < 0 OR p_src = p_dst THEN
    RAISE EXCEPTION 'money_exchange: inconsistent amounts' USING ERRCODE = 'OB902';
  END IF;
  v_user_src := ledger_spending_account(p_user, p_src, p_pay);
  v_user_dst := ledger_user_account(p_user, p_dst);
  v_liq_src := ledger_house_account('liquidity', p_src, p_user);
  v_liq_dst := ledger_house_account('liquidity', p_dst, p_user);
  v_fees := ledger_house_account('fees', p_src, p_user);
  v_referral := CASE WHEN p_fee + p_remainder > 0 THEN referral_accounts(p_user, p_src) ELSE '{}' END;
  PERFORM ledger_lock(ARRAY[v_user_src, v_user_dst, v_liq_src, v_liq_dst, v_fees] || v_referral);
  v_src_tx := ledger_post('exchange', ARRAY[v_user_src, v_liq_src, v_fees], ARRAY[-p_pay, p_spent, p_fee + p_remainder],
    p_src || '→' || p_dst, 'user:' || p_user);
  v_dst_tx := ledger_post('exchange', ARRAY[v_liq_dst, v_user_dst], ARRAY[-p_receive, p_receive],
    p_src || '→' || p_dst, 'user:' || p_user);
  INSERT INTO exchanges (user_id, batch_id, src, dst, pay, fee, receive, rate, status, src_transaction_id, dst_transaction_id, quote_id, idempotency_key)
    VALUES (p_user, p_batch, p_src, p_dst, p_pay, p_fee + p_remainder, p_receive, p_rate, 'completed', v_src_tx, v_dst_tx, p_quote, p_key)
    RETURNING id, created_at INTO v_id, v_at;
  IF cardinality(v_referral) > 0 THEN
    PERFORM referral_accrue(p_user, p_src, p_fee + p_remainder, v_fees, 'exchange', v_id);
  END IF;
  INSERT INTO wallet_settings (user_id, last_exchange_currency) VALUES (p_user, p_dst)
    ON CONFLICT (user_id) DO UPDATE SET last_exchange_currency = EXCLUDED.last_exchange_currency;
  v_result := jsonb_build_object('id', v_id::text, 'batch_id', p_batch::text, 'src', p_src, 'dst', p_dst, 'amount', p_pay::text,
    'amount_receive', p_receive::text, 'fee', (p_fee + p_remainder)::text, 'rate', p_rate, 'status', 'completed',
    'error_code', NULL, 'created_at', iso_time(v_at));
  RETURN v_result;
END $$;
