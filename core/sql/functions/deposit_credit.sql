-- Credits deposits their provider has been paid for: for each, the provider's clearing account
-- gives the whole amount, the user gets it less the system's fee (to the house's fee account,
-- ledger_post), the payment becomes `credited` with its ledger transaction, and the user's
-- wallets and the payment's status are announced (event_record). Returns the users credited.
--
-- One call for a whole gathering of webhook events (group commit), and a single event is a
-- gathering of one. Every account of the gathering is locked first, in one statement
-- (ledger_lock, ascending id), and the users' event sequences are then taken in ascending user
-- id: two gatherings crediting the same users wait on each other, never in a cycle (posting
-- them one by one locked a user's account, then waited for the clearing account that the other
-- gathering held while it waited for that user).
--
-- The caller holds the payments' row locks and has checked each one's event (state, amount,
-- currency); a payment that is not an open deposit, or one given twice, is refused (OB902),
-- so a slip in the caller can never credit twice.
CREATE OR REPLACE FUNCTION deposit_credit(p_payments bigint[], p_at timestamptz)
RETURNS TABLE (credited_user bigint) LANGUAGE plpgsql AS $$
DECLARE
  v_ids bigint[];
  v_users bigint[];
  v_publics text[];
  v_providers text[];
  v_amounts numeric[];
  v_fees numeric[];
  v_user_accounts bigint[];
  v_fee_accounts bigint[];
  v_clearing_accounts bigint[];
  v_tx bigint;
  i integer;
BEGIN
  SELECT array_agg(p.id ORDER BY p.user_id, p.id), array_agg(p.user_id ORDER BY p.user_id, p.id),
         array_agg(p.public_id::text ORDER BY p.user_id, p.id), array_agg(p.provider ORDER BY p.user_id, p.id),
         array_agg(p.amount ORDER BY p.user_id, p.id), array_agg(p.fee ORDER BY p.user_id, p.id),
         array_agg(ledger_user_account(p.user_id, p.currency) ORDER BY p.user_id, p.id),
         array_agg(ledger_house_account('fees', p.currency, p.user_id) ORDER BY p.user_id, p.id),
         array_agg(ledger_system_account('clearing', p.currency, p.provider) ORDER BY p.user_id, p.id)
    INTO v_ids, v_users, v_publics, v_providers, v_amounts, v_fees, v_user_accounts, v_fee_accounts, v_clearing_accounts
    FROM payments p
    WHERE p.id = ANY (p_payments) AND p.direction = 'deposit' AND p.state IN ('created', 'pending');
  IF coalesce(cardinality(v_ids), 0) <> cardinality(p_payments) THEN
    RAISE EXCEPTION 'deposit_credit: % payments given, % open deposits among them', cardinality(p_payments), coalesce(cardinality(v_ids), 0)
      USING ERRCODE = 'OB902';
  END IF;
  PERFORM ledger_lock(v_user_accounts || v_fee_accounts || v_clearing_accounts);
  FOR i IN 1 .. cardinality(v_ids) LOOP
    IF v_fees[i] = 0 THEN
      v_tx := ledger_post('deposit', ARRAY[v_user_accounts[i], v_clearing_accounts[i]], ARRAY[v_amounts[i], -v_amounts[i]],
                          'deposit ' || v_publics[i], 'provider:' || v_providers[i]);
    ELSE
      v_tx := ledger_post('deposit', ARRAY[v_user_accounts[i], v_fee_accounts[i], v_clearing_accounts[i]],
                          ARRAY[v_amounts[i] - v_fees[i], v_fees[i], -v_amounts[i]],
                          'deposit ' || v_publics[i], 'provider:' || v_providers[i]);
    END IF;
    UPDATE payments SET state = 'credited', ledger_transaction_id = v_tx, paid_at = p_at, credited_at = p_at, updated_at = p_at
      WHERE id = v_ids[i];
    PERFORM event_record(v_users[i], 'wallets', NULL);
    PERFORM event_record(v_users[i], 'payment', jsonb_build_object('id', v_publics[i], 'state', 'credited'));
  END LOOP;
  RETURN QUERY SELECT DISTINCT u FROM unnest(v_users) AS u;
END $$;
