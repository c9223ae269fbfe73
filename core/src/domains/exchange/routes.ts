import type { FastifyReply, FastifyRequest } from 'fastify';
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import {
  ZCurrencyParams,
  ZExchangeAllBody,
  ZExchangeAllResponse,
  ZExchangeBatchResponse,
  ZExchangeStatusResponse,
  ZIdParams,
  ZPairParams,
  translate,
  type TExchangeAllBody,
} from '@obmen/shared';
import { notFoundOf } from '../../errors.ts';
import { currentUser, requireUser } from '../user/current.ts';
import { currencies, publicCurrency } from '../currencies/service.ts';
import { callWithIdempotencyKey } from '../idempotency/service.ts';
import { listPairs } from '../rates/service.ts';
import { rateCandles, rateSummaries } from '../rates/history.ts';
import { getWalletEnvelope } from '../wallets/service.ts';
import { EXCHANGE_CSV_COLUMNS, exchangeHistory, formatExchange, sendCsv } from '../history/service.ts';
import { exchangeAll, exchangeAllStatus, previewExchangeAll } from './all.ts';
import { createQuote, executeExchange, exchangeStatus, landingQuote, pairInfo, type TExchangeDeps } from './service.ts';
import { CALLS } from '@obmen/shared/calls';
import { csvSchemaOf, schemaOf } from '../../lib/call-schema.ts';

/** Exchange (spec §7): pairs, quotes, one pair and its rate history, all-to-one, statuses, history. */
const exchangeRoutes: FastifyPluginAsyncZod<{ now: () => Date }> = async (app, { now }) => {
  const deps: TExchangeDeps = { db: app.db, rates: app.rates };
  const tags = ['Exchange'];

  app.get(
    '/api/exchange/list',
    {
      schema: {
        tags,
        summary: 'Pairs (searchable: "BTC/", "/USDT", "BTC/USDT", "BTC") and currencies',
        ...schemaOf(CALLS['GET /api/exchange/list']),
      },
    },
    async (request) => {
      const { search } = request.query;
      const byCode = await currencies(app.db);
      return {
        status: 'ok' as const,
        search: search ?? '',
        pairs: [...(await listPairs(app.db, app.rates, search))],
        currencies: [...byCode.values()].filter((c) => c.enabled).map((currency) => publicCurrency(currency, request.locale)),
      };
    },
  );

  app.post(
    '/api/exchange/check',
    {
      onRequest: requireUser,
      config: { apiKey: 'exchange' },
      schema: {
        tags,
        summary: 'A quote to confirm within 30 s (form: src, dst, amount or amount_receive)',
        ...schemaOf(CALLS['POST /api/exchange/check']),
      },
    },
    async (request) => ({ status: 'ok' as const, quote: await createQuote(deps, currentUser(request).id, request.body) }),
  );

  app.post(
    '/api/exchange/landing',
    { schema: { tags, summary: 'An indicative quote for the landing page (no token)', ...schemaOf(CALLS['POST /api/exchange/landing']) } },
    async (request) => ({ status: 'ok' as const, quote: await landingQuote(deps, request.body) }),
  );

  app.get(
    '/api/exchange/status/:id',
    {
      onRequest: requireUser,
      config: { paramsError: () => notFoundOf('exchange') },
      schema: {
        tags,
        summary: "One of the caller's exchanges (404 exchange_not_found otherwise)",
        params: ZIdParams,
        response: { 200: ZExchangeStatusResponse },
      },
    },
    async (request) => ({ status: 'ok' as const, exchange: await exchangeStatus(app.db, currentUser(request).id, request.params.id, request.locale) }),
  );

  app.get(
    '/api/exchange/history',
    {
      onRequest: requireUser,
      config: { apiKey: 'read' },
      schema: {
        tags,
        summary: "The caller's exchanges, filtered and paged (format=csv: a CSV file)",
        ...csvSchemaOf(CALLS['GET /api/exchange/history']),
      },
    },
    async (request, reply) => {
      const query = request.query;
      const page = await exchangeHistory(app.db, currentUser(request).id, query, request.locale);
      if (query.format === 'csv') {
        return sendCsv(reply, 'exchange-history.csv', EXCHANGE_CSV_COLUMNS, page.items);
      }
      return { status: 'ok' as const, ...page };
    },
  );

  // ---- exchange all ----
  const previewAll = async (request: FastifyRequest, currency: string | undefined, only: TExchangeAllBody['currencies']) => {
    const user = currentUser(request);
    return {
      status: 'ok' as const,
      ...(await previewExchangeAll(deps, user.id, currency, only, request.locale)),
      ...(await getWalletEnvelope(app.db, user.id)),
    };
  };
  const runAll = async (request: FastifyRequest, reply: FastifyReply, currency: string | undefined, only: TExchangeAllBody['currencies']) => {
    const user = currentUser(request);
    const { batch } = await callWithIdempotencyKey(request, reply, (key) => exchangeAll(deps, user.id, key, currency, only, request.locale));
    return {
      status: 'ok' as const,
      message: translate(request.locale, `exchange.all_${batch.status}`, { currency: batch.currency, amount: batch.amount_receive }),
      batch,
      ...(await getWalletEnvelope(app.db, user.id)),
    };
  };
  const previewSummary = 'What converting every balance (or the chosen ones) into one currency would give now';
  const runSummary = 'Convert every balance (or the chosen ones) into one currency';
  app.get('/api/exchange/all', { onRequest: requireUser, schema: { tags, summary: previewSummary, ...schemaOf(CALLS['GET /api/exchange/all']) } }, (request) =>
    previewAll(request, undefined, request.query.currencies),
  );
  app.get(
    '/api/exchange/all/:currency',
    {
      onRequest: requireUser,
      schema: { tags, summary: previewSummary, params: ZCurrencyParams, ...schemaOf(CALLS['GET /api/exchange/all/{currency}']) },
    },
    (request) => previewAll(request, request.params.currency, request.query.currencies),
  );
  app.post(
    '/api/exchange/all',
    {
      onRequest: requireUser,
      config: { idempotent: true },
      schema: { tags, summary: runSummary, body: ZExchangeAllBody, response: { 200: ZExchangeAllResponse } },
    },
    (request, reply) => runAll(request, reply, request.body.currency, request.body.currencies),
  );
  app.post(
    '/api/exchange/all/:currency',
    {
      onRequest: requireUser,
      config: { idempotent: true, apiKey: 'exchange' },
      schema: { tags, summary: runSummary, params: ZCurrencyParams, ...schemaOf(CALLS['POST /api/exchange/all/{currency}']) },
    },
    (request, reply) => runAll(request, reply, request.params.currency, request.body.currencies),
  );
  app.get(
    '/api/exchange/all/status/:id',
    {
      onRequest: requireUser,
      config: { paramsError: () => notFoundOf('exchange_batch') },
      schema: {
        tags,
        summary: "One of the caller's all-to-one batches (404 exchange_batch_not_found otherwise)",
        params: ZIdParams,
        response: { 200: ZExchangeBatchResponse },
      },
    },
    async (request) => ({ status: 'ok' as const, batch: await exchangeAllStatus(app.db, currentUser(request).id, request.params.id, request.locale) }),
  );

  // ---- one pair ----
  app.get(
    '/api/exchange/rates',
    { schema: { tags, summary: "Every pair's hourly closes over the last 24 hours and its change", ...schemaOf(CALLS['GET /api/exchange/rates']) } },
    async () => ({ status: 'ok' as const, pairs: await rateSummaries(app.db, now()) }),
  );
  app.get(
    '/api/exchange/rates/:src/:dst',
    {
      config: { paramsError: () => notFoundOf('pair') },
      schema: {
        tags,
        summary: "A pair's mid rate over time: candles of 1m, 1h or 1d from `from` to `to` (at most 1500)",
        params: ZPairParams,
        ...schemaOf(CALLS['GET /api/exchange/rates/{src}/{dst}']),
      },
    },
    async (request) => {
      const { src, dst } = request.params;
      const candles = await rateCandles(app.db, src, dst, request.query, now());
      return { status: 'ok' as const, src, dst, interval: request.query.interval, candles };
    },
  );

  app.get(
    '/api/exchange/:src/:dst',
    {
      schema: {
        tags,
        summary: 'One pair for the exchange form (signed in: with both balances)',
        params: ZPairParams,
        ...schemaOf(CALLS['GET /api/exchange/{src}/{dst}']),
      },
    },
    async (request) => ({ status: 'ok' as const, ...(await pairInfo(deps, request.user?.id ?? null, request.params.src, request.params.dst, request.locale)) }),
  );

  app.post(
    '/api/exchange/:src/:dst',
    {
      onRequest: requireUser,
      config: { idempotent: true, apiKey: 'exchange' },
      schema: {
        tags,
        summary: 'Confirm a quote (form: quote). An expired or spent quote answers 409 with a fresh `quote`',
        params: ZPairParams,
        ...schemaOf(CALLS['POST /api/exchange/{src}/{dst}']),
      },
    },
    async (request, reply) => {
      const user = currentUser(request);
      const { exchange: raw } = await callWithIdempotencyKey(request, reply, (key) => executeExchange(deps, user.id, key, request.params, request.body.quote));
      const exchange = formatExchange(raw, await currencies(app.db), request.locale);
      return {
        status: 'ok' as const,
        message: translate(request.locale, 'exchange.done', {
          amount: exchange.amount,
          src: exchange.src,
          receive: exchange.amount_receive,
          dst: exchange.dst,
        }),
        exchange,
        ...(await getWalletEnvelope(app.db, user.id)),
      };
    },
  );
};

export default exchangeRoutes;
