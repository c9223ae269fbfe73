-- Every ledger transaction sums to zero per currency. ledger_post checks this before writing;
-- this trigger holds it for any other writer too: after each INSERT into postings (one check
-- per statement, not per row), every ledger transaction touched sums to zero per currency, so
-- a transaction's postings are inserted together, in one statement. (Two or more postings:
-- ledger_transactions_posted.sql.)
CREATE OR REPLACE FUNCTION postings_balanced() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  v_bad record;
BEGIN
  -- Per transaction touched, its postings by the index (LATERAL): a join of the transition table
  -- (no statistics) with postings was planned as a scan of all postings, 0.6 ms a deposit at 15k rows.
  SELECT t.transaction_id, s.currency, s.total INTO v_bad
    FROM (SELECT DISTINCT n.transaction_id FROM new_postings n) t,
    LATERAL (SELECT p.currency, sum(p.amount) AS total FROM postings p WHERE p.transaction_id = t.transaction_id
             GROUP BY p.currency HAVING sum(p.amount) <> 0) s
    LIMIT 1;
  IF FOUND THEN
    RAISE EXCEPTION 'ledger transaction % does not sum to zero in %: %', v_bad.transaction_id, v_bad.currency, v_bad.total
      USING ERRCODE = 'OB901';
  END IF;
  RETURN NULL;
END $$;

CREATE OR REPLACE TRIGGER postings_balanced AFTER INSERT ON postings
  REFERENCING NEW TABLE AS new_postings FOR EACH STATEMENT EXECUTE FUNCTION postings_balanced();
