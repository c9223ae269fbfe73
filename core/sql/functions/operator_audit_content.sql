-- What a row's hash covers, as text: one JSON object (jsonb's text form is canonical: keys in a
-- fixed order, one spacing), the time in UTC to the microsecond whatever the session's zone.
CREATE OR REPLACE FUNCTION operator_audit_content(a operator_audit) RETURNS text LANGUAGE sql IMMUTABLE AS $$
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
