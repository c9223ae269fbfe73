-- Records events of several users inside the caller's transaction (event_record's rule, set-based,
-- for a writer that moves a whole gathering: deposit_credit): event i is p_types[i] with
-- p_payloads[i] for p_users[i]; each user's events get that user's next sequence numbers in their
-- order here. The users' event_seqs rows are locked in ascending user id, the order of every
-- writer that records events of several users. (plpgsql, not sql: its plan is kept between calls.)
CREATE OR REPLACE FUNCTION event_record_many(p_users bigint[], p_types text[], p_payloads jsonb[]) RETURNS void LANGUAGE plpgsql
  SET plan_cache_mode = force_generic_plan AS $$
BEGIN
  WITH counts AS (
    SELECT u AS user_id, count(*) AS n FROM unnest(p_users) AS u GROUP BY u
  ), seqs AS (
    INSERT INTO event_seqs AS s (user_id, seq) SELECT user_id, n FROM counts ORDER BY user_id
      ON CONFLICT (user_id) DO UPDATE SET seq = s.seq + excluded.seq
      RETURNING s.user_id, s.seq
  )
  INSERT INTO events (user_id, seq, type, payload)
    SELECT e.user_id, s.seq - count(*) OVER w + row_number() OVER (w ORDER BY e.i), e.type, e.payload
    FROM unnest(p_users, p_types, p_payloads) WITH ORDINALITY AS e(user_id, type, payload, i)
    JOIN seqs s USING (user_id)
    WINDOW w AS (PARTITION BY e.user_id);
END $$;
