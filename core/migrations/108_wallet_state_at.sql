-- wallet_state gains optional balances to show for some accounts (core/sql/functions/wallet_state.sql);
-- CREATE OR REPLACE cannot change a function's arguments.
DROP FUNCTION IF EXISTS wallet_state(bigint);
