-- The account a user spends p_needed from in a currency. A user who never held that currency
-- has none: refused as an overdraft of a zero balance ('insufficient_funds', as ledger_post says it).
CREATE OR REPLACE FUNCTION ledger_spending_account(p_user bigint, p_currency text, p_needed numeric) RETURNS bigint LANGUAGE plpgsql AS $$
DECLARE
  v_id bigint;
BEGIN
  v_id := (SELECT id FROM ledger_accounts WHERE user_id = p_user AND currency = p_currency);
  IF v_id IS NULL THEN
    RAISE EXCEPTION 'insufficient_funds' USING ERRCODE = 'OB000',
      DETAIL = json_build_object('currency', p_currency, 'balance', '0', 'needed', p_needed::text)::text;
  END IF;
  RETURN v_id;
END $$;
