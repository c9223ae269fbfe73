-- Records one event of a user inside the caller's transaction and returns its sequence number
-- (per user, from 1, no gaps: the event_seqs row stays locked until the transaction ends).
-- Callers that record events for two users lock in ascending user id (event_record_pair), so
-- two transactions between the same users never wait on each other crosswise.
CREATE OR REPLACE FUNCTION event_record(p_user bigint, p_type text, p_payload jsonb) RETURNS bigint LANGUAGE plpgsql
  SET plan_cache_mode = force_generic_plan AS $$
DECLARE
  v_seq bigint;
BEGIN
  INSERT INTO event_seqs AS s (user_id, seq) VALUES (p_user, 1)
    ON CONFLICT (user_id) DO UPDATE SET seq = s.seq + 1
    RETURNING s.seq INTO v_seq;
  INSERT INTO events (user_id, seq, type, payload) VALUES (p_user, v_seq, p_type, p_payload);
  RETURN v_seq;
END $$;
