-- The mid rate (major units of p_to per 1 of p_from) a referral accrual converts a fee share
-- at: the operator's `rates` row of the pair, else the inverse of the reverse pair, else NULL
-- (no accrual). 1 for the same currency.
CREATE OR REPLACE FUNCTION referral_rate(p_from text, p_to text) RETURNS numeric LANGUAGE sql STABLE AS $$
  SELECT CASE WHEN p_from = p_to THEN 1::numeric ELSE coalesce(
    (SELECT rate FROM rates WHERE src = p_from AND dst = p_to),
    (SELECT 1 / rate FROM rates WHERE src = p_to AND dst = p_from)) END
$$;
