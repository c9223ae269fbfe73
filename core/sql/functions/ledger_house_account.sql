-- The house account of a kind for one user's movement: liquidity and fee accounts are split
-- into 8 shards by user, so concurrent exchanges of different users do not queue on one row
-- (a house account may go negative, so any shard will do). Their sum is the house's position.
CREATE OR REPLACE FUNCTION ledger_house_account(p_kind text, p_currency text, p_user bigint) RETURNS bigint LANGUAGE sql AS $$
  SELECT ledger_system_account(p_kind, p_currency, 'shard-' || (p_user % 8))
$$;
