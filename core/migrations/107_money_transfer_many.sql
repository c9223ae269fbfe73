-- Transfers are made in batches (money_transfer_many, core/src/domains/ledger/batch.ts): the
-- one-at-a-time function goes.
DROP FUNCTION IF EXISTS money_transfer(bigint, text, text, integer, text, numeric, text);
