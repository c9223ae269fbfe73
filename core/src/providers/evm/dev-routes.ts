import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { EVM_CURRENCIES } from './chain.ts';
import { devWallet } from './devchain.ts';
import type { TEvmAdapter } from './index.ts';

const ZDevEvmBody = z.discriminatedUnion('action', [
  z.object({
    action: z.literal('send'),
    currency: z.enum(Object.keys(EVM_CURRENCIES) as ['ETH', 'USDT', 'USDC']),
    address: z.string().regex(/^0x[0-9a-fA-F]{40}$/),
    amount: z.string().regex(/^\d+(\.\d+)?$/),
  }),
  z.object({ action: z.literal('mine'), blocks: z.number().int().min(1).max(100).default(1) }),
]);

/**
 * POST /api/dev/evm {action: 'send', currency, address, amount} | {action: 'mine', blocks}: the
 * development chain's outside wallet pays an address (a real signed transaction, mined at once),
 * or blocks are mined; the evm-watcher job sees them as it sees any. Registered inside the dev
 * routes' scope (loopback clients only, hidden), on the development chain only.
 */
const evmDevRoutes: FastifyPluginAsyncZod<{ evm: TEvmAdapter }> = async (app, { evm }) => {
  app.post('/api/dev/evm', { schema: { body: ZDevEvmBody } }, async (request) => {
    const body = request.body;
    if (body.action === 'send') return { tx: await devWallet(evm.chain.url).send(body.currency, body.address as `0x${string}`, body.amount) };
    await evm.chain.client.request({ method: 'anvil_mine' as never, params: [`0x${body.blocks.toString(16)}`] as never });
    return { mined: body.blocks };
  });
};

export default evmDevRoutes;
