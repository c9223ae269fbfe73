-- Every new row: one writer at a time (the lock is held to its commit), its id taken under the
-- lock so ids follow the chain, linked to the last row and hashed. Callers only insert.
CREATE OR REPLACE FUNCTION operator_audit_chain() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM pg_advisory_xact_lock(hashtext('operator_audit_chain'));
  NEW.id := nextval(pg_get_serial_sequence('operator_audit', 'id'));
  NEW.at := clock_timestamp();
  NEW.prev_hash := (SELECT hash FROM operator_audit ORDER BY id DESC LIMIT 1);
  NEW.hash := operator_audit_hash(NEW.prev_hash, operator_audit_content(NEW));
  RETURN NEW;
END $$;
CREATE OR REPLACE TRIGGER operator_audit_chain BEFORE INSERT ON operator_audit
  FOR EACH ROW EXECUTE FUNCTION operator_audit_chain();
