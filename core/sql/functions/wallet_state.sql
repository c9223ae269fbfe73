-- The wallets of a user with balances in minor units, valued in the display currency at mid
-- rates (rounded down), as JSON: what getWalletEnvelope formats. Each wallet has its available
-- balance and its held one (holds: migration 025); the total counts both. Enabled currencies,
-- plus any disabled one that still holds money. plpgsql rather than sql: its plan is cached per session.
-- p_ids/p_balances: balances to show instead of the stored ones for those accounts (a batched
-- transfer answers with its sender's wallets as its own item left them, not as the whole batch did).
CREATE OR REPLACE FUNCTION wallet_state(p_user bigint, p_ids bigint[] DEFAULT NULL, p_balances numeric[] DEFAULT NULL)
  RETURNS jsonb LANGUAGE plpgsql STABLE
  SET plan_cache_mode = force_generic_plan AS $$
BEGIN
  RETURN (WITH u AS (
    SELECT u.account_id, coalesce(ws.display_currency, 'USD') AS display, ws.last_exchange_currency AS last
    FROM users u LEFT JOIN wallet_settings ws ON ws.user_id = u.id WHERE u.id = p_user
  ),
  d AS (SELECT c.code, c.precision, c.logo FROM currencies c JOIN u ON c.code = u.display),
  w AS (
    SELECT c.code, c.precision, c.logo, c.position, coalesce(a.balance, 0) AS balance, coalesce(h.balance, 0) AS held
    FROM currencies c
    LEFT JOIN (SELECT currency, coalesce(p_balances[array_position(p_ids, id)], balance) AS balance FROM ledger_accounts WHERE user_id = p_user) a
      ON a.currency = c.code
    LEFT JOIN (SELECT currency, coalesce(p_balances[array_position(p_ids, id)], balance) AS balance FROM ledger_accounts WHERE holder_id = p_user) h
      ON h.currency = c.code
    WHERE c.enabled OR coalesce(a.balance, 0) <> 0 OR coalesce(h.balance, 0) <> 0
  ),
  -- Rates are looked up only for wallets holding money: directly, else through USD.
  v AS (
    SELECT CASE
      WHEN w.code = d.code THEN w.balance + w.held
      WHEN w.balance + w.held = 0 THEN 0
      ELSE floor((w.balance + w.held) * coalesce(
        (SELECT r.rate FROM rates r WHERE r.src = w.code AND r.dst = d.code),
        (SELECT r.rate FROM rates r WHERE r.src = w.code AND r.dst = 'USD') * (SELECT r.rate FROM rates r WHERE r.src = 'USD' AND r.dst = d.code)
      ) * power(10::numeric, d.precision - w.precision))
    END AS value
    FROM w CROSS JOIN d
  )
  SELECT jsonb_build_object(
    'account_id', u.account_id,
    'last', u.last,
    'display', jsonb_build_object('code', d.code, 'precision', d.precision, 'logo', d.logo),
    'total', (SELECT coalesce(sum(v.value), 0)::text FROM v),
    'wallets', (SELECT coalesce(jsonb_agg(jsonb_build_array(w.code, w.precision, w.logo, w.balance::text, w.held::text) ORDER BY w.position, w.code), '[]'::jsonb) FROM w)
  )
  FROM u CROSS JOIN d);
END $$;
