import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { WEBHOOK_SIGNATURE_HEADER, ZDepositCreateBody, ZOk, ZPaymentSystemGroup, ZWebhookParams } from '@obmen/shared';
import { AppError, notFoundOf } from '../../errors.ts';
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
const webhookRoutes: FastifyPluginAsyncZod<TPaymentOptions> = async (app, { providers, now }) => {
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', { parseAs: 'buffer', bodyLimit: WEBHOOK_BODY_LIMIT }, (_request, body, done) => done(null, body));

  app.post(
    '/api/payments/webhook/:provider',
    {
      bodyLimit: WEBHOOK_BODY_LIMIT,
      schema: {
        tags: ['Deposit'],
        summary: "A payment provider's signed event (raw body; the x-obmen-signature header)",
        params: z.object({ provider: z.string() }),
        response: { 200: ZOk.extend({ result: z.string() }) },
      },
    },
    async (request) => {
      const params = ZWebhookParams.safeParse(request.params);
      const provider = params.success ? providers.get(params.data.provider) : undefined;
      if (!provider) throw notFoundOf('payment_provider');
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
      return { status: 'ok' as const, result };
    },
  );
};

/** Spec §7 "Deposit" (so far: the systems and creating a deposit) and the providers' webhooks. */
const paymentRoutes: FastifyPluginAsyncZod<TPaymentOptions> = async (app, options) => {
  const { now } = options;
  await app.register(webhookRoutes, options);

  const ZDepositSystems = ZOk.extend({ currencies: z.array(ZPaymentSystemGroup) });
  app.get(
    '/api/deposit/ps',
    {
      onRequest: requireUser,
      schema: { tags: ['Deposit'], summary: 'Deposit systems per currency, with their fees, limits, level and form', response: { 200: ZDepositSystems } },
    },
    async (request) => listDepositSystems(app.db, currentUser(request).id),
  );

  app.post(
    '/api/deposit/integration_json',
    {
      onRequest: requireUser,
      schema: {
        tags: ['Deposit'],
        summary: 'Open a deposit through a payment system',
        body: ZDepositCreateBody,
        response: { 200: ZOk.extend({ payment: z.looseObject({}) }) },
      },
    },
    async (request) => {
      const user = currentUser(request);
      await consumeRateLimit(app.db, 'deposit_create_user', user.id);
      return openDeposit(app.db, user.id, request.body, now());
    },
  );
};

export default paymentRoutes;
