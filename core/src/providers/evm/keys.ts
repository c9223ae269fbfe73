import { readFileSync } from 'node:fs';
import { secp256k1 } from '@noble/curves/secp256k1.js';
import { HDKey } from '@scure/bip32';
import { mnemonicToSeedSync, validateMnemonic } from '@scure/bip39';
import { wordlist } from '@scure/bip39/wordlists/english.js';
import { bytesToHex, getAddress, keccak256, type Address } from 'viem';

/*
 * The exchange's keys on an EVM chain. Deposit addresses are derived from the extended PUBLIC
 * key of the BIP-44 branch m/44'/60'/0'/0 by index, so handing out addresses needs no private
 * key; the mnemonic (or a key file holding it) is only for the hot wallet's signatures.
 */

/** The branch every deposit address is a child of; address i is `${DEPOSIT_BRANCH}/i`. */
export const DEPOSIT_BRANCH = "m/44'/60'/0'/0";

/**
 * The exchange's development mnemonic, outside production only (the configuration refuses it in
 * production). Not anvil's: the development chain funds its own mnemonic's accounts, which would
 * make our first deposit addresses rich from the start.
 */
export const DEV_EXCHANGE_MNEMONIC = 'daring cream cost post hurt economy remember lucky harbor repair toe stereo';

/** The development chain's own accounts (anvil's well-known mnemonic): the outside world that pays us in tests and dev. */
export const DEV_CHAIN_MNEMONIC = 'test test test test test test test test test test test junk';

/** Mnemonics everybody knows: a production core refuses them. */
export const PUBLIC_MNEMONICS: readonly string[] = [DEV_EXCHANGE_MNEMONIC, DEV_CHAIN_MNEMONIC];

export const isValidMnemonic = (mnemonic: string): boolean => validateMnemonic(mnemonic.trim(), wordlist);

/** The mnemonic from the configuration: given as is, or read from its file (trimmed). */
export function readMnemonic(config: { EVM_MNEMONIC?: string; EVM_MNEMONIC_FILE?: string }): string | undefined {
  if (config.EVM_MNEMONIC) return config.EVM_MNEMONIC.trim();
  if (config.EVM_MNEMONIC_FILE) return readFileSync(config.EVM_MNEMONIC_FILE, 'utf8').trim();
  return undefined;
}

/** The extended public key of the deposit branch of a mnemonic (what the core derives addresses from). */
export function depositXpub(mnemonic: string): string {
  return HDKey.fromMasterSeed(mnemonicToSeedSync(mnemonic)).derive(DEPOSIT_BRANCH).publicExtendedKey;
}

/** An Ethereum address of a compressed secp256k1 public key. */
function addressOfPublicKey(publicKey: Uint8Array): Address {
  const uncompressed = secp256k1.Point.fromBytes(publicKey).toBytes(false);
  return getAddress(`0x${keccak256(bytesToHex(uncompressed.slice(1))).slice(-40)}`);
}

/** Deposit address `index` of the branch whose extended public key is `xpub`, and its path. */
export function depositAddress(xpub: string, index: number): { address: Address; path: string } {
  const child = HDKey.fromExtendedKey(xpub).deriveChild(index);
  if (!child.publicKey) throw new Error('the extended key has no public key');
  return { address: addressOfPublicKey(child.publicKey), path: `${DEPOSIT_BRANCH}/${index}` };
}
