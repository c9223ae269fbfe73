-- Idempotency of every money-moving call, the one mechanism (core/src/domains/idempotency):
-- one row per (user, key), claimed FIRST in the database transaction that moves the money.
--   - a new key: this call claimed it; NULL is returned, the caller moves the money and stores
--     its answer with idempotency_store() before commit;
--   - a concurrent duplicate blocks on the row's unique index until the first commits, then
--     gets the stored answer back (replay); if the first rolled back, the key is free again and
--     this call claims it;
--   - the same key with another request (another hash of route and normalized body):
--     'idempotency_key_reused'.
CREATE OR REPLACE FUNCTION idempotency_claim(p_user bigint, p_key text, p_hash text) RETURNS jsonb LANGUAGE plpgsql AS $$
DECLARE
  v_prev record;
BEGIN
  INSERT INTO idempotency_keys (user_id, key, request_hash) VALUES (p_user, p_key, p_hash) ON CONFLICT DO NOTHING;
  IF FOUND THEN
    RETURN NULL;
  END IF;
  SELECT request_hash, response INTO v_prev FROM idempotency_keys WHERE user_id = p_user AND key = p_key;
  IF NOT FOUND OR v_prev.request_hash <> p_hash OR v_prev.response IS NULL THEN
    RAISE EXCEPTION 'idempotency_key_reused' USING ERRCODE = 'OB000', DETAIL = '{}';
  END IF;
  RETURN v_prev.response;
END $$;
