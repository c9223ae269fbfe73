import { randomBytes } from 'node:crypto';
import { createPublicClient, getContractAddress, http, type Address, type PublicClient } from 'viem';
import type { TConfig } from '../../config.ts';
import { DEV_EXCHANGE_MNEMONIC, depositXpub, PUBLIC_MNEMONICS, readMnemonic } from './keys.ts';

/** The development chain's id (anvil's and Hardhat's). */
export const DEV_CHAIN_ID = 31337;

/** The currencies an EVM chain carries here, and how many decimals their on-chain amounts have. */
export const EVM_CURRENCIES = { ETH: 18, USDT: 6, USDC: 6 } as const;
export type TEvmCurrency = keyof typeof EVM_CURRENCIES;
export type TEvmToken = Exclude<TEvmCurrency, 'ETH'>;
export const EVM_TOKENS: readonly TEvmToken[] = ['USDT', 'USDC'];

/**
 * The development chain's outside wallet (account 0 of its mnemonic) deploys the test tokens
 * first thing on a fresh chain, so their addresses are known in advance: its nonce 0 and 1.
 */
export const DEV_DEPLOYER: Address = '0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266';
export const DEV_TOKENS: Readonly<Record<TEvmToken, Address>> = {
  USDT: getContractAddress({ from: DEV_DEPLOYER, nonce: 0n }),
  USDC: getContractAddress({ from: DEV_DEPLOYER, nonce: 1n }),
};

/** What the evm provider works with: the node, the chain it must be, the tokens, the deposit branch's public key. */
export type TEvmChain = {
  url: string;
  chainId: number;
  client: PublicClient;
  tokens: Readonly<Record<TEvmToken, Address>>;
  /** The extended public key of m/44'/60'/0'/0 (addresses are derived from it, never from the mnemonic). */
  xpub: string;
  startBlock: number | undefined;
  blocksPerRun: number;
};

export type TEvmConfig = Pick<
  TConfig,
  | 'NODE_ENV'
  | 'EVM_RPC_URL'
  | 'EVM_CHAIN_ID'
  | 'EVM_TOKEN_USDT'
  | 'EVM_TOKEN_USDC'
  | 'EVM_MNEMONIC'
  | 'EVM_MNEMONIC_FILE'
  | 'EVM_XPUB'
  | 'EVM_START_BLOCK'
  | 'EVM_BLOCKS_PER_RUN'
>;

/** The chain of the configuration, or null when no EVM_RPC_URL is set. */
export function evmChainOf(config: TEvmConfig): TEvmChain | null {
  if (!config.EVM_RPC_URL) return null;
  const production = config.NODE_ENV === 'production';
  const mnemonic = readMnemonic(config);
  if (production && mnemonic && PUBLIC_MNEMONICS.includes(mnemonic)) throw new Error('EVM_MNEMONIC_FILE holds a development mnemonic: not in production');
  const xpub = config.EVM_XPUB ?? depositXpub(mnemonic ?? (production ? fail('no EVM key material') : DEV_EXCHANGE_MNEMONIC));
  const devTokens = config.EVM_CHAIN_ID === DEV_CHAIN_ID ? DEV_TOKENS : undefined;
  const token = (code: TEvmToken, configured: string | undefined): Address =>
    (configured as Address | undefined) ?? devTokens?.[code] ?? fail(`EVM_TOKEN_${code} is needed on chain ${config.EVM_CHAIN_ID}`);
  return {
    url: config.EVM_RPC_URL,
    chainId: config.EVM_CHAIN_ID,
    // One HTTP request for the calls made together (a run's blocks).
    client: createPublicClient({ transport: http(config.EVM_RPC_URL, { batch: { batchSize: 100 }, retryCount: 1, timeout: 10_000 }) }),
    tokens: { USDT: token('USDT', config.EVM_TOKEN_USDT), USDC: token('USDC', config.EVM_TOKEN_USDC) },
    xpub,
    startBlock: config.EVM_START_BLOCK,
    blocksPerRun: config.EVM_BLOCKS_PER_RUN,
  };
}

function fail(message: string): never {
  throw new Error(message);
}

/** A secret only this process knows: the watcher signs its events with it, so nobody outside can post one to the webhook. */
export const processSecret = (): string => randomBytes(32).toString('hex');
