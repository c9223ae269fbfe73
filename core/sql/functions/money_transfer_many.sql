-- Transfers of many requests in one statement, one round trip and one commit (the core gathers
-- concurrent requests: core/src/domains/ledger/batch.ts). Item i is the request of p_users[i]
-- with idempotency key p_keys[i]; each answers for itself, as (i, r):
--   - {replayed, result, wallet, users}: applied, or the first answer again for its key (the same
--     key twice in one batch: the second replays the first); `wallet` is the sender's wallets
--     as the batch's items up to this one (in the order below) leave them, as if the item had
--     been alone after them; `users` the two users whose "wallets" event it recorded;
--   - {refused, detail}: a refusal (SQLSTATE OB000: insufficient funds, limits, unknown
--     recipient, key reused...) rolled back to the item's own savepoint, so it leaves nothing
--     behind (its key is free again) and its neighbours go on.
-- Locks: every account the batch may move (senders', recipients', fee shards) first, in one
-- ascending id order; then the items by (user, key), so key claims are taken in one order too;
-- the events of all applied items at the end, users in ascending id (event_record_many). Two
-- batches therefore never wait on each other crosswise.
-- Each item is checked in its savepoint (limits, recipient, its sender's balance as the items
-- before it left it); the accepted ones are then posted together by ledger_post_many, one
-- ledger transaction each, which checks the posting rules again (zero sum per transaction, no
-- balance below zero after any of them, in their order); then the transfers in one insert. Anything but a refusal (a broken rule
-- OB9xx, a deadlock) fails the whole batch: the caller retries it or runs its items alone.
CREATE OR REPLACE FUNCTION money_transfer_many(
  p_users bigint[], p_keys text[], p_hashes text[], p_recipient_accounts integer[], p_currencies text[], p_amounts numeric[],
  p_comments text[]
) RETURNS TABLE (i integer, r jsonb) LANGUAGE plpgsql
  SET plan_cache_mode = force_generic_plan AS $$
DECLARE
  n integer := coalesce(cardinality(p_users), 0);
  v_order integer[];
  p record;
  v_prev jsonb;
  v_from bigint;
  v_to bigint;
  v_house bigint;
  v_need numeric;
  v_account bigint;
  v_at integer;
  v_last integer;
  v_origin integer;
  v_message text;
  v_detail text;
  -- The accounts locked, with their balances as the accepted items leave them.
  v_ids bigint[];
  v_owners bigint[];
  v_kinds text[];
  v_balances numeric[];
  v_kind text;
  v_balance numeric;
  v_owner bigint;
  -- Per item: its answer, or what it became.
  v_out jsonb[] := array_fill(NULL::jsonb, ARRAY[n]);
  v_same integer[] := array_fill(NULL::integer, ARRAY[n]);
  v_recipients bigint[] := array_fill(NULL::bigint, ARRAY[n]);
  v_names text[] := array_fill(NULL::text, ARRAY[n]);
  v_fees numeric[] := array_fill(NULL::numeric, ARRAY[n]);
  -- How many items were accepted up to and including this one: its place among the postings.
  v_pos integer[] := array_fill(NULL::integer, ARRAY[n]);
  -- The postings of the accepted items: ledger transaction k is item g_items[k].
  g_items integer[] := '{}';
  g_of integer[] := '{}';
  g_accounts bigint[] := '{}';
  g_amounts numeric[] := '{}';
  g_actors text[] := '{}';
  v_txs bigint[];
  v_events bigint[] := '{}';
  t record;
  v_result jsonb;
  v_wallet jsonb;
  v_wallet_of bigint;
  v_at_ids bigint[];
  v_at_balances numeric[];
BEGIN
  SELECT array_agg(id ORDER BY id), array_agg(user_id ORDER BY id), array_agg(kind ORDER BY id), array_agg(balance ORDER BY id)
    INTO v_ids, v_owners, v_kinds, v_balances
    FROM (SELECT a.id, a.user_id, a.kind, a.balance FROM ledger_accounts a WHERE a.id = ANY (ARRAY(
        SELECT s.id FROM unnest(p_users, p_currencies) AS x(u, c) JOIN ledger_accounts s ON s.user_id = x.u AND s.currency = x.c
        UNION
        SELECT s.id FROM unnest(p_recipient_accounts, p_currencies) AS x(num, c) JOIN users u ON u.account_id = x.num
          JOIN ledger_accounts s ON s.user_id = u.id AND s.currency = x.c
        UNION
        SELECT ledger_house_account('fees', x.c, x.u) FROM unnest(p_users, p_currencies) AS x(u, c)
          JOIN transfer_settings s ON s.currency = x.c WHERE s.fee_percent > 0 OR s.fee_fixed > 0))
      ORDER BY a.id FOR UPDATE) AS locked;
  v_ids := coalesce(v_ids, '{}');
  v_owners := coalesce(v_owners, '{}');
  v_kinds := coalesce(v_kinds, '{}');
  v_balances := coalesce(v_balances, '{}');
  v_order := ARRAY(SELECT x.o FROM unnest(p_users, p_keys) WITH ORDINALITY AS x(u, k, o) ORDER BY x.u, x.k, x.o);

  FOREACH i IN ARRAY v_order LOOP
    -- v_origin: the item of this batch that applied this (user, key), if any.
    IF v_last IS NULL OR p_users[v_last] <> p_users[i] OR p_keys[v_last] <> p_keys[i] THEN
      v_origin := NULL;
    END IF;
    BEGIN
      IF v_origin IS NOT NULL THEN
        -- The key of an item accepted in this batch: its replay (answered once it is posted).
        IF p_hashes[v_origin] <> p_hashes[i] THEN
          RAISE EXCEPTION 'idempotency_key_reused' USING ERRCODE = 'OB000', DETAIL = '{}';
        END IF;
        v_same[i] := v_origin;
      ELSE
        v_prev := idempotency_claim(p_users[i], p_keys[i], p_hashes[i]);
        IF v_prev IS NOT NULL THEN
          v_out[i] := jsonb_build_object('replayed', true, 'result', v_prev);
        ELSE
          SELECT * INTO p FROM transfer_prepare(p_users[i], p_recipient_accounts[i], p_currencies[i], p_amounts[i]);
          v_need := p_amounts[i] + p.fee;
          v_from := ledger_spending_account(p_users[i], p_currencies[i], v_need);
          v_to := ledger_user_account(p.recipient_id, p_currencies[i]);
          v_house := CASE WHEN p.fee > 0 THEN ledger_house_account('fees', p_currencies[i], p_users[i]) END;
          -- An account made or found after the batch's lock (a recipient's first account): locked now.
          FOREACH v_account IN ARRAY array_remove(ARRAY[v_from, v_to, v_house], NULL) LOOP
            IF array_position(v_ids, v_account) IS NULL THEN
              SELECT a.user_id, a.kind, a.balance INTO v_owner, v_kind, v_balance FROM ledger_accounts a WHERE a.id = v_account FOR UPDATE;
              v_ids := v_ids || v_account;
              v_owners := v_owners || v_owner;
              v_kinds := v_kinds || v_kind;
              v_balances := v_balances || v_balance;
            END IF;
          END LOOP;
          v_at := array_position(v_ids, v_from);
          IF v_kinds[v_at] IN ('user', 'hold', 'card') AND v_balances[v_at] < v_need THEN
            RAISE EXCEPTION 'insufficient_funds' USING ERRCODE = 'OB000',
              DETAIL = json_build_object('currency', p_currencies[i], 'balance', v_balances[v_at]::text, 'needed', v_need::text)::text;
          END IF;
          -- Accepted: nothing below raises, so what the variables keep matches what the savepoint keeps.
          v_balances[v_at] := v_balances[v_at] - v_need;
          v_balances[array_position(v_ids, v_to)] := v_balances[array_position(v_ids, v_to)] + p_amounts[i];
          g_items := g_items || i;
          g_of := g_of || array_fill(cardinality(g_items), ARRAY[CASE WHEN p.fee > 0 THEN 3 ELSE 2 END]);
          g_accounts := g_accounts || array_remove(ARRAY[v_from, v_to, v_house], NULL);
          g_amounts := g_amounts || CASE WHEN p.fee > 0 THEN ARRAY[-v_need, p_amounts[i], p.fee] ELSE ARRAY[-v_need, p_amounts[i]] END;
          g_actors := g_actors || ('user:' || p_users[i]);
          v_recipients[i] := p.recipient_id;
          v_names[i] := p.recipient_name;
          v_fees[i] := p.fee;
          v_origin := i;
        END IF;
      END IF;
    EXCEPTION WHEN SQLSTATE 'OB000' THEN
      GET STACKED DIAGNOSTICS v_message = MESSAGE_TEXT, v_detail = PG_EXCEPTION_DETAIL;
      v_out[i] := jsonb_build_object('refused', v_message, 'detail', v_detail);
    END;
    v_last := i;
    v_pos[i] := cardinality(g_items);
  END LOOP;

  IF cardinality(g_items) > 0 THEN
    v_txs := ledger_post_many('transfer', g_of, g_accounts, g_amounts, array_fill(NULL::text, ARRAY[cardinality(g_items)]), g_actors);
    FOR t IN
      INSERT INTO transfers (sender_id, recipient_id, currency, amount, fee, comment, ledger_transaction_id, idempotency_key)
        SELECT p_users[x.item], v_recipients[x.item], p_currencies[x.item], p_amounts[x.item], v_fees[x.item], p_comments[x.item], v_txs[x.k], p_keys[x.item]
        FROM unnest(g_items) WITH ORDINALITY AS x(item, k)
        RETURNING id, created_at, ledger_transaction_id
    LOOP
      i := g_items[array_position(v_txs, t.ledger_transaction_id)];
      v_out[i] := jsonb_build_object('replayed', false, 'result', jsonb_build_object('transfer', jsonb_build_object(
        'id', t.id::text, 'direction', 'out', 'account_id', p_recipient_accounts[i], 'name', v_names[i],
        'currency', p_currencies[i], 'amount', p_amounts[i]::text, 'fee', v_fees[i]::text, 'comment', p_comments[i],
        'status', 'completed', 'created_at', iso_time(t.created_at))),
        'users', jsonb_build_array(p_users[i]::text, v_recipients[i]::text));
      v_events := v_events || p_users[i] || v_recipients[i];
      -- Key by key (an index lookup each): a join with the batch's keys would read the whole index
      -- and, under SERIALIZABLE, conflict with every other writer of keys.
      PERFORM idempotency_store(p_users[i], p_keys[i], v_out[i] -> 'result');
    END LOOP;
    PERFORM event_record_many(v_events, array_fill('wallets'::text, ARRAY[cardinality(v_events)]),
      array_fill(NULL::jsonb, ARRAY[cardinality(v_events)]));
    -- The recipients' mails, written by the money-mails job (one row each, in this transaction).
    INSERT INTO money_mail_queue (user_id, kind, vars)
      SELECT v_recipients[x.item], 'transfer_received',
             jsonb_build_object('currency', p_currencies[x.item], 'amount', p_amounts[x.item]::text, 'from_user', p_users[x.item]::text)
        FROM unnest(g_items) AS x(item);
  END IF;

  -- The answers, in the items' order (by user: each sender's wallets read once unless later items
  -- of the batch moved them).
  FOREACH i IN ARRAY v_order LOOP
    IF v_same[i] IS NOT NULL THEN
      v_result := jsonb_build_object('replayed', true, 'result', v_out[v_same[i]] -> 'result');
    ELSE
      v_result := v_out[i];
    END IF;
    IF NOT v_result ? 'refused' THEN
      IF v_pos[i] < cardinality(g_items) AND EXISTS (
          SELECT 1 FROM unnest(g_of, g_accounts) AS g(k, account) JOIN unnest(v_ids, v_owners) AS a(id, owner) ON a.id = g.account
          WHERE g.k > v_pos[i] AND a.owner = p_users[i]) THEN
        -- Items after this one moved the sender's money too: its accounts as they stood here.
        SELECT array_agg(a.id), array_agg(a.balance - coalesce(
            (SELECT sum(g.amount) FROM unnest(g_of, g_accounts, g_amounts) AS g(k, account, amount) WHERE g.k > v_pos[i] AND g.account = a.id), 0))
          INTO v_at_ids, v_at_balances
          FROM unnest(v_ids, v_owners, v_balances) AS a(id, owner, balance) WHERE a.owner = p_users[i];
        v_result := v_result || jsonb_build_object('wallet', wallet_state(p_users[i], v_at_ids, v_at_balances));
      ELSE
        IF v_wallet_of IS DISTINCT FROM p_users[i] THEN
          v_wallet := wallet_state(p_users[i]);
          v_wallet_of := p_users[i];
        END IF;
        v_result := v_result || jsonb_build_object('wallet', v_wallet);
      END IF;
    END IF;
    r := v_result;
    RETURN NEXT;
  END LOOP;
END $$;
