import { createServer } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { getAddress, type Address } from 'viem';
import type { TDepositPayment } from '@obmen/shared';
import { build, ENGINES, testConfig } from '../../helpers.ts';
import { call } from '../../auth-helpers.ts';
import { createFixtureUser, type TFixtureUser } from '../../fixtures.ts';
import { checkLedger } from '../../../src/domains/ledger/invariants.ts';
import { loadPaymentProviders } from '../../../src/providers/index.ts';
import { devWallet, startDevChain } from '../../../src/providers/evm/devchain.ts';
import type { TEvmAdapter } from '../../../src/providers/evm/index.ts';
import { depositAddress, depositXpub, DEV_EXCHANGE_MNEMONIC } from '../../../src/providers/evm/keys.ts';
import { watchEvmChain } from '../../../src/providers/evm/watcher.ts';

const NOW = new Date('2026-11-27T10:00:00Z');

/** A loopback port nothing listens on now (anvil binds it next). */
function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

// Each engine's suite runs its own anvil: snapshots and reverts here touch no other file's chain.
describe.each(ENGINES)('the EVM chain on a real node (%s)', (engine) => {
  let chain: Awaited<ReturnType<typeof startDevChain>>;
  let ctx: Awaited<ReturnType<typeof build>>;
  let adapter: TEvmAdapter;
  let outside: ReturnType<typeof devWallet>;
  let user: TFixtureUser;
  let clock = NOW;

  const rpc = async <T>(method: string, params: unknown[] = []): Promise<T> => {
    const res = await fetch(chain.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }),
    });
    const body = (await res.json()) as { result: T; error?: { message: string } };
    if (body.error) throw new Error(body.error.message);
    return body.result;
  };
  const mine = (blocks: number) => rpc('anvil_mine', [`0x${blocks.toString(16)}`]);
  const watch = () => {
    clock = new Date(clock.getTime() + 1_000);
    return watchEvmChain(ctx.db, adapter, clock);
  };
  const balance = async (currency: string, who = user) => {
    const [row] = await ctx.db.query<{ balance: string }>(
      "SELECT coalesce((SELECT balance::text FROM ledger_accounts WHERE user_id = $1 AND currency = $2), '0') AS balance",
      [who.id, currency],
    );
    return BigInt(row!.balance);
  };
  const open = async (currency: string, who = user) => {
    const res = await call(ctx.app, '/api/deposit/integration_json', { token: who.token, payload: { ps: 'ethereum', currency }, locale: 'en' });
    expect(res.statusCode, res.body).toBe(200);
    return (res.json() as { payment: TDepositPayment | null; address: { address: string; qr_svg: string; confirmations: number; min: string } }).address;
  };
  const deposits = (who = user) =>
    ctx.db.query<{ currency: string; amount: string; state: string; confirmations: number; external_id: string }>(
      `SELECT currency, amount::text AS amount, state, confirmations, external_id FROM payments WHERE user_id = $1 AND provider = 'evm' ORDER BY id`,
      [who.id],
    );

  beforeAll(async () => {
    chain = await startDevChain(await freePort());
    const overrides = { EVM_RPC_URL: chain.url };
    ctx = await build(engine, overrides, { now: () => clock });
    adapter = loadPaymentProviders(testConfig(overrides)).get('evm') as TEvmAdapter;
    outside = devWallet(chain.url);
    user = await createFixtureUser(ctx.db);
    // These deposits add up beyond a level-0 user's deposit limits (deposit.test.ts tests those).
    await ctx.db.query(`UPDATE verification_limits SET per_24h = 100000000000000000000000, per_30d = 100000000000000000000000 WHERE operation = 'deposit'`);
  });
  afterAll(async () => {
    await ctx?.close();
    await chain?.stop();
  });

  it('gives each user one address for ETH, USDT and USDC, derived from the public key by index with its path recorded', async () => {
    const eth = await open('ETH');
    expect(await open('USDT')).toEqual({ ...eth, currency: 'USDT', min: '1.000000' });
    expect((await open('USDC')).address).toBe(eth.address);
    expect(eth).toMatchObject({ ps: 'ethereum', confirmations: 2, min: '0.001000000000000000' });
    expect(eth.qr_svg).toMatch(/^<svg/);
    const [row] = await ctx.db.query<{ address_index: number; path: string; address: string }>(
      'SELECT address_index, path, address FROM evm_addresses WHERE user_id = $1',
      [user.id],
    );
    expect(row!.path).toBe(`m/44'/60'/0'/0/${row!.address_index}`);
    expect(depositAddress(depositXpub(DEV_EXCHANGE_MNEMONIC), row!.address_index).address).toBe(eth.address);
    const other = await createFixtureUser(ctx.db);
    expect((await open('ETH', other)).address).not.toBe(eth.address);
    // Nobody outside can post an event as the chain: its secret lives in this process only.
    const forged = await ctx.app.inject({ method: 'POST', url: '/api/payments/webhook/evm', headers: { 'x-signature': 't=1,v1=00' }, payload: '{}' });
    expect(forged.statusCode).toBeGreaterThanOrEqual(400);
  });

  it('credits an ETH and a USDT deposit once their confirmations reach the system’s number, from the clearing account', async () => {
    const { address } = await open('ETH');
    await watch();
    const ethTx = await outside.send('ETH', address as Address, '0.25');
    await watch();
    expect(await deposits()).toEqual([{ currency: 'ETH', amount: '250000000000000000', state: 'pending', confirmations: 1, external_id: `${ethTx}:0` }]);
    expect(await balance('ETH')).toBe(0n);
    // The token transfer's block is the Ether's second confirmation.
    const usdtTx = await outside.send('USDT', address as Address, '125.5');
    await watch();
    expect(await deposits()).toEqual([
      { currency: 'ETH', amount: '250000000000000000', state: 'credited', confirmations: 2, external_id: `${ethTx}:0` },
      { currency: 'USDT', amount: '125500000', state: 'pending', confirmations: 1, external_id: expect.stringMatching(new RegExp(`^${usdtTx}:[1-9]\\d*$`)) },
    ]);
    expect(await balance('USDT')).toBe(0n);
    await mine(1);
    await watch();
    expect((await deposits()).map((row) => [row.currency, row.state])).toEqual([
      ['ETH', 'credited'],
      ['USDT', 'credited'],
    ]);
    expect(await balance('ETH')).toBe(250000000000000000n);
    expect(await balance('USDT')).toBe(125500000n);
    // More blocks report nothing new and credit nothing twice.
    await mine(3);
    expect((await watch()).reported).toBe(0);
    expect(await balance('USDT')).toBe(125500000n);
    const [clearing] = await ctx.db.query<{ balance: string }>(
      `SELECT balance::text AS balance FROM ledger_accounts WHERE kind = 'clearing' AND name = 'evm' AND currency = 'USDT'`,
    );
    expect(BigInt(clearing!.balance)).toBe(-125500000n);
    expect((await checkLedger(ctx.db)).violations).toEqual([]);
  });

  it('records a transfer below the minimum as dust and credits nothing', async () => {
    const { address } = await open('ETH');
    const tx = await outside.send('ETH', address as Address, '0.0001');
    await mine(2);
    await watch();
    const [dust] = await ctx.db.query<{ state: string; amount: string }>(`SELECT state, amount::text AS amount FROM evm_transfers WHERE tx_hash = $1`, [tx]);
    expect(dust).toEqual({ state: 'dust', amount: '100000000000000' });
    expect((await deposits()).filter((row) => row.external_id.startsWith(tx))).toEqual([]);
  });

  it('un-sees a pending deposit whose block a reorganisation removed: nothing is credited for the vanished transaction', async () => {
    const { address } = await open('USDC');
    await watch();
    const snapshot = await rpc<string>('evm_snapshot');
    const tx = await outside.send('USDC', address as Address, '40');
    await watch();
    expect((await deposits()).find((row) => row.external_id.startsWith(tx))).toMatchObject({ state: 'pending', confirmations: 1 });
    // The chain goes back before the transfer and grows longer without it.
    await rpc('evm_revert', [snapshot]);
    await mine(4);
    const result = await watch();
    expect(result.unseen).toBe(1);
    expect(result.dropped).toBe(1);
    expect((await deposits()).find((row) => row.external_id.startsWith(tx))).toMatchObject({ state: 'declined' });
    await mine(3);
    await watch();
    expect(await balance('USDC')).toBe(0n);
    expect((await checkLedger(ctx.db)).violations).toEqual([]);
  });

  it('a reorganisation that takes a transfer’s block away sends its deposit back to waiting; mined again, it is credited once', async () => {
    const { address } = await open('USDT');
    await watch();
    const snapshot = await rpc<string>('evm_snapshot');
    const tx = await outside.send('USDT', address as Address, '15');
    const raw = await rpc<string>('eth_getRawTransactionByHash', [tx]);
    await watch();
    const pending = async () => (await deposits()).filter((row) => row.external_id.startsWith(tx));
    expect(await pending()).toEqual([expect.objectContaining({ state: 'pending', confirmations: 1 })]);
    // The other branch: the block is gone and the same signed transaction waits in the node's pool.
    await rpc('evm_revert', [snapshot]);
    await rpc('evm_setAutomine', [false]);
    try {
      expect(await rpc<string>('eth_sendRawTransaction', [raw])).toBe(tx);
      expect(await watch()).toMatchObject({ unseen: 1, dropped: 0 });
      expect(await pending()).toEqual([expect.objectContaining({ state: 'pending', confirmations: 0 })]);
      // Mined again, in a block of another hash: seen anew, counted from there.
      await mine(1);
      await watch();
      expect(await pending()).toEqual([expect.objectContaining({ state: 'pending', confirmations: 1 })]);
    } finally {
      await rpc('evm_setAutomine', [true]);
    }
    const events = await ctx.db.query<{ event_id: string }>(
      `SELECT event_id FROM payment_events WHERE provider = 'evm' AND event_id LIKE $1 ORDER BY event_id`,
      [`%${tx}%`],
    );
    expect(events.map((row) => row.event_id.replace(/^.*_(g\d+_c\d+)$/, '$1'))).toEqual(['g0_c1', 'g1_c0', 'g1_c1']);
    const before = await balance('USDT');
    await mine(1);
    await watch();
    expect(await pending()).toEqual([expect.objectContaining({ state: 'credited', confirmations: 2 })]);
    expect((await balance('USDT')) - before).toBe(15000000n);
    expect((await checkLedger(ctx.db)).violations).toEqual([]);
  });

  it('the same deposit seen by two watcher runs at once is credited once', async () => {
    const { address } = await open('USDC');
    await watch();
    const before = await balance('USDC');
    const tx = await outside.send('USDC', address as Address, '7');
    // Already at its confirmations when first seen: both runs would credit it.
    await mine(1);
    const second = loadPaymentProviders(testConfig({ EVM_RPC_URL: chain.url })).get('evm') as TEvmAdapter;
    clock = new Date(clock.getTime() + 1_000);
    await Promise.all([watchEvmChain(ctx.db, adapter, clock), watchEvmChain(ctx.db, second, clock)]);
    expect((await deposits()).filter((row) => row.external_id.startsWith(tx))).toEqual([
      expect.objectContaining({ currency: 'USDC', amount: '7000000', state: 'credited' }),
    ]);
    expect((await balance('USDC')) - before).toBe(7000000n);
    expect((await checkLedger(ctx.db)).violations).toEqual([]);
  });

  it('runs as the evm-watcher job on the injected clock', async () => {
    const { address } = await open('ETH');
    const tx = await outside.send('ETH', getAddress(address), '0.01');
    await mine(1);
    clock = new Date(clock.getTime() + 60_000);
    expect(await ctx.app.jobs.runJob('evm-watcher')).toMatchObject({ ran: true, error: null });
    expect((await deposits()).find((row) => row.external_id.startsWith(tx))).toMatchObject({ state: 'credited' });
  });
});
