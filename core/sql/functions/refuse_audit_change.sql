-- The operator audit (table of migration 011) is append-only, whoever writes.
CREATE OR REPLACE FUNCTION refuse_audit_change() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  RAISE EXCEPTION 'operator_audit is append-only';
END
$$;

CREATE OR REPLACE TRIGGER operator_audit_append_only BEFORE UPDATE OR DELETE OR TRUNCATE ON operator_audit
  FOR EACH STATEMENT EXECUTE FUNCTION refuse_audit_change();
