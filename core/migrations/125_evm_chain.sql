-- Real EVM rails: deposit addresses of our own derived by index from the exchange's extended
-- public key, the blocks the watcher has read (their hashes catch a reorganisation), and every
-- incoming transfer it saw, once per (chain, transaction, log entry).

-- One address serves ETH and the chain's tokens: unique per currency, no longer across them.
ALTER TABLE deposit_addresses DROP CONSTRAINT deposit_addresses_address_key;
CREATE UNIQUE INDEX deposit_addresses_address ON deposit_addresses (address, currency);

-- The index of the next address to derive (gaps from rolled-back transactions cost nothing).
CREATE SEQUENCE evm_address_index MINVALUE 0 START 0;

-- One address per user and chain; path = m/44'/60'/0'/0/<address_index>.
CREATE TABLE evm_addresses (
  chain_id bigint NOT NULL,
  user_id bigint NOT NULL REFERENCES users (id),
  address_index integer NOT NULL CHECK (address_index >= 0),
  path text NOT NULL,
  -- EIP-55 checksummed, as shown and as the watcher compares it.
  address text NOT NULL,
  created_at timestamptz NOT NULL,
  PRIMARY KEY (chain_id, user_id),
  UNIQUE (chain_id, address_index),
  UNIQUE (chain_id, address)
);

-- The blocks read, by number, with the hash the node gave (the recent ones are compared again at
-- every run; older ones are deleted).
CREATE TABLE evm_blocks (
  chain_id bigint NOT NULL,
  number bigint NOT NULL CHECK (number >= 0),
  hash text NOT NULL,
  seen_at timestamptz NOT NULL,
  PRIMARY KEY (chain_id, number)
);

-- Each transfer to one of our addresses. output 0: the transaction's own value (ETH); n > 0: its
-- log entry n - 1 (a token's Transfer). state: seen (in a block we hold), dust (below the
-- system's minimum: recorded, never credited), unseen (its block was reorganised away; waiting
-- to be included again), dropped (the node no longer knows the transaction), done (reported
-- with the required confirmations). generation counts the times it was un-seen: each sighting
-- reports under new event ids.
CREATE TABLE evm_transfers (
  id bigserial PRIMARY KEY,
  chain_id bigint NOT NULL,
  tx_hash text NOT NULL,
  output integer NOT NULL CHECK (output >= 0),
  currency text NOT NULL REFERENCES currencies (code),
  address text NOT NULL,
  -- In the currency's minor units.
  amount numeric(78, 0) NOT NULL CHECK (amount >= 0),
  block_number bigint,
  block_hash text,
  state text NOT NULL CHECK (state IN ('seen', 'dust', 'unseen', 'dropped', 'done')),
  generation integer NOT NULL DEFAULT 0,
  reported_confirmations integer NOT NULL DEFAULT -1,
  created_at timestamptz NOT NULL,
  updated_at timestamptz NOT NULL,
  UNIQUE (chain_id, tx_hash, output)
);
CREATE INDEX evm_transfers_open ON evm_transfers (chain_id, state) WHERE state IN ('seen', 'unseen');
CREATE INDEX evm_transfers_block ON evm_transfers (chain_id, block_number);
