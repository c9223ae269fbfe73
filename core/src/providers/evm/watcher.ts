import { formatAmount, type TPaymentWebhookEvent } from '@obmen/shared';
import { getAddress, parseAbiItem, TransactionNotFoundError, type Address, type Hash } from 'viem';
import type { Db, Queryable } from '../../db/index.ts';
import { deliverProviderEvent } from '../deliver.ts';
import { EVM_CURRENCIES, EVM_TOKENS, type TEvmCurrency } from './chain.ts';
import type { TEvmAdapter } from './index.ts';

/*
 * The evm-watcher job: follows the chain's new blocks and reports each transfer to one of our
 * addresses to our webhook, as a chain provider's indexer does. One run:
 *   1. compares the hashes of the blocks it holds with the node's: from the first that changed,
 *      the blocks are forgotten and their transfers un-seen (a deposit reported goes back to 0
 *      confirmations, under a new generation of event ids);
 *   2. reads the blocks after the last it holds (at most EVM_BLOCKS_PER_RUN): Ether sent by a
 *      transaction to our address (its receipt succeeded), and the tokens' Transfer logs to it;
 *      each recorded once by (chain, transaction, output); below the system's minimum as dust;
 *   3. asks the node about each un-seen transfer not found again: gone, its deposit is declined;
 *   4. reports every transfer's confirmations as they grow, until its deposit is settled or has
 *      its required number (the deposit path credits it then, once: the event ids and the
 *      payment's unique (provider, external id) keep two runs at once from crediting twice).
 */

const TRANSFER = parseAbiItem('event Transfer(address indexed from, address indexed to, uint256 value)');

/** Blocks kept beyond the deepest confirmation count, so a reorganisation that deep is still seen. */
const REORG_MARGIN = 8;
/** The depth when no evm system says (mainnet's usual count). */
const DEFAULT_CONFIRMATIONS = 12;

export type TWatchResult = { head: number; scanned: number; recorded: number; unseen: number; dropped: number; reported: number };

type TSighting = { tx: Hash; output: number; currency: TEvmCurrency; to: Address; value: bigint; block: number; blockHash: Hash };

export async function watchEvmChain(db: Db, adapter: TEvmAdapter, now: Date): Promise<TWatchResult> {
  const { chain } = adapter;
  const nodeChain = await chain.client.getChainId();
  if (nodeChain !== chain.chainId) throw new Error(`the node at EVM_RPC_URL is on chain ${nodeChain}, not EVM_CHAIN_ID ${chain.chainId}`);
  const head = Number(await chain.client.getBlockNumber({ cacheTime: 0 }));
  const depth = (await deepestConfirmations(db)) + REORG_MARGIN;
  const result: TWatchResult = { head, scanned: 0, recorded: 0, unseen: 0, dropped: 0, reported: 0 };

  result.unseen = await unseeReorganised(db, adapter, head, now);
  const [top] = await db.query<{ number: string | null }>('SELECT max(number)::text AS number FROM evm_blocks WHERE chain_id = $1', [chain.chainId]);
  const from = top?.number != null ? Number(top.number) + 1 : (chain.startBlock ?? (chain.chainId === 31337 ? 0 : head));
  const to = Math.min(head, from + chain.blocksPerRun - 1);
  if (from <= to) {
    const scan = await readBlocks(adapter, from, to);
    if (scan) {
      result.scanned = to - from + 1;
      result.recorded = await record(db, adapter, scan, now);
      await db.query('DELETE FROM evm_blocks WHERE chain_id = $1 AND number < $2', [chain.chainId, to - depth]);
    }
  }
  result.dropped = await dropVanished(db, adapter, now);
  result.reported = await reportConfirmations(db, adapter, head, now);
  return result;
}

/** The largest confirmation count an evm deposit system asks for. */
async function deepestConfirmations(db: Queryable): Promise<number> {
  const [row] = await db.query<{ deepest: number | null }>(
    `SELECT max(c.confirmations)::int AS deepest FROM payment_system_currencies c
     JOIN payment_systems s ON s.direction = c.direction AND s.id = c.system_id WHERE s.provider = 'evm' AND c.direction = 'deposit'`,
  );
  return row?.deepest ?? DEFAULT_CONFIRMATIONS;
}

/** Step 1: the blocks whose hash the node no longer has (or that it no longer has at all), and their transfers. */
async function unseeReorganised(db: Db, adapter: TEvmAdapter, head: number, now: Date): Promise<number> {
  const { chain } = adapter;
  const held = await db.query<{ number: string; hash: string }>('SELECT number::text AS number, hash FROM evm_blocks WHERE chain_id = $1 ORDER BY number', [
    chain.chainId,
  ]);
  const onNode = await Promise.all(
    held.map(({ number }) => (Number(number) > head ? null : chain.client.getBlock({ blockNumber: BigInt(number) }).then((block) => block.hash))),
  );
  const changed = held.findIndex((block, i) => onNode[i] !== block.hash);
  if (changed < 0) return 0;
  const fork = Number(held[changed]!.number);
  const unseen = await db.transaction(async (tx) => {
    await tx.query('DELETE FROM evm_blocks WHERE chain_id = $1 AND number >= $2', [chain.chainId, fork]);
    await tx.query(`DELETE FROM evm_transfers WHERE chain_id = $1 AND block_number >= $2 AND state = 'dust'`, [chain.chainId, fork]);
    // Reported ones first go back to waiting (step 4 skips them until they are seen again).
    return tx.query<TOpenTransfer & { reported: boolean }>(
      `UPDATE evm_transfers t SET state = 'unseen', block_number = NULL, block_hash = NULL, generation = generation + 1, reported_confirmations = -1, updated_at = $3
       FROM (SELECT id, reported_confirmations AS was FROM evm_transfers WHERE chain_id = $1 AND block_number >= $2 AND state = 'seen' ORDER BY id FOR UPDATE) o
       WHERE t.id = o.id RETURNING t.tx_hash, t.output, t.currency, t.address, t.amount::text AS amount, t.generation, o.was >= 0 AS reported`,
      [chain.chainId, fork, now],
    );
  });
  for (const transfer of unseen) if (transfer.reported) await deliver(db, adapter, transfer, 'payment.pending', 0, now);
  return unseen.length;
}

/** Step 2's reading: the blocks and the tokens' logs of a range, or null when the chain moved under us (the next run reads it again). */
async function readBlocks(
  adapter: TEvmAdapter,
  from: number,
  to: number,
): Promise<{ blocks: Array<{ number: number; hash: Hash }>; sightings: TSighting[] } | null> {
  const { client, tokens } = adapter.chain;
  const numbers = Array.from({ length: to - from + 1 }, (_, i) => from + i);
  const [blocks, logs] = await Promise.all([
    Promise.all(numbers.map((number) => client.getBlock({ blockNumber: BigInt(number), includeTransactions: true }))),
    client.getLogs({ address: EVM_TOKENS.map((code) => tokens[code]), event: TRANSFER, fromBlock: BigInt(from), toBlock: BigInt(to) }),
  ]);
  const hashes = new Map(blocks.map((block) => [Number(block.number), block.hash!]));
  for (let i = 1; i < blocks.length; i++) if (blocks[i]!.parentHash !== blocks[i - 1]!.hash) return null;
  const sightings: TSighting[] = [];
  for (const block of blocks) {
    for (const tx of block.transactions) {
      if (!tx.to || tx.value === 0n) continue;
      sightings.push({ tx: tx.hash, output: 0, currency: 'ETH', to: getAddress(tx.to), value: tx.value, block: Number(block.number), blockHash: block.hash! });
    }
  }
  const byContract = new Map(EVM_TOKENS.map((code) => [tokens[code].toLowerCase(), code]));
  for (const log of logs) {
    if (log.removed || hashes.get(Number(log.blockNumber)) !== log.blockHash) return null;
    const currency = byContract.get(log.address.toLowerCase());
    if (!currency || !log.args.to || !log.args.value) continue;
    sightings.push({
      tx: log.transactionHash,
      output: log.logIndex + 1,
      currency,
      to: getAddress(log.args.to),
      value: log.args.value,
      block: Number(log.blockNumber),
      blockHash: log.blockHash,
    });
  }
  return { blocks: blocks.map((block) => ({ number: Number(block.number), hash: block.hash! })), sightings };
}

/** Step 2's recording: the blocks' hashes and the sightings to our addresses (Ether only from a transaction that succeeded). */
async function record(
  db: Db,
  adapter: TEvmAdapter,
  scan: { blocks: Array<{ number: number; hash: Hash }>; sightings: TSighting[] },
  now: Date,
): Promise<number> {
  const { chain } = adapter;
  const candidates = [...new Set(scan.sightings.map((sighting) => sighting.to))];
  const terms = candidates.length
    ? await db.query<{ address: string; currency: string; min_amount: string | null; precision: number }>(
        `SELECT a.address, a.currency, c.min_amount::text AS min_amount, cur.precision::int AS precision
         FROM evm_addresses e JOIN deposit_addresses a ON a.address = e.address AND a.provider = 'evm'
         JOIN currencies cur ON cur.code = a.currency
         LEFT JOIN payment_system_currencies c ON c.direction = 'deposit' AND c.system_id = a.system_id AND c.currency = a.currency
         WHERE e.chain_id = $1 AND e.address = ANY ($2::text[])`,
        [chain.chainId, candidates],
      )
    : [];
  const ours = new Map(terms.map((row) => [`${row.address}/${row.currency}`, row]));
  const mine = scan.sightings.filter((sighting) => ours.has(`${sighting.to}/${sighting.currency}`));
  const failed = new Set<string>();
  await Promise.all(
    mine
      .filter((sighting) => sighting.currency === 'ETH')
      .map(async ({ tx }) => {
        if ((await chain.client.getTransactionReceipt({ hash: tx })).status !== 'success') failed.add(tx);
      }),
  );
  const rows = mine
    .filter((sighting) => !(sighting.currency === 'ETH' && failed.has(sighting.tx)))
    .map((sighting) => {
      const term = ours.get(`${sighting.to}/${sighting.currency}`)!;
      const amount = toMinor(sighting.value, EVM_CURRENCIES[sighting.currency], term.precision);
      const dust = amount === 0n || (term.min_amount !== null && amount < BigInt(term.min_amount));
      return { ...sighting, amount, state: dust ? 'dust' : 'seen' };
    });
  await db.transaction(async (tx) => {
    await tx.query(
      `INSERT INTO evm_blocks (chain_id, number, hash, seen_at) SELECT $1, n, h, $4 FROM unnest($2::bigint[], $3::text[]) AS b(n, h)
       ON CONFLICT (chain_id, number) DO NOTHING`,
      [chain.chainId, scan.blocks.map((block) => block.number), scan.blocks.map((block) => block.hash), now],
    );
    if (!rows.length) return;
    // Seen again after a reorganisation: back in its new block, as the same transfer.
    await tx.query(
      `INSERT INTO evm_transfers (chain_id, tx_hash, output, currency, address, amount, block_number, block_hash, state, created_at, updated_at)
       SELECT $1, t, o, c, a, m, b, h, s, $10, $10 FROM unnest($2::text[], $3::int[], $4::text[], $5::text[], $6::numeric[], $7::bigint[], $8::text[], $9::text[]) AS r(t, o, c, a, m, b, h, s)
       ON CONFLICT (chain_id, tx_hash, output) DO UPDATE SET block_number = EXCLUDED.block_number, block_hash = EXCLUDED.block_hash, state = 'seen', updated_at = $10
         WHERE evm_transfers.state = 'unseen'`,
      [
        chain.chainId,
        rows.map((row) => row.tx),
        rows.map((row) => row.output),
        rows.map((row) => row.currency),
        rows.map((row) => row.to),
        rows.map((row) => row.amount.toString()),
        rows.map((row) => row.block),
        rows.map((row) => row.blockHash),
        rows.map((row) => row.state),
        now,
      ],
    );
  });
  return rows.length;
}

/** An on-chain amount in the currency's minor units (digits beyond its precision stay on the address). */
function toMinor(value: bigint, decimals: number, precision: number): bigint {
  return precision >= decimals ? value * 10n ** BigInt(precision - decimals) : value / 10n ** BigInt(decimals - precision);
}

type TOpenTransfer = {
  tx_hash: string;
  output: number;
  currency: string;
  address: string;
  amount: string;
  generation: number;
  block_number: string | null;
  reported?: boolean;
};
const OPEN_COLUMNS = 'tx_hash, output, currency, address, amount::text AS amount, generation, block_number::text AS block_number';

/** Step 3: un-seen transfers the node no longer knows at all: their deposits are declined. */
async function dropVanished(db: Db, adapter: TEvmAdapter, now: Date): Promise<number> {
  const { chain } = adapter;
  const unseen = await db.query<TOpenTransfer>(`SELECT ${OPEN_COLUMNS} FROM evm_transfers WHERE chain_id = $1 AND state = 'unseen'`, [chain.chainId]);
  let dropped = 0;
  for (const transfer of unseen) {
    const known = await chain.client.getTransaction({ hash: transfer.tx_hash as Hash }).then(
      () => true,
      (err: unknown) => (err instanceof TransactionNotFoundError ? false : Promise.reject(err)),
    );
    if (known) continue;
    const [gone] = await db.query(
      `UPDATE evm_transfers SET state = 'dropped', updated_at = $4 WHERE chain_id = $1 AND tx_hash = $2 AND output = $3 AND state = 'unseen' RETURNING 1`,
      [chain.chainId, transfer.tx_hash, transfer.output, now],
    );
    if (!gone) continue;
    dropped++;
    // A transfer never reported has no deposit to decline.
    if (await paymentOf(db, transfer)) await deliver(db, adapter, transfer, 'payment.declined', 0, now);
  }
  return dropped;
}

/** Step 4: each seen transfer's confirmations, when they grew; done once its deposit is settled or has its required number. */
async function reportConfirmations(db: Db, adapter: TEvmAdapter, head: number, now: Date): Promise<number> {
  const { chain } = adapter;
  const seen = await db.query<TOpenTransfer & { reported_confirmations: number }>(
    `SELECT ${OPEN_COLUMNS}, reported_confirmations FROM evm_transfers WHERE chain_id = $1 AND state = 'seen' AND block_number <= $2 ORDER BY block_number, tx_hash, output`,
    [chain.chainId, head],
  );
  let reported = 0;
  for (const transfer of seen) {
    const confirmations = head - Number(transfer.block_number) + 1;
    if (confirmations <= Number(transfer.reported_confirmations)) continue;
    await deliver(db, adapter, transfer, 'payment.pending', confirmations, now);
    reported++;
    const payment = await paymentOf(db, transfer);
    await db.query(
      `UPDATE evm_transfers SET reported_confirmations = greatest(reported_confirmations, $5), state = CASE WHEN $6 THEN 'done' ELSE state END, updated_at = $7
       WHERE chain_id = $1 AND tx_hash = $2 AND output = $3 AND generation = $4 AND state = 'seen'`,
      [chain.chainId, transfer.tx_hash, transfer.output, transfer.generation, confirmations, payment?.settled ?? false, now],
    );
  }
  return reported;
}

/** The deposit a transfer opened (the chain event's external id), and whether it needs no more reports. */
async function paymentOf(db: Queryable, transfer: TOpenTransfer): Promise<{ settled: boolean } | undefined> {
  const [payment] = await db.query<{ settled: boolean }>(
    `SELECT (state NOT IN ('created', 'pending') OR confirmations >= required_confirmations) AS settled FROM payments WHERE provider = 'evm' AND external_id = $1`,
    [`${transfer.tx_hash}:${transfer.output}`],
  );
  return payment;
}

/** One transfer's news to our webhook; the event id names its generation and count, so each is applied once. */
async function deliver(db: Db, adapter: TEvmAdapter, transfer: TOpenTransfer, type: TPaymentWebhookEvent['type'], confirmations: number, now: Date) {
  const [currency] = await db.query<{ precision: number }>('SELECT precision::int AS precision FROM currencies WHERE code = $1', [transfer.currency]);
  const suffix = type === 'payment.declined' ? 'dropped' : `c${confirmations}`;
  return deliverProviderEvent(
    db,
    adapter,
    {
      id: `evm_${adapter.chain.chainId}_${transfer.tx_hash}_${transfer.output}_g${transfer.generation}_${suffix}`,
      type,
      payment_id: transfer.tx_hash,
      output: transfer.output,
      amount: formatAmount(transfer.amount, currency!.precision),
      currency: transfer.currency,
      address: transfer.address,
      confirmations,
    },
    now,
  );
}
