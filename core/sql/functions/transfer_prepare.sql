-- Checks a transfer without moving anything: currency, limits, recipient, fee.
CREATE OR REPLACE FUNCTION transfer_prepare(
  p_user bigint, p_recipient_account integer, p_currency text, p_amount numeric,
  OUT recipient_id bigint, OUT recipient_name text, OUT fee numeric, OUT balance numeric
) LANGUAGE plpgsql
  SET plan_cache_mode = force_generic_plan AS $$
DECLARE
  s record;
BEGIN
  SELECT c.code, c.enabled AND coalesce(t.enabled, true) AS enabled, coalesce(t.min_amount, 1) AS min_amount, t.max_amount,
         coalesce(t.fee_fixed, 0) AS fee_fixed, coalesce(t.fee_percent, 0) AS fee_percent
    INTO s FROM currencies c LEFT JOIN transfer_settings t ON t.currency = c.code WHERE c.code = p_currency;
  IF NOT FOUND OR NOT s.enabled THEN
    RAISE EXCEPTION 'currency_disabled' USING ERRCODE = 'OB000', DETAIL = json_build_object('currency', p_currency)::text;
  END IF;
  IF p_amount <= 0 THEN
    RAISE EXCEPTION 'amount_not_positive' USING ERRCODE = 'OB000', DETAIL = json_build_object('currency', p_currency)::text;
  END IF;
  IF p_amount < s.min_amount THEN
    RAISE EXCEPTION 'amount_too_small' USING ERRCODE = 'OB000', DETAIL = json_build_object('currency', p_currency, 'min', s.min_amount::text)::text;
  END IF;
  IF s.max_amount IS NOT NULL AND p_amount > s.max_amount THEN
    RAISE EXCEPTION 'amount_too_large' USING ERRCODE = 'OB000', DETAIL = json_build_object('currency', p_currency, 'max', s.max_amount::text)::text;
  END IF;
  SELECT u.id, mask_person(u.first_name, u.last_name, u.email) INTO recipient_id, recipient_name
    FROM users u WHERE u.account_id = p_recipient_account;
  IF NOT FOUND THEN
    RAISE EXCEPTION 'recipient_not_found' USING ERRCODE = 'OB000', DETAIL = json_build_object('account_id', p_recipient_account)::text;
  END IF;
  IF recipient_id = p_user THEN
    RAISE EXCEPTION 'transfer_to_self' USING ERRCODE = 'OB000', DETAIL = '{}';
  END IF;
  -- The fee rounds up (in the house's favour).
  fee := ceil(p_amount * s.fee_percent) + s.fee_fixed;
  SELECT coalesce((SELECT a.balance FROM ledger_accounts a WHERE a.user_id = p_user AND a.currency = p_currency), 0) INTO balance;
END $$;
