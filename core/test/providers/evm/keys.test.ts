import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../../src/config.ts';
import { loadPaymentProviders } from '../../../src/providers/index.ts';
import type { TEvmAdapter } from '../../../src/providers/evm/index.ts';
import { depositAddress, depositXpub, DEV_CHAIN_MNEMONIC, DEV_EXCHANGE_MNEMONIC } from '../../../src/providers/evm/keys.ts';

const PRODUCTION = {
  NODE_ENV: 'production',
  EVM_RPC_URL: 'https://node.example/rpc',
  EVM_CHAIN_ID: '1',
  EVM_TOKEN_USDT: `0x${'1'.repeat(40)}`,
  EVM_TOKEN_USDC: `0x${'2'.repeat(40)}`,
};
// Any extended public key of the right shape will do for the configuration.
const XPUB = depositXpub(DEV_CHAIN_MNEMONIC);

describe('the EVM key material', () => {
  it('derives the well-known development chain accounts from its mnemonic: BIP-44 m/44’/60’/0’/0/i', () => {
    expect(depositAddress(XPUB, 0)).toEqual({ address: '0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266', path: "m/44'/60'/0'/0/0" });
    expect(depositAddress(XPUB, 1).address).toBe('0x70997970C51812dc3A010C7d01b50e0d17dc79C8');
    // The exchange's development addresses are not the chain's funded accounts.
    expect(depositAddress(depositXpub(DEV_EXCHANGE_MNEMONIC), 0).address).not.toBe(depositAddress(XPUB, 0).address);
  });

  it('production refuses the development mnemonics and needs key material and the tokens with a node', () => {
    for (const mnemonic of [DEV_EXCHANGE_MNEMONIC, DEV_CHAIN_MNEMONIC])
      expect(() => loadConfig({ ...PRODUCTION, EVM_MNEMONIC: mnemonic })).toThrow(/EVM_MNEMONIC: is a development mnemonic/);
    expect(() => loadConfig(PRODUCTION)).toThrow(/needs EVM_MNEMONIC, EVM_MNEMONIC_FILE or EVM_XPUB/);
    const { EVM_TOKEN_USDT: _usdt, ...withoutUsdt } = PRODUCTION;
    expect(() => loadConfig({ ...withoutUsdt, EVM_XPUB: XPUB })).toThrow(/EVM_TOKEN_USDT/);
    expect(loadConfig({ ...PRODUCTION, EVM_XPUB: XPUB })).toMatchObject({ EVM_XPUB: XPUB, EVM_CHAIN_ID: 1 });
    // Outside production the development mnemonic stands in.
    expect(() => loadConfig({ NODE_ENV: 'development', EVM_RPC_URL: 'http://127.0.0.1:8545' })).not.toThrow();
  });

  it('never repeats a mnemonic in its refusal', () => {
    const phrase = 'correct horse battery staple words that are not a real mnemonic at all';
    expect(() => loadConfig({ EVM_MNEMONIC: phrase })).toThrow(/EVM_MNEMONIC: is not a BIP-39 mnemonic/);
    try {
      loadConfig({ EVM_MNEMONIC: phrase });
    } catch (err) {
      expect((err as Error).message).not.toContain('horse');
    }
  });

  it('a key file holding a development mnemonic stops a production core; a good one gives the addresses’ public key', () => {
    const dir = mkdtempSync(join(tmpdir(), 'obmen-evm-key-'));
    try {
      const file = join(dir, 'mnemonic');
      writeFileSync(file, `${DEV_EXCHANGE_MNEMONIC}\n`, { mode: 0o400 });
      const config = loadConfig({ ...PRODUCTION, EVM_MNEMONIC_FILE: file });
      expect(() => loadPaymentProviders(config)).toThrow(/development mnemonic: not in production/);
      const development = loadConfig({ NODE_ENV: 'development', EVM_RPC_URL: 'http://127.0.0.1:8545', EVM_MNEMONIC_FILE: file });
      const evm = loadPaymentProviders(development).get('evm') as TEvmAdapter;
      expect(evm.chain.xpub).toBe(depositXpub(DEV_EXCHANGE_MNEMONIC));
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
