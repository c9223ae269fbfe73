-- A row's hash in the operator audit's chain: sha256 of the previous row's hash and the row's content.
CREATE OR REPLACE FUNCTION operator_audit_hash(prev bytea, content text) RETURNS bytea LANGUAGE sql IMMUTABLE AS $$
  SELECT sha256(coalesce(prev, ''::bytea) || convert_to(content, 'UTF8'))
$$;
