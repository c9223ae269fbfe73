-- Row locks in one fixed order (ascending id): two writers can wait on each other, never in a
-- cycle. A writer that touches accounts in several steps locks all of them here first.
CREATE OR REPLACE FUNCTION ledger_lock(p_accounts bigint[]) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
  PERFORM 1 FROM ledger_accounts WHERE id = ANY (p_accounts) ORDER BY id FOR UPDATE;
END $$;
