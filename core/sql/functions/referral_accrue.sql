-- One fee p_payer paid (p_fee minor units of p_currency, already posted to p_fees_account)
-- earns their referrer the terms' share, in the caller's transaction: one ledger transaction
-- (kind 'referral') moves the share from the fees account to the referral liability, converted
-- to the payout currency through the payer's liquidity shards at referral_rate() when the fee
-- is in another currency (rounded down: the house's favour), and one referral_accruals row,
-- due after the terms' hold period. Any fee writer calls it: exchanges (money_exchange) now,
-- card fees later (source 'card'). Returns the accrual id, or NULL when nothing accrues.
-- The caller locks referral_accounts() together with its own accounts first.
CREATE OR REPLACE FUNCTION referral_accrue(
  p_payer bigint, p_currency text, p_fee numeric, p_fees_account bigint, p_source text, p_source_id bigint
) RETURNS bigint LANGUAGE plpgsql
  SET plan_cache_mode = force_generic_plan AS $$
DECLARE
  v_referrer bigint;
  t record;
  v_rate numeric;
  v_share numeric;
  v_amount numeric;
  v_liability bigint;
  v_tx bigint;
  v_id bigint;
BEGIN
  IF p_fee <= 0 THEN
    RETURN NULL;
  END IF;
  SELECT referrer_id INTO v_referrer FROM referrals WHERE referee_id = p_payer;
  IF NOT FOUND THEN
    RETURN NULL;
  END IF;
  SELECT currency, share, hold_seconds INTO t FROM referral_terms WHERE id AND enabled AND share > 0;
  IF NOT FOUND THEN
    RETURN NULL;
  END IF;
  v_rate := referral_rate(p_currency, t.currency);
  IF v_rate IS NULL THEN
    RETURN NULL;
  END IF;
  v_share := floor(p_fee * t.share);
  v_amount := floor(v_share * v_rate * power(10::numeric,
    (SELECT precision FROM currencies WHERE code = t.currency) - (SELECT precision FROM currencies WHERE code = p_currency)));
  IF v_share <= 0 OR v_amount <= 0 THEN
    RETURN NULL;
  END IF;
  v_liability := ledger_system_account('referral', t.currency, 'liability');
  IF p_currency = t.currency THEN
    v_tx := ledger_post('referral', ARRAY[p_fees_account, v_liability], ARRAY[-v_share, v_share], 'referral accrual', 'user:' || p_payer);
  ELSE
    v_tx := ledger_post('referral',
      ARRAY[p_fees_account, ledger_house_account('liquidity', p_currency, p_payer), ledger_house_account('liquidity', t.currency, p_payer), v_liability],
      ARRAY[-v_share, v_share, -v_amount, v_amount], 'referral accrual', 'user:' || p_payer);
  END IF;
  INSERT INTO referral_accruals (referrer_id, referee_id, source, source_id, fee_currency, fee, currency, amount, transaction_id, due_at)
    VALUES (v_referrer, p_payer, p_source, p_source_id, p_currency, p_fee, t.currency, v_amount, v_tx,
      now() + t.hold_seconds * interval '1 second')
    RETURNING id INTO v_id;
  RETURN v_id;
END $$;
