-- The posting rules, the only body that writes postings: ledger transactions of one kind, one
-- (ledger_post) or many at once (deposit_credit moves money for a whole gathering).
-- Transaction i (1-based) is made of the postings k with p_of[k] = i, and gets p_memos[i],
-- p_actors[i] and p_reverses[i] (the transaction it reverses, ledger_reverse). Zero amounts are
-- dropped. Returns the new transactions' ids, in order (ascending).
--
-- Every account is locked in ascending id order, in one statement. Refused, in this order: an
-- account missing, fewer than two non-zero postings, a sum other than zero per currency, and an
-- overdraft, checked as if the transactions were posted one after the other: no user, hold or
-- card balance goes below zero after any of them (the first such account by transaction, then
-- id, is named). The checks are loops over the postings in memory, not queries: whatever the
-- number of transactions, a call costs the lock and four writes (statements, not rows, are
-- what a posting costs).
--
-- A fast path for the commonest call, one transaction of exactly two non-zero postings between
-- two different accounts of one currency that sum to zero (a transfer without a fee): the same
-- row locks in the same order, the same overdraft refusal, the same rows in the same order, in
-- fewer steps. Anything else goes through the general path, which raises the same errors.
-- The triggers (postings_balanced, ledger_transactions_posted, ledger_append_only) and the
-- CHECK on user balances hold every writer.
CREATE OR REPLACE FUNCTION ledger_post_many(
  p_kind text, p_of integer[], p_accounts bigint[], p_amounts numeric[], p_memos text[], p_actors text[],
  p_reverses bigint[] DEFAULT NULL
) RETURNS bigint[] LANGUAGE plpgsql
  SET plan_cache_mode = force_generic_plan AS $$
DECLARE
  n integer := coalesce(cardinality(p_memos), 0);
  m integer := coalesce(cardinality(p_accounts), 0);
  -- The accounts as locked (ascending id), and what the whole call changes in each.
  v_ids bigint[];
  v_kinds text[];
  v_currencies text[];
  v_balances numeric[];
  v_deltas numeric[];
  -- The non-zero postings in the caller's order: transaction, account (index into v_ids), amount.
  v_tx integer[] := '{}';
  v_at integer[] := '{}';
  v_amounts numeric[] := '{}';
  v_posted integer := 0;
  v_count integer[];
  v_sorted boolean := true;
  -- The same postings grouped by transaction, for the checks that go transaction by transaction.
  g_tx integer[];
  g_at integer[];
  g_amounts numeric[];
  v_running numeric[];
  v_first integer;
  v_worst integer;
  v_sum numeric;
  v_seen boolean;
  v_txs bigint[] := '{}';
  v_tx1 bigint;
BEGIN
  IF n = 1 AND m = 2 AND cardinality(p_amounts) = 2 AND cardinality(p_of) = 2 AND p_of[1] = 1 AND p_of[2] = 1
     AND cardinality(p_actors) = 1 AND coalesce(cardinality(p_reverses), 1) = 1
     AND p_accounts[1] <> p_accounts[2] AND p_amounts[1] <> 0 AND p_amounts[1] + p_amounts[2] = 0 THEN
    SELECT array_agg(id ORDER BY id), array_agg(kind ORDER BY id), array_agg(currency ORDER BY id), array_agg(balance ORDER BY id)
      INTO v_ids, v_kinds, v_currencies, v_balances
      FROM (SELECT id, kind, currency, balance FROM ledger_accounts WHERE id = ANY (p_accounts) ORDER BY id FOR UPDATE) AS locked;
    -- Both accounts found, in one currency; otherwise the general path (locks taken already) says what is wrong.
    IF coalesce(array_length(v_ids, 1), 0) = 2 AND v_currencies[1] = v_currencies[2] THEN
      v_deltas := CASE WHEN v_ids[1] = p_accounts[1] THEN p_amounts ELSE ARRAY[p_amounts[2], p_amounts[1]] END;
      FOR j IN 1 .. 2 LOOP
        IF v_kinds[j] IN ('user', 'hold', 'card') AND v_balances[j] + v_deltas[j] < 0 THEN
          RAISE EXCEPTION 'insufficient_funds' USING ERRCODE = 'OB000',
            DETAIL = json_build_object('currency', v_currencies[j], 'balance', v_balances[j]::text, 'needed', (-v_deltas[j])::text)::text;
        END IF;
      END LOOP;
      INSERT INTO ledger_transactions (kind, memo, actor, reverses) VALUES (p_kind, p_memos[1], p_actors[1], p_reverses[1]) RETURNING id INTO v_tx1;
      INSERT INTO postings (transaction_id, account_id, currency, amount)
        SELECT v_tx1, t.account_id, v_currencies[1], t.amount FROM unnest(p_accounts, p_amounts) AS t(account_id, amount);
      UPDATE ledger_accounts a SET balance = a.balance + d.delta
        FROM unnest(v_ids, v_deltas) AS d(id, delta) WHERE a.id = d.id;
      RETURN ARRAY[v_tx1];
    END IF;
  END IF;

  IF m <> coalesce(cardinality(p_of), 0) OR m <> coalesce(cardinality(p_amounts), 0) OR n <> coalesce(cardinality(p_actors), 0)
     OR (p_reverses IS NOT NULL AND cardinality(p_reverses) <> n) THEN
    RAISE EXCEPTION 'ledger_post_many: % postings for % accounts and % amounts; % memos, % actors', cardinality(p_of),
      cardinality(p_accounts), cardinality(p_amounts), n, cardinality(p_actors) USING ERRCODE = 'OB902';
  END IF;
  FOR k IN 1 .. m LOOP
    IF p_of[k] IS NULL OR p_of[k] NOT BETWEEN 1 AND n THEN
      RAISE EXCEPTION 'ledger_post_many: posting % belongs to transaction % of %', k, p_of[k], n USING ERRCODE = 'OB902';
    END IF;
  END LOOP;
  IF n = 0 THEN
    RETURN '{}';
  END IF;
  -- Row locks in ascending id order (the fixed order of every writer), reading what we need.
  SELECT array_agg(id ORDER BY id), array_agg(kind ORDER BY id), array_agg(currency ORDER BY id), array_agg(balance ORDER BY id)
    INTO v_ids, v_kinds, v_currencies, v_balances
    FROM (SELECT id, kind, currency, balance FROM ledger_accounts WHERE id = ANY (p_accounts) ORDER BY id FOR UPDATE) AS locked;

  v_deltas := array_fill(0::numeric, ARRAY[coalesce(array_length(v_ids, 1), 0)]);
  v_count := array_fill(0, ARRAY[n]);
  FOR k IN 1 .. m LOOP
    CONTINUE WHEN coalesce(p_amounts[k] = 0, true);
    v_first := array_position(v_ids, p_accounts[k]);
    IF v_first IS NULL THEN
      RAISE EXCEPTION 'ledger_post: no account %', p_accounts[k] USING ERRCODE = 'OB902';
    END IF;
    v_posted := v_posted + 1;
    v_sorted := v_sorted AND (v_posted = 1 OR p_of[k] >= v_tx[v_posted - 1]);
    v_tx[v_posted] := p_of[k];
    v_at[v_posted] := v_first;
    v_amounts[v_posted] := p_amounts[k];
    v_count[p_of[k]] := v_count[p_of[k]] + 1;
    v_deltas[v_first] := v_deltas[v_first] + p_amounts[k];
  END LOOP;
  FOR i IN 1 .. n LOOP
    IF v_count[i] < 2 THEN
      RAISE EXCEPTION 'ledger_post: % non-zero postings, need two or more', v_count[i] USING ERRCODE = 'OB902';
    END IF;
  END LOOP;

  IF v_sorted THEN
    g_tx := v_tx;
    g_at := v_at;
    g_amounts := v_amounts;
  ELSE
    SELECT array_agg(r.tx ORDER BY r.tx, r.o), array_agg(r.at ORDER BY r.tx, r.o), array_agg(r.amount ORDER BY r.tx, r.o)
      INTO g_tx, g_at, g_amounts FROM unnest(v_tx, v_at, v_amounts) WITH ORDINALITY AS r(tx, at, amount, o);
  END IF;
  -- Per transaction (postings v_first .. e), per currency: the sum is zero.
  v_first := 1;
  FOR e IN 1 .. v_posted LOOP
    CONTINUE WHEN e < v_posted AND g_tx[e + 1] = g_tx[e];
    FOR q IN v_first .. e LOOP
      v_seen := false;
      FOR r IN v_first .. q - 1 LOOP
        v_seen := v_seen OR v_currencies[g_at[r]] = v_currencies[g_at[q]];
      END LOOP;
      CONTINUE WHEN v_seen;
      v_sum := 0;
      FOR r IN q .. e LOOP
        IF v_currencies[g_at[r]] = v_currencies[g_at[q]] THEN
          v_sum := v_sum + g_amounts[r];
        END IF;
      END LOOP;
      IF v_sum <> 0 THEN
        RAISE EXCEPTION 'ledger_post: postings do not sum to zero in %: %', v_currencies[g_at[q]], v_sum USING ERRCODE = 'OB901';
      END IF;
    END LOOP;
    v_first := e + 1;
  END LOOP;
  -- Each guarded account's balance after each transaction, in their order.
  v_running := v_balances;
  v_first := 1;
  FOR e IN 1 .. v_posted LOOP
    CONTINUE WHEN e < v_posted AND g_tx[e + 1] = g_tx[e];
    v_worst := NULL;
    FOR q IN v_first .. e LOOP
      v_running[g_at[q]] := v_running[g_at[q]] + g_amounts[q];
    END LOOP;
    FOR q IN v_first .. e LOOP
      IF v_kinds[g_at[q]] IN ('user', 'hold', 'card') AND v_running[g_at[q]] < 0 AND (v_worst IS NULL OR g_at[q] < v_worst) THEN
        v_worst := g_at[q];
      END IF;
    END LOOP;
    IF v_worst IS NOT NULL THEN
      v_sum := 0;
      FOR q IN v_first .. e LOOP
        IF g_at[q] = v_worst THEN
          v_sum := v_sum + g_amounts[q];
        END IF;
      END LOOP;
      RAISE EXCEPTION 'insufficient_funds' USING ERRCODE = 'OB000',
        DETAIL = json_build_object('currency', v_currencies[v_worst], 'balance', (v_running[v_worst] - v_sum)::text, 'needed', (-v_sum)::text)::text;
    END IF;
    v_first := e + 1;
  END LOOP;

  FOR i IN 1 .. n LOOP
    v_txs[i] := nextval('ledger_transactions_id_seq');
  END LOOP;
  INSERT INTO ledger_transactions (id, kind, memo, actor, reverses)
    SELECT v_txs[t.i], p_kind, p_memos[t.i], p_actors[t.i], p_reverses[t.i] FROM generate_series(1, n) AS t(i);
  INSERT INTO postings (transaction_id, account_id, currency, amount)
    SELECT v_txs[r.tx], v_ids[r.at], v_currencies[r.at], r.amount FROM unnest(v_tx, v_at, v_amounts) AS r(tx, at, amount);
  UPDATE ledger_accounts a SET balance = a.balance + d.delta
    FROM unnest(v_ids, v_deltas) AS d(id, delta) WHERE a.id = d.id AND d.delta <> 0;
  RETURN v_txs;
END $$;
