-- Four eyes, held by the database whatever the code above it does: a request is decided once,
-- while pending; its content never changes; and whoever proposed it may withdraw it but never
-- approve or decline it. Refusals are business errors (OB000) the core turns into answers.
CREATE OR REPLACE FUNCTION ops_request_guard() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'DELETE' THEN
    RAISE EXCEPTION 'ops_request_closed' USING ERRCODE = 'OB000';
  END IF;
  IF OLD.state <> 'pending' THEN
    RAISE EXCEPTION 'ops_request_closed' USING ERRCODE = 'OB000';
  END IF;
  IF (NEW.action, NEW.params, NEW.subject, NEW.reason_code, NEW.reason_text, NEW.proposed_by, NEW.proposed_at, NEW.expires_at)
     IS DISTINCT FROM (OLD.action, OLD.params, OLD.subject, OLD.reason_code, OLD.reason_text, OLD.proposed_by, OLD.proposed_at, OLD.expires_at) THEN
    RAISE EXCEPTION 'ops_request_closed' USING ERRCODE = 'OB000';
  END IF;
  IF NEW.state IN ('approved', 'declined') AND NEW.decided_by IS NOT DISTINCT FROM OLD.proposed_by THEN
    RAISE EXCEPTION 'ops_four_eyes' USING ERRCODE = 'OB000';
  END IF;
  IF NEW.state = 'withdrawn' AND NEW.decided_by IS DISTINCT FROM OLD.proposed_by THEN
    RAISE EXCEPTION 'ops_request_closed' USING ERRCODE = 'OB000';
  END IF;
  RETURN NEW;
END $$;
CREATE OR REPLACE TRIGGER ops_request_guard BEFORE UPDATE OR DELETE ON ops_requests
  FOR EACH ROW EXECUTE FUNCTION ops_request_guard();
