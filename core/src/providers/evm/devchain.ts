import { spawn, type ChildProcess } from 'node:child_process';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { createPublicClient, createWalletClient, http, parseUnits, type Address, type Hash } from 'viem';
import { mnemonicToAccount } from 'viem/accounts';
import { DEV_CHAIN_ID, DEV_TOKENS, EVM_CURRENCIES, EVM_TOKENS, type TEvmToken } from './chain.ts';
import { DEV_CHAIN_MNEMONIC } from './keys.ts';
import { TEST_TOKEN_ABI, TEST_TOKEN_BYTECODE } from './test-token.ts';

/*
 * The development chain: Foundry's anvil from the npm registry (@foundry-rs/anvil, its binary
 * in the platform's optional package), run by the start, dev and test scripts when EVM_RPC_URL
 * is unset, on its own port, with anvil's well-known mnemonic as the outside world; at start the
 * test tokens USDT and USDC (6 decimals) are deployed by its account 0, at addresses known in
 * advance (chain.ts DEV_TOKENS). A block is mined per transaction (and on anvil_mine).
 */

/** The anvil binary of this platform (the npm package's own launcher is a node script around it). */
export function anvilBinary(): string {
  const require = createRequire(import.meta.url);
  const wrapper = createRequire(require.resolve('@foundry-rs/anvil/package.json'));
  const arch = process.arch === 'x64' ? 'amd64' : process.arch;
  return join(dirname(wrapper.resolve(`@foundry-rs/anvil-${process.platform}-${arch}/package.json`)), 'bin', 'anvil');
}

/** anvil's arguments: loopback, the port, the fixed mnemonic, the chain id; `state` keeps the chain in a file across restarts. */
export function anvilArgs(port: number, state?: string): string[] {
  return [
    '--host',
    '127.0.0.1',
    '--port',
    String(port),
    '--mnemonic',
    DEV_CHAIN_MNEMONIC,
    '--chain-id',
    String(DEV_CHAIN_ID),
    '--silent',
    ...(state ? ['--state', state] : []),
  ];
}

/** Waits until the node answers (anvil starts in well under a second). */
export async function waitForNode(url: string, timeoutMs = 30_000): Promise<void> {
  const client = createPublicClient({ transport: http(url, { retryCount: 0 }) });
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      await client.getChainId();
      return;
    } catch (err) {
      if (Date.now() > deadline) throw new Error(`the development chain at ${url} did not answer: ${(err as Error).message}`);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }
}

/** One send at a time in this process: two at once would take the same nonce from the node. */
let sends: Promise<unknown> = Promise.resolve();

/** The outside wallet of the development chain (its account `index`), to send Ether and tokens with. */
export function devWallet(url: string, index = 0) {
  const account = mnemonicToAccount(DEV_CHAIN_MNEMONIC, { addressIndex: index });
  const chain = {
    id: DEV_CHAIN_ID,
    name: 'development',
    nativeCurrency: { name: 'Ether', symbol: 'ETH', decimals: 18 },
    rpcUrls: { default: { http: [url] } },
  };
  const wallet = createWalletClient({ account, chain, transport: http(url) });
  const client = createPublicClient({ chain, transport: http(url) });
  return {
    address: account.address,
    /** Sends `amount` (major units) of ETH or a token to `to`; answers the transaction hash once mined. */
    send(currency: 'ETH' | TEvmToken, to: Address, amount: string): Promise<Hash> {
      const value = parseUnits(amount, EVM_CURRENCIES[currency]);
      const sending = sends.then(async () => {
        const hash =
          currency === 'ETH'
            ? await wallet.sendTransaction({ to, value })
            : await wallet.writeContract({ address: DEV_TOKENS[currency], abi: TEST_TOKEN_ABI, functionName: 'transfer', args: [to, value] });
        await client.waitForTransactionReceipt({ hash, pollingInterval: 50 });
        return hash;
      });
      sends = sending.catch(() => {});
      return sending;
    },
  };
}

/**
 * Deploys the test tokens on a fresh development chain (nothing to do when they are there, from a
 * kept state): USDT then USDC by account 0, whose first two transactions they must be.
 */
export async function deployDevTokens(url: string): Promise<Record<TEvmToken, Address>> {
  const { address } = devWallet(url);
  const account = mnemonicToAccount(DEV_CHAIN_MNEMONIC);
  const chain = {
    id: DEV_CHAIN_ID,
    name: 'development',
    nativeCurrency: { name: 'Ether', symbol: 'ETH', decimals: 18 },
    rpcUrls: { default: { http: [url] } },
  };
  const client = createPublicClient({ chain, transport: http(url) });
  const wallet = createWalletClient({ account, chain, transport: http(url) });
  for (const [nonce, code] of EVM_TOKENS.entries()) {
    if (await client.getCode({ address: DEV_TOKENS[code] })) continue;
    if ((await client.getTransactionCount({ address })) !== nonce)
      throw new Error(`the development chain's account ${address} has been used: ${code} cannot be deployed at ${DEV_TOKENS[code]}`);
    const hash = await wallet.deployContract({
      abi: TEST_TOKEN_ABI,
      bytecode: TEST_TOKEN_BYTECODE,
      args: [code === 'USDT' ? 'Tether USD (test)' : 'USD Coin (test)', code, 6, parseUnits('1000000000000', 6)],
    });
    await client.waitForTransactionReceipt({ hash, pollingInterval: 50 });
  }
  return { ...DEV_TOKENS };
}

/** A development chain of its own on `port` (tests): anvil started, the tokens deployed. Stop it with `stop()`. */
export async function startDevChain(port: number): Promise<{ url: string; process: ChildProcess; stop: () => Promise<void> }> {
  const child = spawn(anvilBinary(), anvilArgs(port), { stdio: 'ignore' });
  const url = `http://127.0.0.1:${port}`;
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  try {
    await waitForNode(url);
    await deployDevTokens(url);
  } catch (err) {
    child.kill('SIGKILL');
    throw err;
  }
  return {
    url,
    process: child,
    stop: async () => {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
      await exited;
    },
  };
}
