-- The answer of the call that claimed the key (idempotency_claim), replayed to its duplicates.
-- plpgsql rather than sql: its plan is kept per session (a sql function is planned per call).
CREATE OR REPLACE FUNCTION idempotency_store(p_user bigint, p_key text, p_response jsonb) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
  UPDATE idempotency_keys SET response = p_response WHERE user_id = p_user AND key = p_key;
END $$;
