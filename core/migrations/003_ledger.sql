-- Money: the double-entry ledger, rates, exchanges, transfers, idempotency keys.
--
-- Amounts are integers in minor units (numeric(38,0)); rates and percentages are exact
-- decimals (numeric). Every movement of money is one call of ledger_post(): it locks the
-- accounts in ascending id order, refuses an overdraft of a user account, writes one
-- ledger transaction with its postings and updates the balances, all in the caller's
-- database transaction. Errors meant for people are raised with SQLSTATE 'OB000', the
-- message an error code and the detail a JSON object of values (see ledger/errors.ts);
-- 'OB9xx' are broken rules of the ledger itself, which no user input can trigger.

-- ---- accounts and balances ------------------------------------------------------------------

CREATE TABLE ledger_accounts (
  id bigserial PRIMARY KEY,
  -- user: a user's wallet. The others belong to the house:
  --   liquidity   counterparty of every exchange, per currency in 8 shards by user (see
  --               ledger_house_account; may go negative: the house's position, settled
  --               outside the ledger)
  --   fees        exchange and transfer fees and rounding remainders (sharded the same way)
  --   clearing    money in flight with a payment system (name = the system, e.g. 'sandbox')
  --   referral    referral bonus expense
  --   card_fees   payment card fees
  --   adjustment  operator credits and debits (balance:credit/debit) and the demo balances
  kind text NOT NULL CHECK (kind IN ('user', 'liquidity', 'fees', 'clearing', 'referral', 'card_fees', 'adjustment')),
  user_id bigint REFERENCES users (id),
  currency text NOT NULL REFERENCES currencies (code),
  name text NOT NULL DEFAULT '',
  balance numeric(38, 0) NOT NULL DEFAULT 0,
  created_at timestamptz NOT NULL DEFAULT now(),
  CHECK ((kind = 'user') = (user_id IS NOT NULL)),
  -- The last line of defence; ledger_post refuses an overdraft with a clear error first.
  CONSTRAINT user_balance_not_negative CHECK (kind <> 'user' OR balance >= 0),
  UNIQUE (id, currency)
);
CREATE UNIQUE INDEX ledger_accounts_user ON ledger_accounts (user_id, currency) WHERE user_id IS NOT NULL;
CREATE UNIQUE INDEX ledger_accounts_system ON ledger_accounts (kind, currency, name) WHERE user_id IS NULL;

CREATE TABLE ledger_transactions (
  id bigserial PRIMARY KEY,
  kind text NOT NULL CHECK (kind IN ('transfer', 'exchange', 'adjustment', 'reversal', 'deposit', 'withdrawal', 'referral', 'card')),
  -- A correction is a new transaction that reverses an old one, at most once.
  reverses bigint UNIQUE REFERENCES ledger_transactions (id),
  memo text,
  -- Who caused it: 'user:<id>', 'operator', 'system', 'seed'.
  actor text,
  created_at timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE postings (
  id bigserial PRIMARY KEY,
  transaction_id bigint NOT NULL REFERENCES ledger_transactions (id),
  account_id bigint NOT NULL,
  currency text NOT NULL,
  amount numeric(38, 0) NOT NULL CHECK (amount <> 0),
  FOREIGN KEY (account_id, currency) REFERENCES ledger_accounts (id, currency)
);
CREATE INDEX postings_transaction ON postings (transaction_id);
CREATE INDEX postings_account ON postings (account_id, id);

-- Append-only: the database refuses to change or remove what was posted.
CREATE FUNCTION ledger_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  RAISE EXCEPTION 'the ledger is append-only: % on % refused (post a reversing transaction instead)', TG_OP, TG_TABLE_NAME
    USING ERRCODE = 'OB903';
END $$;
CREATE TRIGGER postings_append_only BEFORE UPDATE OR DELETE ON postings
  FOR EACH ROW EXECUTE FUNCTION ledger_append_only();
CREATE TRIGGER postings_no_truncate BEFORE TRUNCATE ON postings
  FOR EACH STATEMENT EXECUTE FUNCTION ledger_append_only();
CREATE TRIGGER ledger_transactions_append_only BEFORE UPDATE OR DELETE ON ledger_transactions
  FOR EACH ROW EXECUTE FUNCTION ledger_append_only();
CREATE TRIGGER ledger_transactions_no_truncate BEFORE TRUNCATE ON ledger_transactions
  FOR EACH STATEMENT EXECUTE FUNCTION ledger_append_only();

-- Every ledger transaction has two or more postings that sum to zero per currency. ledger_post
-- checks this before writing; these triggers hold it for any other writer too:
--   - after each INSERT into postings (one check per statement, not per row): every ledger
--     transaction touched sums to zero per currency, so a transaction's postings are inserted
--     together, in one statement;
--   - at commit (deferred): every new ledger transaction has two or more postings.
CREATE FUNCTION postings_balanced() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  v_bad record;
BEGIN
  SELECT p.transaction_id, p.currency, sum(p.amount) AS total INTO v_bad
    FROM postings p WHERE p.transaction_id IN (SELECT DISTINCT n.transaction_id FROM new_postings n)
    GROUP BY p.transaction_id, p.currency HAVING sum(p.amount) <> 0 LIMIT 1;
  IF FOUND THEN
    RAISE EXCEPTION 'ledger transaction % does not sum to zero in %: %', v_bad.transaction_id, v_bad.currency, v_bad.total
      USING ERRCODE = 'OB901';
  END IF;
  RETURN NULL;
END $$;
CREATE TRIGGER postings_balanced AFTER INSERT ON postings
  REFERENCING NEW TABLE AS new_postings FOR EACH STATEMENT EXECUTE FUNCTION postings_balanced();

CREATE FUNCTION ledger_transactions_posted() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  v_count integer;
BEGIN
  SELECT count(*) INTO v_count FROM postings WHERE transaction_id = NEW.id;
  IF v_count < 2 THEN
    RAISE EXCEPTION 'ledger transaction % has % posting(s), needs two or more', NEW.id, v_count USING ERRCODE = 'OB901';
  END IF;
  RETURN NULL;
END $$;
CREATE CONSTRAINT TRIGGER ledger_transactions_posted AFTER INSERT ON ledger_transactions
  DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION ledger_transactions_posted();

-- The account of a user in a currency, created on first use.
CREATE FUNCTION ledger_user_account(p_user bigint, p_currency text) RETURNS bigint LANGUAGE plpgsql AS $$
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

-- A house account (liquidity, fees, clearing/<system>, ...) in a currency, created on first use.
CREATE FUNCTION ledger_system_account(p_kind text, p_currency text, p_name text DEFAULT '') RETURNS bigint LANGUAGE plpgsql AS $$
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

-- The house account of a kind for one user's movement: liquidity and fee accounts are split
-- into 8 shards by user, so concurrent exchanges of different users do not queue on one row
-- (a house account may go negative, so any shard will do). Their sum is the house's position.
CREATE FUNCTION ledger_house_account(p_kind text, p_currency text, p_user bigint) RETURNS bigint LANGUAGE sql AS $$
  SELECT ledger_system_account(p_kind, p_currency, 'shard-' || (p_user % 8))
$$;

-- Row locks in one fixed order (ascending id): two writers can wait on each other, never in a
-- cycle. A writer that touches accounts in several steps locks all of them here first.
CREATE FUNCTION ledger_lock(p_accounts bigint[]) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
  PERFORM 1 FROM ledger_accounts WHERE id = ANY (p_accounts) ORDER BY id FOR UPDATE;
END $$;

-- The one way money moves: postings (account, amount) that sum to zero per currency.
-- Zero amounts are dropped. Returns the ledger transaction id. Four statements, whatever the
-- number of postings: lock and read, insert the transaction, its postings, the balances.
CREATE FUNCTION ledger_post(
  p_kind text, p_accounts bigint[], p_amounts numeric[],
  p_memo text DEFAULT NULL, p_actor text DEFAULT NULL, p_reverses bigint DEFAULT NULL
) RETURNS bigint LANGUAGE plpgsql AS $$
DECLARE
  n integer := coalesce(array_length(p_accounts, 1), 0);
  v_ids bigint[];
  v_kinds text[];
  v_currencies text[];
  v_balances numeric[];
  v_deltas numeric[];
  v_post_accounts bigint[] := '{}';
  v_post_currencies text[] := '{}';
  v_post_amounts numeric[] := '{}';
  v_sum_currencies text[] := '{}';
  v_sums numeric[] := '{}';
  i integer;
  j integer;
  k integer;
  v_tx bigint;
BEGIN
  IF n <> coalesce(array_length(p_amounts, 1), 0) THEN
    RAISE EXCEPTION 'ledger_post: % accounts, % amounts', n, coalesce(array_length(p_amounts, 1), 0) USING ERRCODE = 'OB902';
  END IF;
  -- Row locks in ascending id order (the fixed order of every writer), reading what we need.
  SELECT array_agg(id ORDER BY id), array_agg(kind ORDER BY id), array_agg(currency ORDER BY id), array_agg(balance ORDER BY id)
    INTO v_ids, v_kinds, v_currencies, v_balances
    FROM (SELECT id, kind, currency, balance FROM ledger_accounts WHERE id = ANY (p_accounts) ORDER BY id FOR UPDATE) AS locked;
  v_deltas := array_fill(0::numeric, ARRAY[coalesce(array_length(v_ids, 1), 0)]);

  FOR i IN 1 .. n LOOP
    CONTINUE WHEN p_amounts[i] = 0;
    j := array_position(v_ids, p_accounts[i]);
    IF j IS NULL THEN
      RAISE EXCEPTION 'ledger_post: no account %', p_accounts[i] USING ERRCODE = 'OB902';
    END IF;
    v_deltas[j] := v_deltas[j] + p_amounts[i];
    v_post_accounts := v_post_accounts || p_accounts[i];
    v_post_currencies := v_post_currencies || v_currencies[j];
    v_post_amounts := v_post_amounts || p_amounts[i];
    k := array_position(v_sum_currencies, v_currencies[j]);
    IF k IS NULL THEN
      v_sum_currencies := v_sum_currencies || v_currencies[j];
      v_sums := v_sums || p_amounts[i];
    ELSE
      v_sums[k] := v_sums[k] + p_amounts[i];
    END IF;
  END LOOP;
  IF coalesce(array_length(v_post_accounts, 1), 0) < 2 THEN
    RAISE EXCEPTION 'ledger_post: % non-zero postings, need two or more', coalesce(array_length(v_post_accounts, 1), 0) USING ERRCODE = 'OB902';
  END IF;
  FOR k IN 1 .. array_length(v_sum_currencies, 1) LOOP
    IF v_sums[k] <> 0 THEN
      RAISE EXCEPTION 'ledger_post: postings do not sum to zero in %: %', v_sum_currencies[k], v_sums[k] USING ERRCODE = 'OB901';
    END IF;
  END LOOP;
  -- No user balance goes below zero: checked here, under the lock, with a clear error.
  FOR j IN 1 .. array_length(v_ids, 1) LOOP
    IF v_kinds[j] = 'user' AND v_balances[j] + v_deltas[j] < 0 THEN
      RAISE EXCEPTION 'insufficient_funds' USING ERRCODE = 'OB000',
        DETAIL = json_build_object('currency', v_currencies[j], 'balance', v_balances[j]::text, 'needed', (-v_deltas[j])::text)::text;
    END IF;
  END LOOP;

  INSERT INTO ledger_transactions (kind, memo, actor, reverses) VALUES (p_kind, p_memo, p_actor, p_reverses) RETURNING id INTO v_tx;
  INSERT INTO postings (transaction_id, account_id, currency, amount)
    SELECT v_tx, t.account_id, t.currency, t.amount FROM unnest(v_post_accounts, v_post_currencies, v_post_amounts) AS t(account_id, currency, amount);
  UPDATE ledger_accounts a SET balance = a.balance + d.delta
    FROM unnest(v_ids, v_deltas) AS d(id, delta) WHERE a.id = d.id AND d.delta <> 0;
  RETURN v_tx;
END $$;

-- A correction: the same postings with the opposite sign, at most once per transaction.
CREATE FUNCTION ledger_reverse(p_tx bigint, p_memo text, p_actor text) RETURNS bigint LANGUAGE plpgsql AS $$
DECLARE
  v_accounts bigint[];
  v_amounts numeric[];
BEGIN
  IF EXISTS (SELECT 1 FROM ledger_transactions WHERE reverses = p_tx) THEN
    RAISE EXCEPTION 'already_reversed' USING ERRCODE = 'OB000', DETAIL = json_build_object('transaction', p_tx::text)::text;
  END IF;
  SELECT array_agg(account_id ORDER BY id), array_agg(-amount ORDER BY id) INTO v_accounts, v_amounts
    FROM postings WHERE transaction_id = p_tx;
  IF v_accounts IS NULL THEN
    RAISE EXCEPTION 'transaction_not_found' USING ERRCODE = 'OB000', DETAIL = json_build_object('transaction', p_tx::text)::text;
  END IF;
  RETURN ledger_post('reversal', v_accounts, v_amounts, p_memo, p_actor, p_tx);
END $$;

-- ---- wallets --------------------------------------------------------------------------------

CREATE TABLE wallet_settings (
  user_id bigint PRIMARY KEY REFERENCES users (id) ON DELETE CASCADE,
  display_currency text NOT NULL DEFAULT 'USD' REFERENCES currencies (code),
  -- the wallet highlighted in the sidebar: the destination of the last exchange
  last_exchange_currency text
);

-- ---- rates ----------------------------------------------------------------------------------

-- One row per direction. rate: dst per 1 src in major units, mid-market. The user gets
-- rate × (1 − spread); the fee is fee_percent of the paid amount plus fee_fixed, in src.
-- Limits apply to the paid amount, in src minor units.
CREATE TABLE rates (
  src text NOT NULL REFERENCES currencies (code),
  dst text NOT NULL REFERENCES currencies (code),
  rate numeric NOT NULL CHECK (rate > 0),
  spread numeric NOT NULL DEFAULT 0 CHECK (spread >= 0 AND spread < 1),
  fee_percent numeric NOT NULL DEFAULT 0 CHECK (fee_percent >= 0 AND fee_percent < 1),
  fee_fixed numeric(38, 0) NOT NULL DEFAULT 0 CHECK (fee_fixed >= 0),
  min_amount numeric(38, 0) NOT NULL DEFAULT 1 CHECK (min_amount >= 1),
  max_amount numeric(38, 0) CHECK (max_amount IS NULL OR max_amount >= min_amount),
  enabled boolean NOT NULL DEFAULT true,
  source text NOT NULL DEFAULT 'operator',
  updated_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (src, dst),
  CHECK (src <> dst)
);
CREATE INDEX rates_dst ON rates (dst);

-- Internal transfers per currency; a currency without a row: minimum 1 minor unit, no fee.
-- The fee is charged on top: the recipient gets the amount, the sender pays amount + fee.
CREATE TABLE transfer_settings (
  currency text PRIMARY KEY REFERENCES currencies (code),
  min_amount numeric(38, 0) NOT NULL DEFAULT 1 CHECK (min_amount >= 1),
  max_amount numeric(38, 0) CHECK (max_amount IS NULL OR max_amount >= min_amount),
  fee_percent numeric NOT NULL DEFAULT 0 CHECK (fee_percent >= 0 AND fee_percent < 1),
  fee_fixed numeric(38, 0) NOT NULL DEFAULT 0 CHECK (fee_fixed >= 0),
  enabled boolean NOT NULL DEFAULT true
);

-- The wallets of a user with balances in minor units, valued in the display currency at mid
-- rates (rounded down), as JSON: what getWalletEnvelope formats. Enabled currencies, plus any
-- disabled one that still holds money. plpgsql rather than sql: its plan is cached per session.
CREATE FUNCTION wallet_state(p_user bigint) RETURNS jsonb LANGUAGE plpgsql STABLE AS $$
BEGIN
  RETURN (WITH u AS (
    SELECT u.account_id, coalesce(ws.display_currency, 'USD') AS display, ws.last_exchange_currency AS last
    FROM users u LEFT JOIN wallet_settings ws ON ws.user_id = u.id WHERE u.id = p_user
  ),
  d AS (SELECT c.code, c.precision, c.logo FROM currencies c JOIN u ON c.code = u.display),
  w AS (
    SELECT c.code, c.precision, c.logo, c.position, coalesce(a.balance, 0) AS balance
    FROM currencies c LEFT JOIN (SELECT currency, balance FROM ledger_accounts WHERE user_id = p_user) a ON a.currency = c.code
    WHERE c.enabled OR coalesce(a.balance, 0) <> 0
  ),
  -- Rates are looked up only for wallets holding money: directly, else through USD.
  v AS (
    SELECT CASE
      WHEN w.code = d.code THEN w.balance
      WHEN w.balance = 0 THEN 0
      ELSE floor(w.balance * coalesce(
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
    'wallets', (SELECT coalesce(jsonb_agg(jsonb_build_array(w.code, w.precision, w.logo, w.balance::text) ORDER BY w.position, w.code), '[]'::jsonb) FROM w)
  )
  FROM u CROSS JOIN d);
END $$;

-- ---- idempotency ----------------------------------------------------------------------------

-- One row per (user, key), inserted first in the money-moving transaction: a concurrent
-- duplicate waits on the row, then replays `response`. A failed attempt rolls back and
-- leaves no row, so the same key may be tried again.
-- No foreign key to users on purpose: an FK check share-locks the parent row, and concurrent
-- requests of one user would contend on it before any money moves. Old keys are purged.
CREATE TABLE idempotency_keys (
  user_id bigint NOT NULL,
  key text NOT NULL,
  request_hash text NOT NULL,
  response jsonb,
  created_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (user_id, key)
);
CREATE INDEX idempotency_keys_created ON idempotency_keys (created_at);

-- ---- transfers ------------------------------------------------------------------------------

CREATE TABLE transfers (
  id bigserial PRIMARY KEY,
  sender_id bigint NOT NULL REFERENCES users (id),
  recipient_id bigint NOT NULL REFERENCES users (id),
  -- No foreign key to currencies: every concurrent transfer would share-lock the one hot
  -- currency row. The ledger accounts' own foreign keys vouch for the currency.
  currency text NOT NULL,
  amount numeric(38, 0) NOT NULL CHECK (amount > 0),
  fee numeric(38, 0) NOT NULL DEFAULT 0 CHECK (fee >= 0),
  comment text,
  status text NOT NULL DEFAULT 'completed' CHECK (status IN ('completed')),
  ledger_transaction_id bigint NOT NULL REFERENCES ledger_transactions (id),
  idempotency_key text,
  created_at timestamptz NOT NULL DEFAULT now(),
  CHECK (sender_id <> recipient_id)
);
CREATE INDEX transfers_sender ON transfers (sender_id, created_at DESC, id DESC);
CREATE INDEX transfers_recipient ON transfers (recipient_id, created_at DESC, id DESC);

-- "Иван П." when the user gave a first name, else the email masked: "de***@o***.local".
CREATE FUNCTION mask_person(p_first text, p_last text, p_email text) RETURNS text LANGUAGE sql IMMUTABLE AS $$
  SELECT CASE
    WHEN coalesce(btrim(p_first), '') <> '' THEN
      btrim(p_first) || CASE WHEN coalesce(btrim(p_last), '') <> '' THEN ' ' || upper(left(btrim(p_last), 1)) || '.' ELSE '' END
    ELSE
      left(split_part(p_email, '@', 1), 2) || '***@' || left(split_part(p_email, '@', 2), 1) || '***'
        || coalesce(substring(split_part(p_email, '@', 2) from '\.[^.]+$'), '')
  END
$$;

-- Checks a transfer without moving anything: currency, limits, recipient, fee.
CREATE FUNCTION transfer_prepare(
  p_user bigint, p_recipient_account integer, p_currency text, p_amount numeric,
  OUT recipient_id bigint, OUT recipient_name text, OUT fee numeric, OUT balance numeric
) LANGUAGE plpgsql AS $$
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

CREATE FUNCTION iso_time(p_at timestamptz) RETURNS text LANGUAGE sql STABLE AS $$
  SELECT to_char(p_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')
$$;

-- A whole transfer in one round trip: idempotency key, checks, ledger, record, the sender's
-- wallets. Same key and hash: the first answer again ({replayed: true}); same key, other
-- hash: 'idempotency_key_reused'.
CREATE FUNCTION money_transfer(
  p_user bigint, p_key text, p_hash text, p_recipient_account integer, p_currency text, p_amount numeric, p_comment text
) RETURNS jsonb LANGUAGE plpgsql AS $$
DECLARE
  v_prev record;
  p record;
  v_from bigint;
  v_to bigint;
  v_tx bigint;
  v_id bigint;
  v_at timestamptz;
  v_result jsonb;
BEGIN
  INSERT INTO idempotency_keys (user_id, key, request_hash) VALUES (p_user, p_key, p_hash) ON CONFLICT DO NOTHING;
  IF NOT FOUND THEN
    SELECT request_hash, response INTO v_prev FROM idempotency_keys WHERE user_id = p_user AND key = p_key;
    IF v_prev.request_hash <> p_hash THEN
      RAISE EXCEPTION 'idempotency_key_reused' USING ERRCODE = 'OB000', DETAIL = '{}';
    END IF;
    RETURN jsonb_build_object('replayed', true, 'result', v_prev.response, 'wallet', wallet_state(p_user));
  END IF;

  SELECT * INTO p FROM transfer_prepare(p_user, p_recipient_account, p_currency, p_amount);
  v_from := (SELECT id FROM ledger_accounts WHERE user_id = p_user AND currency = p_currency);
  IF v_from IS NULL THEN
    RAISE EXCEPTION 'insufficient_funds' USING ERRCODE = 'OB000',
      DETAIL = json_build_object('currency', p_currency, 'balance', '0', 'needed', (p_amount + p.fee)::text)::text;
  END IF;
  v_to := ledger_user_account(p.recipient_id, p_currency);
  IF p.fee > 0 THEN
    v_tx := ledger_post('transfer', ARRAY[v_from, v_to, ledger_house_account('fees', p_currency, p_user)],
      ARRAY[-(p_amount + p.fee), p_amount, p.fee], NULL, 'user:' || p_user);
  ELSE
    v_tx := ledger_post('transfer', ARRAY[v_from, v_to], ARRAY[-p_amount, p_amount], NULL, 'user:' || p_user);
  END IF;
  INSERT INTO transfers (sender_id, recipient_id, currency, amount, fee, comment, ledger_transaction_id, idempotency_key)
    VALUES (p_user, p.recipient_id, p_currency, p_amount, p.fee, p_comment, v_tx, p_key)
    RETURNING id, created_at INTO v_id, v_at;
  v_result := jsonb_build_object('transfer', jsonb_build_object(
    'id', v_id::text, 'direction', 'out', 'account_id', p_recipient_account, 'name', p.recipient_name,
    'currency', p_currency, 'amount', p_amount::text, 'fee', p.fee::text, 'comment', p_comment,
    'status', 'completed', 'created_at', iso_time(v_at)));
  UPDATE idempotency_keys SET response = v_result WHERE user_id = p_user AND key = p_key;
  RETURN jsonb_build_object('replayed', false, 'result', v_result, 'wallet', wallet_state(p_user));
END $$;

-- ---- exchanges ------------------------------------------------------------------------------

-- A quote of POST /api/exchange/check: the exact amounts an exchange will post, one use.
CREATE TABLE exchange_quotes (
  id bigserial PRIMARY KEY,
  token_hash bytea NOT NULL UNIQUE,
  user_id bigint NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  -- (no foreign keys to currencies here and in exchanges: see transfers.currency)
  src text NOT NULL,
  dst text NOT NULL,
  pay numeric(38, 0) NOT NULL,
  fee numeric(38, 0) NOT NULL,
  spent numeric(38, 0) NOT NULL,
  remainder numeric(38, 0) NOT NULL,
  receive numeric(38, 0) NOT NULL,
  rate text NOT NULL,
  -- what the user typed, to offer the same quote again when this one lapses
  requested text NOT NULL CHECK (requested IN ('pay', 'receive')),
  requested_amount numeric(38, 0) NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  expires_at timestamptz NOT NULL,
  used_at timestamptz,
  CHECK (pay = fee + spent + remainder AND receive > 0 AND spent > 0 AND fee >= 0 AND remainder >= 0)
);
CREATE INDEX exchange_quotes_expires ON exchange_quotes (expires_at);

-- An /exchange/all request: its legs are exchanges with this batch_id.
CREATE TABLE exchange_batches (
  id bigserial PRIMARY KEY,
  user_id bigint NOT NULL REFERENCES users (id),
  currency text NOT NULL REFERENCES currencies (code),
  status text NOT NULL CHECK (status IN ('completed', 'partial', 'failed', 'empty')),
  legs jsonb NOT NULL DEFAULT '[]',
  idempotency_key text,
  created_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX exchange_batches_user ON exchange_batches (user_id, id DESC);

-- One exchange = two linked legs, each its own balanced ledger transaction, in one database
-- transaction: src (user pays into liquidity and fees) and dst (liquidity pays the user).
-- A failed leg of an /exchange/all batch is kept with status 'failed' and no ledger legs.
CREATE TABLE exchanges (
  id bigserial PRIMARY KEY,
  user_id bigint NOT NULL REFERENCES users (id),
  batch_id bigint REFERENCES exchange_batches (id),
  src text NOT NULL,
  dst text NOT NULL,
  pay numeric(38, 0) NOT NULL,
  fee numeric(38, 0) NOT NULL,
  receive numeric(38, 0) NOT NULL,
  rate text NOT NULL,
  status text NOT NULL CHECK (status IN ('completed', 'failed')),
  error_code text,
  src_transaction_id bigint REFERENCES ledger_transactions (id),
  dst_transaction_id bigint REFERENCES ledger_transactions (id),
  quote_id bigint REFERENCES exchange_quotes (id) ON DELETE SET NULL,
  idempotency_key text,
  created_at timestamptz NOT NULL DEFAULT now(),
  CHECK ((status = 'completed') = (src_transaction_id IS NOT NULL AND dst_transaction_id IS NOT NULL))
);
CREATE INDEX exchanges_user ON exchanges (user_id, created_at DESC, id DESC);
CREATE INDEX exchanges_batch ON exchanges (batch_id) WHERE batch_id IS NOT NULL;

-- Posts one exchange with amounts computed by core (rates/quote.ts):
--   src leg: user −pay; liquidity +spent; fees +(fee + remainder)
--   dst leg: liquidity −receive; user +receive
-- All five accounts are locked first, in id order (house accounts: the user's shard).
CREATE FUNCTION money_exchange(
  p_user bigint, p_src text, p_dst text, p_pay numeric, p_fee numeric, p_spent numeric, p_remainder numeric,
  p_receive numeric, p_rate text, p_batch bigint, p_quote bigint, p_key text
) RETURNS jsonb LANGUAGE plpgsql AS $$
DECLARE
  v_user_src bigint;
  v_user_dst bigint;
  v_liq_src bigint;
  v_liq_dst bigint;
  v_fees bigint;
  v_src_tx bigint;
  v_dst_tx bigint;
  v_id bigint;
  v_at timestamptz;
  v_result jsonb;
BEGIN
  IF p_pay <> p_fee + p_spent + p_remainder OR p_receive <= 0 OR p_spent <= 0 OR p_fee < 0 OR p_remainder < 0 OR p_src = p_dst THEN
    RAISE EXCEPTION 'money_exchange: inconsistent amounts' USING ERRCODE = 'OB902';
  END IF;
  v_user_src := (SELECT id FROM ledger_accounts WHERE user_id = p_user AND currency = p_src);
  IF v_user_src IS NULL THEN
    RAISE EXCEPTION 'insufficient_funds' USING ERRCODE = 'OB000',
      DETAIL = json_build_object('currency', p_src, 'balance', '0', 'needed', p_pay::text)::text;
  END IF;
  v_user_dst := ledger_user_account(p_user, p_dst);
  v_liq_src := ledger_house_account('liquidity', p_src, p_user);
  v_liq_dst := ledger_house_account('liquidity', p_dst, p_user);
  v_fees := ledger_house_account('fees', p_src, p_user);
  PERFORM ledger_lock(ARRAY[v_user_src, v_user_dst, v_liq_src, v_liq_dst, v_fees]);
  v_src_tx := ledger_post('exchange', ARRAY[v_user_src, v_liq_src, v_fees], ARRAY[-p_pay, p_spent, p_fee + p_remainder],
    p_src || '→' || p_dst, 'user:' || p_user);
  v_dst_tx := ledger_post('exchange', ARRAY[v_liq_dst, v_user_dst], ARRAY[-p_receive, p_receive],
    p_src || '→' || p_dst, 'user:' || p_user);
  INSERT INTO exchanges (user_id, batch_id, src, dst, pay, fee, receive, rate, status, src_transaction_id, dst_transaction_id, quote_id, idempotency_key)
    VALUES (p_user, p_batch, p_src, p_dst, p_pay, p_fee + p_remainder, p_receive, p_rate, 'completed', v_src_tx, v_dst_tx, p_quote, p_key)
    RETURNING id, created_at INTO v_id, v_at;
  INSERT INTO wallet_settings (user_id, last_exchange_currency) VALUES (p_user, p_dst)
    ON CONFLICT (user_id) DO UPDATE SET last_exchange_currency = EXCLUDED.last_exchange_currency;
  v_result := jsonb_build_object('id', v_id::text, 'batch_id', p_batch::text, 'src', p_src, 'dst', p_dst, 'amount', p_pay::text,
    'amount_receive', p_receive::text, 'fee', (p_fee + p_remainder)::text, 'rate', p_rate, 'status', 'completed',
    'error_code', NULL, 'created_at', iso_time(v_at));
  -- A single exchange under an idempotency key stores its answer here, not one round trip later.
  IF p_key IS NOT NULL AND p_batch IS NULL THEN
    UPDATE idempotency_keys SET response = jsonb_build_object('exchange', v_result) WHERE user_id = p_user AND key = p_key;
  END IF;
  RETURN v_result;
END $$;
