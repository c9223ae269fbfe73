import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { WEBHOOK_SIGNATURE_HEADER, ZOk, ZPaymentFormCheckParams, ZPurchaseParams, ZWebhookParams } from '@obmen/shared';
import { AppError, notFoundOf, routeNotFound } from '../../errors.ts';
import { consumeRateLimit } from '../../rate-limit.ts';
import { currentUser, requireUser } from '../user/current.ts';
import type { TProviders } from './providers.ts';
import { webhookIntake } from './webhooks.ts';
import { checkPayment, checkPaymentForm } from './check.ts';
import { listDepositSystems, openDeposit } from './deposits.ts';
import { listPurchaseSystems, openPurchase } from './purchase.ts';
import { DEPOSIT_CSV_COLUMNS, paymentCsvRow, paymentHistory, PURCHASE_CSV_COLUMNS } from './payment-history.ts';
import { sendCsv } from '../history/service.ts';
import { CALLS } from '@obmen/shared/calls';
import { csvSchemaOf, schemaOf } from '../../lib/call-schema.ts';

type TPaymentOptions = { providers: TProviders; now: () => Date };

/** A provider's event is small; anything bigger is not one. */
const WEBHOOK_BODY_LIMIT = 64 * 1024;

/**
 * Provider webhooks: POST /api/payments/webhook/{provider}. The signature covers the exact
 * bytes sent, so this scope reads every body as a Buffer, untouched (its own content-type
 * parser; the rest of the app keeps JSON parsing).
 */
const UNCREDITED: ReadonlySet<string> = new Set(['unknown_payment', 'amount_mismatch', 'currency_mismatch']);

const webhookRoutes: FastifyPluginAsyncZod<TPaymentOptions> = async (app, { providers, now }) => {
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', { parseAs: 'buffer', bodyLimit: WEBHOOK_BODY_LIMIT }, (_request, body, done) => done(null, body));
  const receive = webhookIntake(app.db, now);

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
      const { result } = await receive(provider, {
        rawBody: Buffer.isBuffer(request.body) ? request.body : Buffer.alloc(0),
        signature: typeof signature === 'string' ? signature : undefined,
        now: now(),
        address: request.ip,
      });
      if (result === 'bad_signature' || result === 'stale') {
        throw new AppError('webhook_signature_invalid');
      }
      if (result === 'malformed') throw new AppError('validation');
      // Money the provider says it moved that we could not credit (an output to an address we do
      // not know, another currency or amount): accepted, so the provider stops resending, and
      // logged as an error for an operator to act on (payments:webhooks result=<result>).
      if (UNCREDITED.has(result)) request.log.error({ provider: provider.id, result }, 'payment event accepted but not credited: needs an operator');
      // Accepted: the provider must not resend it, whatever it did to the payment (the inbox says).
      return { status: 'ok' as const, result };
    },
  );
};

/** Spec §7 "Deposit" and "Purchase", and the providers' webhooks (their own pages: core/src/providers/). */
const paymentRoutes: FastifyPluginAsyncZod<TPaymentOptions> = async (app, options) => {
  const { now } = options;
  await app.register(webhookRoutes, options);

  app.get(
    '/api/deposit/ps',
    {
      onRequest: requireUser,
      schema: {
        tags: ['Deposit'],
        summary: 'Deposit systems per currency, with their fees, limits, level and form',
        ...schemaOf(CALLS['GET /api/deposit/ps']),
      },
    },
    async (request) => listDepositSystems(app.db, currentUser(request).id, request.locale),
  );

  app.post(
    '/api/deposit/integration_json',
    {
      onRequest: requireUser,
      schema: {
        tags: ['Deposit'],
        summary: 'Open a deposit: the hosted card page, the bank details and reference, or the chain address and its QR code',
        ...schemaOf(CALLS['POST /api/deposit/integration_json']),
      },
    },
    async (request) => openDeposit(app.db, currentUser(request).id, request.body, now()),
  );

  app.post(
    '/api/deposit/integration_json/check',
    {
      onRequest: requireUser,
      schema: {
        tags: ['Deposit'],
        summary: "The state of one of the caller's deposits or purchases, by its page URL (or id)",
        ...schemaOf(CALLS['POST /api/deposit/integration_json/check']),
      },
    },
    async (request) => checkPayment(app.db, currentUser(request).id, request.body.url),
  );

  // Spec §7 "POST /api/{x}/check (form)": withdraw, exchange and transfer have static routes of their own, which win.
  app.post(
    '/api/:x/check',
    {
      onRequest: requireUser,
      config: { paramsError: routeNotFound },
      schema: {
        tags: ['Deposit', 'Purchase'],
        summary: 'Check a deposit or purchase form: fee, amount received (and the quote of what a purchase buys), deposit limits left, field errors (form)',
        params: ZPaymentFormCheckParams,
        ...schemaOf(CALLS['POST /api/{x}/check']),
      },
    },
    async (request) => {
      const user = currentUser(request);
      await consumeRateLimit(app.db, 'payment_check_user', user.id);
      const answer = await checkPaymentForm(app.db, app.rates, user.id, request.params.x, request.body, request.locale, now());
      return { status: 'ok' as const, ...answer };
    },
  );

  // GET /api/deposit/history and /api/payment/history (purchases): one call each, same shape.
  for (const [call, direction, tag, csv] of [
    [CALLS['GET /api/deposit/history'], 'deposit', 'Deposit', 'deposit-history.csv'],
    [CALLS['GET /api/payment/history'], 'purchase', 'Purchase', 'payment-history.csv'],
  ] as const) {
    app.get(
      call.path,
      {
        onRequest: requireUser,
        config: { apiKey: 'read' },
        schema: {
          tags: [tag],
          summary: `The caller's ${direction === 'deposit' ? 'deposits' : 'purchases'}, filtered and paged (format=csv: a CSV file)`,
          ...csvSchemaOf(call),
        },
      },
      async (request, reply) => {
        const page = await paymentHistory(app.db, currentUser(request).id, direction, request.query, request.locale);
        if (request.query.format !== 'csv') return { status: 'ok' as const, ...page };
        const rows = page.items.map((item) => paymentCsvRow(item, request.locale));
        return sendCsv(reply, csv, direction === 'deposit' ? DEPOSIT_CSV_COLUMNS : PURCHASE_CSV_COLUMNS, rows);
      },
    );
  }

  app.get(
    '/api/purchase/ps/:x',
    {
      onRequest: requireUser,
      config: { paramsError: () => notFoundOf('currency') },
      schema: {
        tags: ['Purchase'],
        summary: 'The ways to buy currency x: purchase systems and the currencies they charge in',
        params: ZPurchaseParams,
        ...schemaOf(CALLS['GET /api/purchase/ps/{x}']),
      },
    },
    async (request) => ({
      status: 'ok' as const,
      buy: request.params.x,
      systems: await listPurchaseSystems(app.db, app.rates, currentUser(request).id, request.params.x),
    }),
  );

  app.post(
    '/api/purchase/integration_json',
    {
      onRequest: requireUser,
      schema: {
        tags: ['Purchase'],
        summary: 'Open a purchase: the quote is locked and the hosted card page opened',
        ...schemaOf(CALLS['POST /api/purchase/integration_json']),
      },
    },
    async (request) => {
      const user = currentUser(request);
      await consumeRateLimit(app.db, 'deposit_create_user', user.id);
      return openPurchase(app.db, app.rates, user.id, request.body, now());
    },
  );
};

export default paymentRoutes;
