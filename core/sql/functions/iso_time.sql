CREATE OR REPLACE FUNCTION iso_time(p_at timestamptz) RETURNS text LANGUAGE sql STABLE AS $$
  SELECT to_char(p_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')
$$;
