-- Transfers of many requests in one statement, one round trip and one commit (the core gathers
-- concurrent requests: core/src/domains/ledger/batch.ts). Item i is the request of p_users[i]
-- with idempotency key p_keys[i]; each answers for itself, as (i, r):
--   - {replayed, result, wallet, users}: applied, or the first answer again for its key (the same
--     key twice in one batch: the second replays the first); `wallet` is the sender's wallets
--     just after it, `users` the two users whose "wallets" event it recorded;
--   - {refused, detail}: a refusal (SQLSTATE OB000: insufficient funds, limits, unknown
--     recipient, key reused...) rolled back to the item's own savepoint, so it leaves nothing
--     behind (its key is free again) and its neighbours go on.
-- Locks: every account the batch may move (senders', recipients', fee shards) first, in one
-- ascending id order; then the items by (user, key), so key claims are taken in one order too;
-- the events of all applied items at the end, users in ascending id (event_record_many). Two
-- batches therefore never wait on each other crosswise. Anything but a refusal (a broken rule
-- OB9xx, a deadlock) fails the whole batch: the caller retries it or runs its items alone.
CREATE OR REPLACE FUNCTION money_transfer_many(
  p_users bigint[], p_keys text[], p_hashes text[], p_recipient_accounts integer[], p_currencies text[], p_amounts numeric[],
  p_comments text[]
) RETURNS TABLE (i integer, r jsonb) LANGUAGE plpgsql
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
  v_out jsonb;
  v_message text;
  v_detail text;
  v_events bigint[] := '{}';
BEGIN
  PERFORM 1 FROM ledger_accounts WHERE id = ANY (ARRAY(
      SELECT a.id FROM unnest(p_users, p_currencies) AS t(u, c) JOIN ledger_accounts a ON a.user_id = t.u AND a.currency = t.c
      UNION
      SELECT a.id FROM unnest(p_recipient_accounts, p_currencies) AS t(n, c) JOIN users u ON u.account_id = t.n
        JOIN ledger_accounts a ON a.user_id = u.id AND a.currency = t.c
      UNION
      SELECT ledger_house_account('fees', t.c, t.u) FROM unnest(p_users, p_currencies) AS t(u, c)
        JOIN transfer_settings s ON s.currency = t.c WHERE s.fee_percent > 0 OR s.fee_fixed > 0))
    ORDER BY id FOR UPDATE;

  FOR i IN SELECT t.o FROM unnest(p_users, p_keys) WITH ORDINALITY AS t(u, k, o) ORDER BY t.u, t.k, t.o LOOP
    BEGIN
      v_prev := idempotency_claim(p_users[i], p_keys[i], p_hashes[i]);
      IF v_prev IS NOT NULL THEN
        v_out := jsonb_build_object('replayed', true, 'result', v_prev, 'wallet', wallet_state(p_users[i]));
      ELSE
        SELECT * INTO p FROM transfer_prepare(p_users[i], p_recipient_accounts[i], p_currencies[i], p_amounts[i]);
        v_from := ledger_spending_account(p_users[i], p_currencies[i], p_amounts[i] + p.fee);
        v_to := ledger_user_account(p.recipient_id, p_currencies[i]);
        IF p.fee > 0 THEN
          v_tx := ledger_post('transfer', ARRAY[v_from, v_to, ledger_house_account('fees', p_currencies[i], p_users[i])],
            ARRAY[-(p_amounts[i] + p.fee), p_amounts[i], p.fee], NULL, 'user:' || p_users[i]);
        ELSE
          v_tx := ledger_post('transfer', ARRAY[v_from, v_to], ARRAY[-p_amounts[i], p_amounts[i]], NULL, 'user:' || p_users[i]);
        END IF;
        INSERT INTO transfers (sender_id, recipient_id, currency, amount, fee, comment, ledger_transaction_id, idempotency_key)
          VALUES (p_users[i], p.recipient_id, p_currencies[i], p_amounts[i], p.fee, p_comments[i], v_tx, p_keys[i])
          RETURNING id, created_at INTO v_id, v_at;
        v_result := jsonb_build_object('transfer', jsonb_build_object(
          'id', v_id::text, 'direction', 'out', 'account_id', p_recipient_accounts[i], 'name', p.recipient_name,
          'currency', p_currencies[i], 'amount', p_amounts[i]::text, 'fee', p.fee::text, 'comment', p_comments[i],
          'status', 'completed', 'created_at', iso_time(v_at)));
        PERFORM idempotency_store(p_users[i], p_keys[i], v_result);
        v_out := jsonb_build_object('replayed', false, 'result', v_result, 'wallet', wallet_state(p_users[i]),
          'users', jsonb_build_array(p_users[i]::text, p.recipient_id::text));
        v_events := v_events || p_users[i] || p.recipient_id;
      END IF;
    EXCEPTION WHEN SQLSTATE 'OB000' THEN
      GET STACKED DIAGNOSTICS v_message = MESSAGE_TEXT, v_detail = PG_EXCEPTION_DETAIL;
      v_out := jsonb_build_object('refused', v_message, 'detail', v_detail);
    END;
    r := v_out;
    RETURN NEXT;
  END LOOP;

  IF cardinality(v_events) > 0 THEN
    PERFORM event_record_many(v_events, array_fill('wallets'::text, ARRAY[cardinality(v_events)]),
      array_fill(NULL::jsonb, ARRAY[cardinality(v_events)]));
  END IF;
END $$;
