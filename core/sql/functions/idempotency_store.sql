-- The answer of the call that claimed the key (idempotency_claim), replayed to its duplicates.
CREATE OR REPLACE FUNCTION idempotency_store(p_user bigint, p_key text, p_response jsonb) RETURNS void LANGUAGE sql AS $$
  UPDATE idempotency_keys SET response = p_response WHERE user_id = p_user AND key = p_key
$$;
