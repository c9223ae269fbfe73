CREATE OR REPLACE FUNCTION ledger_transactions_posted() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  v_count integer;
BEGIN
  SELECT count(*) INTO v_count FROM postings WHERE transaction_id = NEW.id;
  IF v_count < 2 THEN
    RAISE EXCEPTION 'ledger transaction % has % posting(s), needs two or more', NEW.id, v_count USING ERRCODE = 'OB901';
  END IF;
  RETURN NULL;
END $$;

-- At commit (deferred): every new ledger transaction has two or more postings. A constraint
-- trigger cannot be replaced in place, so it is created when missing.
DO $$
BEGIN
  IF NOT EXISTS (SELECT 1 FROM pg_trigger WHERE tgname = 'ledger_transactions_posted' AND tgrelid = 'ledger_transactions'::regclass) THEN
    CREATE CONSTRAINT TRIGGER ledger_transactions_posted AFTER INSERT ON ledger_transactions
      DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION ledger_transactions_posted();
  END IF;
END $$;
