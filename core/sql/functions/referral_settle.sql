-- Pays one referrer what is due in one currency (accruals unsettled, not reversed and past their
-- hold at p_now) less what is clawed back (paid accruals reversed since: their fee was
-- refunded), when that reaches the terms' minimum payout (and is above zero): ONE ledger
-- transaction (referral liability → the referrer's wallet), the settlement row, its accruals
-- marked settled and its clawbacks marked taken, all in the caller's transaction. One settlement
-- of a referrer and currency at a time (a transaction-scoped advisory lock): a second core
-- settling at the same moment waits, then finds everything settled and pays nothing. Row locks
-- alone (SKIP LOCKED) let two scans at the same moment each take a part: every accrual was
-- still paid once, but in two settlements. Each accrual is paid once, each clawback taken once.
-- Returns {id, amount, clawed, accruals}, or NULL when nothing was paid.
CREATE OR REPLACE FUNCTION referral_settle(p_referrer bigint, p_currency text, p_now timestamptz) RETURNS jsonb LANGUAGE plpgsql
  SET plan_cache_mode = force_generic_plan AS $$
DECLARE
  v_ids bigint[];
  v_sum numeric;
  v_claw_ids bigint[];
  v_claw numeric;
  v_min numeric;
  v_tx bigint;
  v_id bigint;
BEGIN
  PERFORM pg_advisory_xact_lock(hashtextextended('referral_settle:' || p_referrer || ':' || p_currency, 0));
  SELECT array_agg(id ORDER BY id), sum(amount) INTO v_ids, v_sum FROM (
    SELECT id, amount FROM referral_accruals
    WHERE referrer_id = p_referrer AND currency = p_currency AND settlement_id IS NULL AND reversal_transaction_id IS NULL AND due_at <= p_now
    ORDER BY id FOR UPDATE SKIP LOCKED) due;
  IF v_ids IS NULL THEN
    RETURN NULL;
  END IF;
  SELECT array_agg(id ORDER BY id), coalesce(sum(amount), 0) INTO v_claw_ids, v_claw FROM (
    SELECT id, amount FROM referral_accruals
    WHERE referrer_id = p_referrer AND currency = p_currency AND reversal_transaction_id IS NOT NULL AND settlement_id IS NOT NULL AND clawed_by IS NULL
    ORDER BY id FOR UPDATE SKIP LOCKED) owed;
  v_sum := v_sum - v_claw;
  SELECT min_payout INTO v_min FROM referral_terms WHERE id AND currency = p_currency;
  IF v_sum <= 0 OR v_sum < coalesce(v_min, 0) THEN
    RETURN NULL;
  END IF;
  v_tx := ledger_post('referral', ARRAY[ledger_system_account('referral', p_currency, 'liability'), ledger_user_account(p_referrer, p_currency)],
    ARRAY[-v_sum, v_sum], 'referral settlement', 'system');
  INSERT INTO referral_settlements (referrer_id, currency, amount, clawed, accruals, transaction_id)
    VALUES (p_referrer, p_currency, v_sum, v_claw, array_length(v_ids, 1), v_tx) RETURNING id INTO v_id;
  UPDATE referral_accruals SET settlement_id = v_id WHERE id = ANY (v_ids);
  UPDATE referral_accruals SET clawed_by = v_id WHERE id = ANY (v_claw_ids);
  PERFORM event_record(p_referrer, 'wallets', NULL);
  RETURN jsonb_build_object('id', v_id::text, 'amount', v_sum::text, 'clawed', v_claw::text, 'accruals', array_length(v_ids, 1));
END $$;
