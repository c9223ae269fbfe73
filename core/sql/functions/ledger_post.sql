-- The one way money moves: postings (account, amount) that sum to zero per currency. Zero
-- amounts are dropped. Returns the ledger transaction id. One transaction of
-- ledger_post_many, which holds the posting rules (locks in ascending id order, the overdraft
-- refusal, the writes) for one transaction and for many; this keeps only ledger_post's own
-- refusal of arrays of different lengths.
CREATE OR REPLACE FUNCTION ledger_post(
  p_kind text, p_accounts bigint[], p_amounts numeric[],
  p_memo text DEFAULT NULL, p_actor text DEFAULT NULL, p_reverses bigint DEFAULT NULL
) RETURNS bigint LANGUAGE plpgsql
  SET plan_cache_mode = force_generic_plan AS $$
DECLARE
  n integer := coalesce(array_length(p_accounts, 1), 0);
BEGIN
  IF n <> coalesce(array_length(p_amounts, 1), 0) THEN
    RAISE EXCEPTION 'ledger_post: % accounts, % amounts', n, coalesce(array_length(p_amounts, 1), 0) USING ERRCODE = 'OB902';
  END IF;
  RETURN (ledger_post_many(p_kind, array_fill(1, ARRAY[n]), p_accounts, p_amounts, ARRAY[p_memo], ARRAY[p_actor], ARRAY[p_reverses]))[1];
END $$;
