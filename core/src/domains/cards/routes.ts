import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { z } from 'zod';
import { CARD_ISSUERS, WEBHOOK_SIGNATURE_HEADER, ZCardParams, ZOk, translate, type TCardIssuer, type TCardMoveBody } from '@obmen/shared';
import { AppError, notFoundOf } from '../../errors.ts';
import { currentUser, requireUser } from '../user/current.ts';
import { callWithIdempotencyKey } from '../idempotency/service.ts';
import { getWalletEnvelope } from '../wallets/service.ts';
import { cardCatalogue } from './catalogue.ts';
import { issuerCallbackIntake } from './callbacks.ts';
import type { TIssuers } from './issuer.ts';
import { cancelOrder, confirmOrder, getOrder, listOrders, placeOrder, type TCardContext } from './orders.ts';
import { cardDetails, closeCard, freezeCard, listCards, revealCard, topUpCard, unfreezeCard, withdrawFromCard } from './my-cards.ts';
import { CALLS, type TCalls } from '@obmen/shared/calls';
import { schemaOf } from '../../lib/call-schema.ts';

type TCardOptions = { issuers: TIssuers; now?: () => Date };

/** An issuer's event is small; anything bigger is not one. */
const CALLBACK_BODY_LIMIT = 64 * 1024;

/** Spec §7 "Cards", the calls of issued cards, and the issuers' signed callbacks. */
const cardRoutes: FastifyPluginAsyncZod<TCardOptions> = async (app, { issuers, now: clock }) => {
  const now = clock ?? (() => new Date());
  const ctx: TCardContext = { db: app.db, issuers, now };
  const tags = ['Cards'];
  const cardNotFound = { paramsError: () => notFoundOf('card') };
  const money = { idempotent: true };
  const userId = (request: FastifyRequest) => currentUser(request).id;

  // ---- the issuers' callbacks: raw bodies (the signature covers the exact bytes) ----
  await app.register(async (scope) => {
    const receive = issuerCallbackIntake(app.db, now);
    scope.removeAllContentTypeParsers();
    scope.addContentTypeParser('*', { parseAs: 'buffer', bodyLimit: CALLBACK_BODY_LIMIT }, (_request, body, done) => done(null, body));
    scope.withTypeProvider<import('fastify-type-provider-zod').ZodTypeProvider>().post(
      '/api/card/issuer/:issuer/callback',
      {
        bodyLimit: CALLBACK_BODY_LIMIT,
        schema: {
          tags,
          summary: "A card issuer's signed event (raw body; the x-obmen-signature header)",
          params: z.object({ issuer: z.string() }),
          response: { 200: ZOk.extend({ result: z.string() }) },
        },
      },
      async (request) => {
        const known = (CARD_ISSUERS as readonly string[]).includes(request.params.issuer);
        const issuer = known ? issuers.get(request.params.issuer as TCardIssuer) : undefined;
        if (!issuer) throw notFoundOf('card_issuer');
        const signature = request.headers[WEBHOOK_SIGNATURE_HEADER];
        const result = await receive(issuer, {
          rawBody: Buffer.isBuffer(request.body) ? request.body : Buffer.alloc(0),
          signature: typeof signature === 'string' ? signature : undefined,
          now: now(),
          address: request.ip,
        });
        if (result === 'bad_signature' || result === 'stale') throw new AppError('webhook_signature_invalid');
        if (result === 'malformed') throw new AppError('validation');
        return { status: 'ok' as const, result };
      },
    );
  });

  app.get(
    '/api/card',
    { onRequest: requireUser, schema: { tags, summary: 'Card products and what ordering one needs', ...schemaOf(CALLS['GET /api/card']) } },
    async (request) => cardCatalogue(app.db, userId(request)),
  );

  app.get(
    '/api/card/order',
    { onRequest: requireUser, schema: { tags, summary: "The caller's card orders with their status", ...schemaOf(CALLS['GET /api/card/order']) } },
    async (request) => ({ status: 'ok' as const, orders: await listOrders(app.db, userId(request)) }),
  );

  app.get(
    '/api/card/order/:id',
    {
      onRequest: requireUser,
      config: cardNotFound,
      schema: { tags, summary: 'One card order', params: ZCardParams, ...schemaOf(CALLS['GET /api/card/order/{id}']) },
    },
    async (request) => ({ status: 'ok' as const, order: await getOrder(app.db, userId(request), request.params.id) }),
  );

  const orderAnswer = async (
    request: FastifyRequest,
    reply: FastifyReply,
    call: (key: string) => ReturnType<typeof placeOrder>,
    key: 'cards.order_placed' | 'cards.order_confirmed' | 'cards.order_cancelled',
  ) => {
    const done = await callWithIdempotencyKey(request, reply, call);
    return {
      status: 'ok' as const,
      message: translate(request.locale, key, { fee: done.order.issue_fee, currency: done.order.fee_currency }),
      order: done.order,
      ...(await getWalletEnvelope(app.db, userId(request))),
    };
  };

  app.post(
    '/api/card/order',
    {
      onRequest: requireUser,
      config: money,
      schema: { tags, summary: 'Order a card (form): the issue fee is held', ...schemaOf(CALLS['POST /api/card/order']) },
    },
    async (request, reply) => orderAnswer(request, reply, (key) => placeOrder(ctx, userId(request), key, request.body), 'cards.order_placed'),
  );

  app.post(
    '/api/card/order/confirm',
    {
      onRequest: requireUser,
      config: money,
      schema: {
        tags,
        summary: 'Confirm a placed order: the fee is charged and the issuer makes the card',
        ...schemaOf(CALLS['POST /api/card/order/confirm']),
      },
    },
    async (request, reply) => orderAnswer(request, reply, (key) => confirmOrder(ctx, userId(request), key, request.body.card), 'cards.order_confirmed'),
  );

  app.post(
    '/api/card/order/cancel',
    {
      onRequest: requireUser,
      config: money,
      schema: { tags, summary: 'Cancel a placed order: the held fee is released', ...schemaOf(CALLS['POST /api/card/order/cancel']) },
    },
    async (request, reply) => orderAnswer(request, reply, (key) => cancelOrder(ctx, userId(request), key, request.body.card), 'cards.order_cancelled'),
  );

  app.get(
    '/api/card/my',
    { onRequest: requireUser, schema: { tags, summary: "The caller's cards, numbers masked", ...schemaOf(CALLS['GET /api/card/my']) } },
    async (request) => ({ status: 'ok' as const, cards: await listCards(app.db, userId(request)) }),
  );

  app.get(
    '/api/card/details/:id',
    {
      onRequest: requireUser,
      config: cardNotFound,
      schema: { tags, summary: 'One card: masked number, balance, limits, activity', params: ZCardParams, ...schemaOf(CALLS['GET /api/card/details/{id}']) },
    },
    async (request) => ({ status: 'ok' as const, card: await cardDetails(app.db, userId(request), request.params.id) }),
  );

  app.post(
    '/api/card/reveal',
    {
      onRequest: requireUser,
      schema: {
        tags,
        summary: 'The full number and CVC, after the password or a second-factor code (never cached)',
        ...schemaOf(CALLS['POST /api/card/reveal']),
      },
    },
    async (request, reply) => {
      reply.header('cache-control', 'no-store');
      reply.header('pragma', 'no-cache');
      return { status: 'ok' as const, ...(await revealCard(ctx, userId(request), request.body)) };
    },
  );

  type TChangeMessage = 'cards.frozen' | 'cards.unfrozen' | 'cards.closed' | 'cards.topped_up' | 'cards.withdrawn';
  type TChangeCall = TCalls[`POST /api/card/${'freeze' | 'unfreeze' | 'close' | 'topup' | 'withdraw'}`];
  const change = (call: TChangeCall, summary: string, message: TChangeMessage, run: (request: FastifyRequest, key: string) => ReturnType<typeof freezeCard>) =>
    app.post(call.path, { onRequest: requireUser, config: money, schema: { tags, summary, ...schemaOf(call) } }, async (request, reply) => {
      const done = await callWithIdempotencyKey(request, reply, (key) => run(request, key));
      return {
        status: 'ok' as const,
        message: translate(request.locale, message, { card: done.card.last4 ?? '' }),
        card: done.card,
        ...(await getWalletEnvelope(app.db, userId(request))),
      };
    });
  const cardOf = (request: FastifyRequest) => (request.body as { card: string }).card;
  const moveOf = (request: FastifyRequest) => request.body as TCardMoveBody;
  change(CALLS['POST /api/card/freeze'], 'Freeze an active card', 'cards.frozen', (request, key) => freezeCard(ctx, userId(request), key, cardOf(request)));
  change(CALLS['POST /api/card/unfreeze'], 'Unfreeze a frozen card', 'cards.unfrozen', (request, key) =>
    unfreezeCard(ctx, userId(request), key, cardOf(request)),
  );
  change(CALLS['POST /api/card/close'], 'Close a card for good (its balance goes back to the wallet)', 'cards.closed', (request, key) =>
    closeCard(ctx, userId(request), key, cardOf(request)),
  );
  change(CALLS['POST /api/card/topup'], 'Top up a card from the wallet of its currency', 'cards.topped_up', (request, key) =>
    topUpCard(ctx, userId(request), key, moveOf(request)),
  );
  change(CALLS['POST /api/card/withdraw'], 'Move money from a card back to the wallet of its currency', 'cards.withdrawn', (request, key) =>
    withdrawFromCard(ctx, userId(request), key, moveOf(request)),
  );
};

export default cardRoutes;
