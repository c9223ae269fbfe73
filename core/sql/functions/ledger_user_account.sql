-- The account of a user in a currency, created on first use.
CREATE OR REPLACE FUNCTION ledger_user_account(p_user bigint, p_currency text) RETURNS bigint LANGUAGE plpgsql AS $$
DECLARE
  v_id bigint;
BEGIN
  SELECT id INTO v_id FROM ledger_accounts WHERE user_id = p_user AND currency = p_currency;
  IF v_id IS NULL THEN
    INSERT INTO ledger_accounts (kind, user_id, currency) VALUES ('user', p_user, p_currency)
      ON CONFLICT (user_id, currency) WHERE user_id IS NOT NULL DO NOTHING RETURNING id INTO v_id;
    IF v_id IS NULL THEN
      SELECT id INTO v_id FROM ledger_accounts WHERE user_id = p_user AND currency = p_currency;
    END IF;
  END IF;
  RETURN v_id;
END $$;
