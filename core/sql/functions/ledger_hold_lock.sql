-- The hold a release or a capture ends, locked: refused when it does not exist
-- ('hold_not_found') or is no longer held ('hold_not_held', with its state). The row lock comes
-- before any account's, so a concurrent release or capture of the same hold waits here.
CREATE OR REPLACE FUNCTION ledger_hold_lock(p_hold bigint) RETURNS holds LANGUAGE plpgsql AS $$
DECLARE
  h holds;
BEGIN
  SELECT * INTO h FROM holds WHERE id = p_hold FOR UPDATE;
  IF NOT FOUND THEN
    RAISE EXCEPTION 'hold_not_found' USING ERRCODE = 'OB000', DETAIL = json_build_object('hold', p_hold::text)::text;
  END IF;
  IF h.state <> 'held' THEN
    RAISE EXCEPTION 'hold_not_held' USING ERRCODE = 'OB000', DETAIL = json_build_object('hold', p_hold::text, 'state', h.state)::text;
  END IF;
  RETURN h;
END $$;
