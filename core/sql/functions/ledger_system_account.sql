-- A house account (liquidity, fees, clearing/<system>, ...) in a currency, created on first use.
CREATE OR REPLACE FUNCTION ledger_system_account(p_kind text, p_currency text, p_name text DEFAULT '') RETURNS bigint LANGUAGE plpgsql AS $$
DECLARE
  v_id bigint;
BEGIN
  SELECT id INTO v_id FROM ledger_accounts WHERE user_id IS NULL AND kind = p_kind AND currency = p_currency AND name = p_name;
  IF v_id IS NULL THEN
    INSERT INTO ledger_accounts (kind, currency, name) VALUES (p_kind, p_currency, p_name)
      ON CONFLICT (kind, currency, name) WHERE user_id IS NULL DO NOTHING RETURNING id INTO v_id;
    IF v_id IS NULL THEN
      SELECT id INTO v_id FROM ledger_accounts WHERE user_id IS NULL AND kind = p_kind AND currency = p_currency AND name = p_name;
    END IF;
  END IF;
  RETURN v_id;
END $$;
