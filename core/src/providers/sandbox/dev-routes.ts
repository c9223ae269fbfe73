import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import type { TProviders } from '../../domains/payments/providers.ts';
import { parseAmount } from '@obmen/shared';
import { currencies } from '../../domains/currencies/service.ts';
import { bankReceived, chainMine, chainSend } from './payments.ts';
import { recordUnaskedPayout } from './payouts.ts';

/** The operator's payments:bank:received, payments:chain:send and payments:chain:mine, for e2e runs beside a live PGlite. */
const ZDevPaymentsBody = z.discriminatedUnion('action', [
  z.object({
    action: z.literal('bank_received'),
    reference: z.string().min(1),
    amount: z.string().optional(),
    currency: z.string().optional(),
    payer: z.string().optional(),
  }),
  z.object({ action: z.literal('chain_send'), address: z.string().min(1), amount: z.string().min(1) }),
  z.object({ action: z.literal('chain_mine'), blocks: z.number().int().min(1).max(100).default(1) }),
  z.object({
    action: z.literal('payout_unasked'),
    provider: z.enum(['sandbox-card', 'sandbox-bank', 'sandbox-chain']),
    reference: z.string().min(1),
    currency: z.string().min(1),
    amount: z.string().min(1),
  }),
]);

/**
 * POST /api/dev/payments {action: 'bank_received', reference, amount?, currency?, payer?} | {action: 'chain_send', address, amount}
 *   | {action: 'chain_mine', blocks} → as payments:bank:received / payments:chain:send / payments:chain:mine;
 *   | {action: 'payout_unasked', provider, reference, currency, amount} → the provider's book holds a payout we never asked for.
 * Registered inside the dev routes' scope (domains/dev/routes.ts: loopback clients only, hidden).
 */
const sandboxDevRoutes: FastifyPluginAsyncZod<{ providers: TProviders }> = async (app, { providers }) => {
  app.post('/api/dev/payments', { schema: { body: ZDevPaymentsBody } }, async (request) => {
    const body = request.body;
    const now = new Date();
    if (body.action === 'bank_received')
      return bankReceived(app.db, providers, {
        reference: body.reference,
        now,
        ...(body.amount ? { amount: body.amount } : {}),
        ...(body.currency ? { currency: body.currency } : {}),
        ...(body.payer ? { payer: body.payer } : {}),
      });
    if (body.action === 'payout_unasked') {
      const precision = (await currencies(app.db)).get(body.currency)?.precision ?? 0;
      const amount = parseAmount(body.amount, precision);
      await recordUnaskedPayout(app.db, { provider: body.provider, reference: body.reference, currency: body.currency, amount, now });
      return { status: 'ok' };
    }
    if (body.action === 'chain_send') return chainSend(app.db, providers, { outputs: [{ address: body.address, amount: body.amount }], now });
    return chainMine(app.db, providers, { blocks: body.blocks, now });
  });
};

export default sandboxDevRoutes;
