import type { Queryable } from '../../db/index.ts';
import { EVM_CURRENCIES, type TEvmChain } from './chain.ts';
import { depositAddress } from './keys.ts';

/**
 * The user's deposit address on the chain, for any of its currencies: derived once from the
 * extended public key by the next index (the path is recorded beside it), then the same for ETH,
 * USDT and USDC. Each of those currencies gets its deposit_addresses row at once, so a token sent
 * to the address an ETH page showed is credited all the same.
 */
export async function evmDepositAddress(
  db: Queryable,
  chain: Pick<TEvmChain, 'chainId' | 'xpub'>,
  input: { userId: string; currency: string; systemId: string; now: Date },
): Promise<string> {
  if (!(input.currency in EVM_CURRENCIES)) throw new Error(`${input.currency} is not carried by the EVM chain`);
  let address = await findAddress(db, chain.chainId, input.userId);
  if (!address) {
    const [next] = await db.query<{ index: string }>(`SELECT nextval('evm_address_index')::text AS index`);
    const derived = depositAddress(chain.xpub, Number(next!.index));
    // Two first requests at once: one row wins, the other's index is a harmless gap.
    await db.query(
      `INSERT INTO evm_addresses (chain_id, user_id, address_index, path, address, created_at) VALUES ($1, $2, $3, $4, $5, $6)
       ON CONFLICT (chain_id, user_id) DO NOTHING`,
      [chain.chainId, input.userId, Number(next!.index), derived.path, derived.address, input.now],
    );
    address = (await findAddress(db, chain.chainId, input.userId))!;
  }
  await db.query(
    `INSERT INTO deposit_addresses (user_id, currency, provider, system_id, address, created_at)
     SELECT $1, code, 'evm', $2, $3, $4 FROM currencies WHERE code = ANY ($5::text[]) ORDER BY code
     ON CONFLICT DO NOTHING`,
    [input.userId, input.systemId, address, input.now, Object.keys(EVM_CURRENCIES)],
  );
  return address;
}

async function findAddress(db: Queryable, chainId: number, userId: string): Promise<string | undefined> {
  const [row] = await db.query<{ address: string }>('SELECT address FROM evm_addresses WHERE chain_id = $1 AND user_id = $2', [chainId, userId]);
  return row?.address;
}
