import type { FastifyPluginAsync } from 'fastify';
import { WEBHOOK_SIGNATURE_HEADER, ZDepositCreateBody, ZWebhookParams } from '@obmen/shared';
import { AppError, notFound } from '../../errors.ts';
import { parseInput } from '../../validation.ts';
import { consumeRateLimit } from '../../rate-limit.ts';
import { currentUser, requireUser } from '../user/current.ts';
import type { TProviders } from './providers.ts';
import { receiveWebhook } from './webhooks.ts';
import { listDepositSystems, openDeposit } from './deposits.ts';

type TPaymentOptions = { providers: TProviders; now: () => Date };

/** A provider's event is small; anything bigger is not one. */
const WEBHOOK_BODY_LIMIT = 64 * 1024;

/**
 * Provider webhooks: POST /api/payments/webhook/{provider}. The signature covers the exact
 * bytes sent, so this scope reads every body as a Buffer, untouched (its own content-type
 * parser; the rest of the app keeps JSON parsing).
 */
const webhookRoutes: FastifyPluginAsync<TPaymentOptions> = async (app, { providers, now }) => {
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', { parseAs: 'buffer', bodyLimit: WEBHOOK_BODY_LIMIT }, (_request, body, done) => done(null, body));

  app.post('/api/payments/webhook/:provider', { bodyLimit: WEBHOOK_BODY_LIMIT }, async (request) => {
    const params = ZWebhookParams.safeParse(request.params);
    const provider = params.success ? providers.get(params.data.provider) : undefined;
    if (!provider) throw notFound();
    const signature = request.headers[WEBHOOK_SIGNATURE_HEADER];
    const { result } = await receiveWebhook(app.db, provider, {
      rawBody: Buffer.isBuffer(request.body) ? request.body : Buffer.alloc(0),
      signature: typeof signature === 'string' ? signature : undefined,
      now: now(),
    });
    if (result === 'bad_signature' || result === 'stale') {
      throw new AppError('webhook_signature_invalid');
    }
    if (result === 'malformed') throw new AppError('validation');
    // Accepted: the provider must not resend it, whatever it did to the payment (the inbox says).
    return { status: 'ok', result };
  });
};

/** Spec §7 "Deposit" (so far: the systems and creating a deposit) and the providers' webhooks. */
const paymentRoutes: FastifyPluginAsync<TPaymentOptions> = async (app, options) => {
  const { providers, now } = options;
  await app.register(webhookRoutes, options);

  app.get('/api/deposit/ps', { preHandler: requireUser }, async () => listDepositSystems(app.db, providers));

  app.post('/api/deposit/integration_json', { preHandler: requireUser }, async (request) => {
    const user = currentUser(request);
    await consumeRateLimit(app.db, 'deposit_create_user', user.id);
    return openDeposit(app.db, providers, user.id, parseInput(ZDepositCreateBody, request.body ?? {}), now());
  });
};

export default paymentRoutes;
