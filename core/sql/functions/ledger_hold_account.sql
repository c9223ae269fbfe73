-- The held balance of a user in a currency (ledger kind 'hold', holder_id = the user; see
-- migration 025), created on first use.
CREATE OR REPLACE FUNCTION ledger_hold_account(p_user bigint, p_currency text) RETURNS bigint LANGUAGE plpgsql AS $$
DECLARE
  v_id bigint;
BEGIN
  SELECT id INTO v_id FROM ledger_accounts WHERE holder_id = p_user AND currency = p_currency;
  IF v_id IS NULL THEN
    INSERT INTO ledger_accounts (kind, holder_id, currency, name) VALUES ('hold', p_user, p_currency, 'user:' || p_user)
      ON CONFLICT (holder_id, currency) WHERE holder_id IS NOT NULL DO NOTHING RETURNING id INTO v_id;
    IF v_id IS NULL THEN
      SELECT id INTO v_id FROM ledger_accounts WHERE holder_id = p_user AND currency = p_currency;
    END IF;
  END IF;
  RETURN v_id;
END $$;
