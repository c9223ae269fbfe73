-- The one way money moves: postings (account, amount) that sum to zero per currency.
-- Zero amounts are dropped. Returns the ledger transaction id. It locks the accounts in
-- ascending id order, refuses an overdraft of a user (or hold) account, writes the ledger transaction,
-- its postings and the balances, all in the caller's database transaction.
--
-- A fast path for the common case of exactly two non-zero postings between two
-- different accounts of one currency that sum to zero (a transfer without a fee). It takes the
-- same row locks in the same order (ascending id, the same statement), refuses the same
-- overdraft with the same error, and writes the same rows in the same order as the general
-- path. Anything else (three or more postings, zero amounts, a missing account, mixed
-- currencies, an unbalanced pair) goes through the general path unchanged, which raises the
-- same errors. The triggers (postings_balanced, ledger_transactions_posted,
-- ledger_append_only) and the CHECK on user balances hold every writer.
CREATE OR REPLACE FUNCTION ledger_post(
  p_kind text, p_accounts bigint[], p_amounts numeric[],
  p_memo text DEFAULT NULL, p_actor text DEFAULT NULL, p_reverses bigint DEFAULT NULL
) RETURNS bigint LANGUAGE plpgsql
  SET plan_cache_mode = force_generic_plan AS $$
DECLARE
  n integer := coalesce(array_length(p_accounts, 1), 0);
  v_ids bigint[];
  v_kinds text[];
  v_currencies text[];
  v_balances numeric[];
  v_deltas numeric[];
  v_post_accounts bigint[] := '{}';
  v_post_currencies text[] := '{}';
  v_post_amounts numeric[] := '{}';
  v_sum_currencies text[] := '{}';
  v_sums numeric[] := '{}';
  i integer;
  j integer;
  k integer;
  v_tx bigint;
BEGIN
  IF n <> coalesce(array_length(p_amounts, 1), 0) THEN
    RAISE EXCEPTION 'ledger_post: % accounts, % amounts', n, coalesce(array_length(p_amounts, 1), 0) USING ERRCODE = 'OB902';
  END IF;
  -- Row locks in ascending id order (the fixed order of every writer), reading what we need.
  SELECT array_agg(id ORDER BY id), array_agg(kind ORDER BY id), array_agg(currency ORDER BY id), array_agg(balance ORDER BY id)
    INTO v_ids, v_kinds, v_currencies, v_balances
    FROM (SELECT id, kind, currency, balance FROM ledger_accounts WHERE id = ANY (p_accounts) ORDER BY id FOR UPDATE) AS locked;

  -- Fast path: two accounts, one currency, amounts a and -a (a <> 0).
  IF n = 2 AND p_accounts[1] <> p_accounts[2] AND p_amounts[1] <> 0 AND p_amounts[1] + p_amounts[2] = 0
     AND coalesce(array_length(v_ids, 1), 0) = 2 AND v_currencies[1] = v_currencies[2] THEN
    IF v_ids[1] = p_accounts[1] THEN
      v_deltas := p_amounts;
    ELSE
      v_deltas := ARRAY[p_amounts[2], p_amounts[1]];
    END IF;
    FOR j IN 1 .. 2 LOOP
      IF v_kinds[j] IN ('user', 'hold', 'card') AND v_balances[j] + v_deltas[j] < 0 THEN
        RAISE EXCEPTION 'insufficient_funds' USING ERRCODE = 'OB000',
          DETAIL = json_build_object('currency', v_currencies[j], 'balance', v_balances[j]::text, 'needed', (-v_deltas[j])::text)::text;
      END IF;
    END LOOP;
    INSERT INTO ledger_transactions (kind, memo, actor, reverses) VALUES (p_kind, p_memo, p_actor, p_reverses) RETURNING id INTO v_tx;
    INSERT INTO postings (transaction_id, account_id, currency, amount)
      SELECT v_tx, t.account_id, v_currencies[1], t.amount FROM unnest(p_accounts, p_amounts) AS t(account_id, amount);
    UPDATE ledger_accounts a SET balance = a.balance + d.delta
      FROM unnest(v_ids, v_deltas) AS d(id, delta) WHERE a.id = d.id;
    RETURN v_tx;
  END IF;

  -- The general path: any number of postings, four statements whatever their number.
  v_deltas := array_fill(0::numeric, ARRAY[coalesce(array_length(v_ids, 1), 0)]);
  FOR i IN 1 .. n LOOP
    CONTINUE WHEN p_amounts[i] = 0;
    j := array_position(v_ids, p_accounts[i]);
    IF j IS NULL THEN
      RAISE EXCEPTION 'ledger_post: no account %', p_accounts[i] USING ERRCODE = 'OB902';
    END IF;
    v_deltas[j] := v_deltas[j] + p_amounts[i];
    v_post_accounts := v_post_accounts || p_accounts[i];
    v_post_currencies := v_post_currencies || v_currencies[j];
    v_post_amounts := v_post_amounts || p_amounts[i];
    k := array_position(v_sum_currencies, v_currencies[j]);
    IF k IS NULL THEN
      v_sum_currencies := v_sum_currencies || v_currencies[j];
      v_sums := v_sums || p_amounts[i];
    ELSE
      v_sums[k] := v_sums[k] + p_amounts[i];
    END IF;
  END LOOP;
  IF coalesce(array_length(v_post_accounts, 1), 0) < 2 THEN
    RAISE EXCEPTION 'ledger_post: % non-zero postings, need two or more', coalesce(array_length(v_post_accounts, 1), 0) USING ERRCODE = 'OB902';
  END IF;
  FOR k IN 1 .. array_length(v_sum_currencies, 1) LOOP
    IF v_sums[k] <> 0 THEN
      RAISE EXCEPTION 'ledger_post: postings do not sum to zero in %: %', v_sum_currencies[k], v_sums[k] USING ERRCODE = 'OB901';
    END IF;
  END LOOP;
  -- No user (or hold) balance goes below zero: checked here, under the lock, with a clear error.
  FOR j IN 1 .. array_length(v_ids, 1) LOOP
    IF v_kinds[j] IN ('user', 'hold', 'card') AND v_balances[j] + v_deltas[j] < 0 THEN
      RAISE EXCEPTION 'insufficient_funds' USING ERRCODE = 'OB000',
        DETAIL = json_build_object('currency', v_currencies[j], 'balance', v_balances[j]::text, 'needed', (-v_deltas[j])::text)::text;
    END IF;
  END LOOP;

  INSERT INTO ledger_transactions (kind, memo, actor, reverses) VALUES (p_kind, p_memo, p_actor, p_reverses) RETURNING id INTO v_tx;
  INSERT INTO postings (transaction_id, account_id, currency, amount)
    SELECT v_tx, t.account_id, t.currency, t.amount FROM unnest(v_post_accounts, v_post_currencies, v_post_amounts) AS t(account_id, currency, amount);
  UPDATE ledger_accounts a SET balance = a.balance + d.delta
    FROM unnest(v_ids, v_deltas) AS d(id, delta) WHERE a.id = d.id AND d.delta <> 0;
  RETURN v_tx;
END $$;
