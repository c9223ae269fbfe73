-- The posting rules, the only body that writes postings: ledger transactions of one kind, one
-- (ledger_post) or many at once (deposit_credit moves money for a whole gathering), set-based,
-- so the cost per transaction is a few rows rather than a few statements. Transaction i
-- (1-based) is made of the postings k with p_of[k] = i, and gets p_memos[i], p_actors[i] and
-- p_reverses[i] (the transaction it reverses, ledger_reverse). Returns the new transactions'
-- ids, in order (ascending).
--
-- Every account is locked in ascending id order, in one statement. Refused: an account missing,
-- fewer than two non-zero postings, a sum other than zero per currency, and an overdraft,
-- checked as if the transactions were posted one after the other: no user, hold or card balance
-- goes below zero after any of them (the first such account by transaction, then id, is named).
--
-- A fast path for the commonest call, one transaction of exactly two non-zero postings between
-- two different accounts of one currency that sum to zero (a transfer without a fee): the same
-- row locks in the same order, the same overdraft refusal, the same rows in the same order, in
-- fewer statements. Anything else goes through the general path, which raises the same errors.
-- The triggers (postings_balanced, ledger_transactions_posted, ledger_append_only) and the
-- CHECK on user balances hold every writer.
CREATE OR REPLACE FUNCTION ledger_post_many(
  p_kind text, p_of integer[], p_accounts bigint[], p_amounts numeric[], p_memos text[], p_actors text[],
  p_reverses bigint[] DEFAULT NULL
) RETURNS bigint[] LANGUAGE plpgsql
  SET plan_cache_mode = force_generic_plan AS $$
DECLARE
  n integer := coalesce(cardinality(p_memos), 0);
  -- The non-zero postings, in order, with their accounts as locked.
  v_tx integer[];
  v_accounts bigint[];
  v_currencies text[];
  v_kinds text[];
  v_balances numeric[];
  v_amounts numeric[];
  v_txs bigint[];
  v_bad record;
  v_ids bigint[];
  v_deltas numeric[];
  v_tx1 bigint;
  j integer;
BEGIN
  IF n = 1 AND cardinality(p_accounts) = 2 AND cardinality(p_amounts) = 2 AND cardinality(p_of) = 2 AND p_of[1] = 1 AND p_of[2] = 1
     AND cardinality(p_actors) = 1 AND coalesce(cardinality(p_reverses), 1) = 1
     AND p_accounts[1] <> p_accounts[2] AND p_amounts[1] <> 0 AND p_amounts[1] + p_amounts[2] = 0 THEN
    -- Row locks in ascending id order (the fixed order of every writer), reading what we need.
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

  IF cardinality(p_of) <> cardinality(p_accounts) OR cardinality(p_of) <> cardinality(p_amounts) OR n <> cardinality(p_actors)
     OR (p_reverses IS NOT NULL AND cardinality(p_reverses) <> n)
     OR EXISTS (SELECT 1 FROM unnest(p_of) AS o WHERE o IS NULL OR o NOT BETWEEN 1 AND n) THEN
    RAISE EXCEPTION 'ledger_post_many: % postings for % accounts and % amounts; % memos, % actors', cardinality(p_of),
      cardinality(p_accounts), cardinality(p_amounts), n, cardinality(p_actors) USING ERRCODE = 'OB902';
  END IF;
  IF n = 0 THEN
    RETURN '{}';
  END IF;
  -- Row locks in ascending id order (the fixed order of every writer), reading what we need.
  SELECT array_agg(p.tx ORDER BY p.k), array_agg(p.account_id ORDER BY p.k), array_agg(a.currency ORDER BY p.k),
         array_agg(a.kind ORDER BY p.k), array_agg(a.balance ORDER BY p.k), array_agg(p.amount ORDER BY p.k)
    INTO v_tx, v_accounts, v_currencies, v_kinds, v_balances, v_amounts
    FROM unnest(p_of, p_accounts, p_amounts) WITH ORDINALITY AS p(tx, account_id, amount, k)
    LEFT JOIN (SELECT id, kind, currency, balance FROM ledger_accounts WHERE id = ANY (p_accounts) ORDER BY id FOR UPDATE) a
      ON a.id = p.account_id
    WHERE p.amount <> 0;

  SELECT r.account_id INTO v_bad FROM unnest(v_accounts, v_currencies) AS r(account_id, currency) WHERE r.currency IS NULL LIMIT 1;
  IF FOUND THEN
    RAISE EXCEPTION 'ledger_post: no account %', v_bad.account_id USING ERRCODE = 'OB902';
  END IF;
  SELECT coalesce(c.postings, 0) AS postings INTO v_bad
    FROM generate_series(1, n) AS t(tx) LEFT JOIN (SELECT tx, count(*) AS postings FROM unnest(v_tx) AS tx GROUP BY tx) c USING (tx)
    WHERE coalesce(c.postings, 0) < 2 LIMIT 1;
  IF FOUND THEN
    RAISE EXCEPTION 'ledger_post: % non-zero postings, need two or more', v_bad.postings USING ERRCODE = 'OB902';
  END IF;
  SELECT r.currency, sum(r.amount) AS total INTO v_bad FROM unnest(v_tx, v_currencies, v_amounts) AS r(tx, currency, amount)
    GROUP BY r.tx, r.currency HAVING sum(r.amount) <> 0 LIMIT 1;
  IF FOUND THEN
    RAISE EXCEPTION 'ledger_post: postings do not sum to zero in %: %', v_bad.currency, v_bad.total USING ERRCODE = 'OB901';
  END IF;
  -- Each guarded account's balance after each transaction, in their order.
  SELECT s.currency, s.after - s.delta AS before, s.after INTO v_bad FROM (
      SELECT d.account_id, d.tx, d.currency, d.delta, d.balance + sum(d.delta) OVER (PARTITION BY d.account_id ORDER BY d.tx) AS after
      FROM (SELECT r.account_id, r.tx, r.currency, r.balance, sum(r.amount) AS delta
            FROM unnest(v_accounts, v_tx, v_currencies, v_kinds, v_balances, v_amounts) AS r(account_id, tx, currency, kind, balance, amount)
            WHERE r.kind IN ('user', 'hold', 'card') GROUP BY r.account_id, r.tx, r.currency, r.balance) d) s
    WHERE s.after < 0 ORDER BY s.tx, s.account_id LIMIT 1;
  IF FOUND THEN
    RAISE EXCEPTION 'insufficient_funds' USING ERRCODE = 'OB000',
      DETAIL = json_build_object('currency', v_bad.currency, 'balance', v_bad.before::text, 'needed', (v_bad.before - v_bad.after)::text)::text;
  END IF;

  SELECT array_agg(nextval('ledger_transactions_id_seq') ORDER BY i) INTO v_txs FROM generate_series(1, n) AS i;
  INSERT INTO ledger_transactions (id, kind, memo, actor, reverses)
    SELECT v_txs[i], p_kind, p_memos[i], p_actors[i], p_reverses[i] FROM generate_series(1, n) AS i;
  INSERT INTO postings (transaction_id, account_id, currency, amount)
    SELECT v_txs[r.tx], r.account_id, r.currency, r.amount FROM unnest(v_tx, v_accounts, v_currencies, v_amounts) AS r(tx, account_id, currency, amount);
  UPDATE ledger_accounts a SET balance = a.balance + d.delta
    FROM (SELECT r.account_id, sum(r.amount) AS delta FROM unnest(v_accounts, v_amounts) AS r(account_id, amount) GROUP BY r.account_id) d
    WHERE a.id = d.account_id AND d.delta <> 0;
  RETURN v_txs;
END $$;
