-- Credits deposits their provider has been paid for: for each, the provider's clearing account
-- gives the whole amount, the user gets it less the system's fee (to the house's fee account,
-- ledger_post_many), the payment becomes `credited` with its ledger transaction, and the user's
-- wallets and the payment's status are announced (event_record_many). Returns the users credited.
--
-- One call for a whole gathering of webhook events (group commit), and a single event is a
-- gathering of one, posted together (ledger_post_many: a few rows per deposit, not a few
-- statements). Every account of the gathering is locked first, in one statement (ascending id),
-- and the users' event sequences are then taken in ascending user id (event_record_many): two
-- gatherings crediting the same users wait on each other, never in a cycle (posting them one by
-- one locked a user's account, then waited for the clearing account that the other gathering
-- held while it waited for that user).
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
  v_of integer[];
  v_accounts bigint[];
  v_postings numeric[];
  v_tx bigint[];
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
  -- Payment i is ledger transaction i: the user gets the amount less the fee, the house the fee
  -- (a zero posting is dropped), the clearing account gives the amount.
  SELECT array_agg(i ORDER BY i, leg),
         array_agg(CASE leg WHEN 1 THEN v_user_accounts[i] WHEN 2 THEN v_fee_accounts[i] ELSE v_clearing_accounts[i] END ORDER BY i, leg),
         array_agg(CASE leg WHEN 1 THEN v_amounts[i] - v_fees[i] WHEN 2 THEN v_fees[i] ELSE -v_amounts[i] END ORDER BY i, leg)
    INTO v_of, v_accounts, v_postings
    FROM generate_series(1, cardinality(v_ids)) AS i, generate_series(1, 3) AS leg;
  v_tx := ledger_post_many('deposit', v_of, v_accounts, v_postings,
    (SELECT array_agg('deposit ' || x ORDER BY i) FROM unnest(v_publics) WITH ORDINALITY AS t(x, i)),
    (SELECT array_agg('provider:' || x ORDER BY i) FROM unnest(v_providers) WITH ORDINALITY AS t(x, i)));
  UPDATE payments p SET state = 'credited', ledger_transaction_id = c.tx, paid_at = p_at, credited_at = p_at, updated_at = p_at
    FROM unnest(v_ids, v_tx) AS c(id, tx) WHERE p.id = c.id;
  -- Per payment, its user's wallets (filled in at delivery), then its new state.
  PERFORM event_record_many(array_agg(v_users[i] ORDER BY i, e),
      array_agg(CASE e WHEN 1 THEN 'wallets' ELSE 'payment' END ORDER BY i, e),
      array_agg(CASE e WHEN 2 THEN jsonb_build_object('id', v_publics[i], 'state', 'credited') END ORDER BY i, e))
    FROM generate_series(1, cardinality(v_ids)) AS i, generate_series(1, 2) AS e;
  RETURN QUERY SELECT DISTINCT u FROM unnest(v_users) AS u;
END $$;
