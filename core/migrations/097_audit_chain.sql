-- The operators' audit trail becomes a hash chain: each row's hash covers the previous row's
-- hash and the row's own canonical content, so a row edited or removed behind the append-only
-- trigger (a superuser can switch it off) breaks the chain at that row (`ops audit:verify`).
-- Besides who, what and on whom: the outcome (an action done, an attempt denied, personal data
-- viewed), a reason code and text, the request id and address, and before/after of a change.
ALTER TABLE operator_audit
  ADD COLUMN outcome text NOT NULL DEFAULT 'done' CHECK (outcome IN ('done', 'denied', 'viewed')),
  ADD COLUMN reason_code text,
  ADD COLUMN reason_text text,
  ADD COLUMN request_id text,
  ADD COLUMN ip text,
  ADD COLUMN before jsonb,
  ADD COLUMN after jsonb,
  ADD COLUMN prev_hash bytea,
  ADD COLUMN hash bytea;

-- The backfill below needs these two now; their current definitions are in core/sql/functions.
-- What a row's hash covers, as text: one JSON object (jsonb's text form is canonical: keys in a
-- fixed order, one spacing), the time in UTC to the microsecond whatever the session's zone.
CREATE FUNCTION operator_audit_content(a operator_audit) RETURNS text LANGUAGE sql IMMUTABLE AS $$
  SELECT jsonb_build_object(
    'id', a.id,
    'at', to_char(a.at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"'),
    'actor', a.operator,
    'action', a.action,
    'subject', a.subject,
    'details', a.details,
    'outcome', a.outcome,
    'reason_code', a.reason_code,
    'reason_text', a.reason_text,
    'request_id', a.request_id,
    'ip', a.ip,
    'before', a.before,
    'after', a.after
  )::text
$$;

CREATE FUNCTION operator_audit_hash(prev bytea, content text) RETURNS bytea LANGUAGE sql IMMUTABLE AS $$
  SELECT sha256(coalesce(prev, ''::bytea) || convert_to(content, 'UTF8'))
$$;

-- The rows written so far, chained in the order they were written.
ALTER TABLE operator_audit DISABLE TRIGGER operator_audit_append_only;
DO $$
DECLARE
  r operator_audit;
  prev bytea := NULL;
BEGIN
  FOR r IN SELECT * FROM operator_audit ORDER BY id LOOP
    r.prev_hash := prev;
    prev := operator_audit_hash(prev, operator_audit_content(r));
    UPDATE operator_audit SET prev_hash = r.prev_hash, hash = prev WHERE id = r.id;
  END LOOP;
END $$;
ALTER TABLE operator_audit ENABLE TRIGGER operator_audit_append_only;

ALTER TABLE operator_audit ALTER COLUMN hash SET NOT NULL;
CREATE INDEX operator_audit_actor ON operator_audit (operator, id);
CREATE INDEX operator_audit_action ON operator_audit (action, id);
