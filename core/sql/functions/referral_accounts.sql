-- The ledger accounts referral_accrue() will touch for a fee of p_payer in p_currency, so that
-- the fee's writer can lock them with its own accounts first, in one ascending order (no
-- deadlocks): the referral liability in the payout currency and, when the fee is in another
-- currency, the payer's liquidity shards of both. Empty when nothing will accrue (no referrer,
-- no terms, paused, a zero share, no rate).
CREATE OR REPLACE FUNCTION referral_accounts(p_payer bigint, p_currency text) RETURNS bigint[] LANGUAGE plpgsql
  SET plan_cache_mode = force_generic_plan AS $$
DECLARE
  t record;
BEGIN
  IF NOT EXISTS (SELECT 1 FROM referrals WHERE referee_id = p_payer) THEN
    RETURN '{}';
  END IF;
  SELECT currency, share INTO t FROM referral_terms WHERE id AND enabled AND share > 0;
  IF NOT FOUND OR referral_rate(p_currency, t.currency) IS NULL THEN
    RETURN '{}';
  END IF;
  IF p_currency = t.currency THEN
    RETURN ARRAY[ledger_system_account('referral', t.currency, 'liability')];
  END IF;
  RETURN ARRAY[ledger_system_account('referral', t.currency, 'liability'),
    ledger_house_account('liquidity', p_currency, p_payer), ledger_house_account('liquidity', t.currency, p_payer)];
END $$;
