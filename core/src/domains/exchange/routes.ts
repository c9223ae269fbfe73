import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import { ZExchangeAllBody, ZExchangeBody, ZExchangeCheckBody, ZExchangeListQuery, ZHistoryQuery, ZPairParams, REPLAYED_HEADER, translate } from '@obmen/shared';
import { z } from 'zod';
import { parseInput } from '../../validation.ts';
import { currentUser, requireUser } from '../user/current.ts';
import { currencies, publicCurrency } from '../currencies/service.ts';
import { idempotencyKeyOf } from '../idempotency/service.ts';
import { listPairs } from '../rates/service.ts';
import { getWalletEnvelope } from '../wallets/service.ts';
import { EXCHANGE_CSV_COLUMNS, exchangeHistory, formatExchange, sendCsv } from '../history/service.ts';
import { exchangeAll, exchangeAllStatus, previewExchangeAll } from './all.ts';
import { createQuote, executeExchange, exchangeStatus, landingQuote, pairInfo, type TExchangeDeps } from './service.ts';

const ZIdParams = z.object({ id: z.string().regex(/^\d{1,18}$/, 'validation.invalid') });
const ZCurrencyParams = z.object({ currency: ZPairParams.shape.src });

/** Exchange (spec §7): pairs, quotes, one pair, all-to-one, statuses, history. */
const exchangeRoutes: FastifyPluginAsync = async (app) => {
  const deps: TExchangeDeps = { db: app.db, rates: app.rates };

  app.get('/api/exchange/list', async (request) => {
    const { search } = parseInput(ZExchangeListQuery, request.query ?? {});
    const byCode = await currencies(app.db);
    return {
      status: 'ok',
      search: search ?? '',
      pairs: await listPairs(app.db, app.rates, search),
      currencies: [...byCode.values()].filter((c) => c.enabled).map((currency) => publicCurrency(currency, request.locale)),
    };
  });

  app.post('/api/exchange/check', { preHandler: requireUser }, async (request) => ({
    status: 'ok',
    quote: await createQuote(deps, currentUser(request).id, parseInput(ZExchangeCheckBody, request.body ?? {})),
  }));

  app.post('/api/exchange/landing', async (request) => ({
    status: 'ok',
    quote: await landingQuote(deps, parseInput(ZExchangeCheckBody, request.body ?? {})),
  }));

  app.get('/api/exchange/status/:id', { preHandler: requireUser }, async (request) => {
    const { id } = parseInput(ZIdParams, request.params);
    return { status: 'ok', exchange: await exchangeStatus(app.db, currentUser(request).id, id, request.locale) };
  });

  app.get('/api/exchange/history', { preHandler: requireUser }, async (request, reply) => {
    const query = parseInput(ZHistoryQuery, request.query ?? {});
    const page = await exchangeHistory(app.db, currentUser(request).id, query, request.locale);
    if (query.format === 'csv') {
      return sendCsv(reply, 'exchange-history.csv', EXCHANGE_CSV_COLUMNS, page.items);
    }
    return { status: 'ok', ...page };
  });

  // ---- exchange all ----
  const previewAll = async (request: FastifyRequest, currency: string | undefined) => {
    const user = currentUser(request);
    const { currencies: only } = parseInput(ZExchangeAllBody, request.query ?? {});
    return {
      status: 'ok',
      ...(await previewExchangeAll(deps, user.id, currency, only, request.locale)),
      ...(await getWalletEnvelope(app.db, user.id)),
    };
  };
  const runAll = async (request: FastifyRequest, reply: FastifyReply, fromPath: string | undefined) => {
    const user = currentUser(request);
    const key = idempotencyKeyOf(request);
    const body = parseInput(ZExchangeAllBody, request.body ?? {});
    const { batch, replayed } = await exchangeAll(deps, user.id, key, fromPath ?? body.currency, body.currencies, request.locale);
    if (replayed) reply.header(REPLAYED_HEADER, 'true');
    return {
      status: 'ok',
      message: translate(request.locale, `exchange.all_${batch.status}`, { currency: batch.currency, amount: batch.amount_receive }),
      batch,
      ...(await getWalletEnvelope(app.db, user.id)),
    };
  };
  app.get('/api/exchange/all', { preHandler: requireUser }, (request) => previewAll(request, undefined));
  app.get('/api/exchange/all/:currency', { preHandler: requireUser }, (request) => previewAll(request, parseInput(ZCurrencyParams, request.params).currency));
  app.post('/api/exchange/all', { preHandler: requireUser }, (request, reply) => runAll(request, reply, undefined));
  app.post('/api/exchange/all/:currency', { preHandler: requireUser }, (request, reply) =>
    runAll(request, reply, parseInput(ZCurrencyParams, request.params).currency),
  );
  app.get('/api/exchange/all/status/:id', { preHandler: requireUser }, async (request) => {
    const { id } = parseInput(ZIdParams, request.params);
    return { status: 'ok', batch: await exchangeAllStatus(app.db, currentUser(request).id, id, request.locale) };
  });

  // ---- one pair ----
  app.get('/api/exchange/:src/:dst', async (request) => {
    const { src, dst } = parseInput(ZPairParams, request.params);
    return { status: 'ok', ...(await pairInfo(deps, request.user?.id ?? null, src, dst, request.locale)) };
  });

  app.post('/api/exchange/:src/:dst', { preHandler: requireUser }, async (request, reply) => {
    const user = currentUser(request);
    const key = idempotencyKeyOf(request);
    const pair = parseInput(ZPairParams, request.params);
    const { quote } = parseInput(ZExchangeBody, request.body ?? {});
    const { exchange: raw, replayed } = await executeExchange(deps, user.id, key, pair, quote);
    if (replayed) reply.header(REPLAYED_HEADER, 'true');
    const exchange = formatExchange(raw, await currencies(app.db), request.locale);
    return {
      status: 'ok',
      message: translate(request.locale, 'exchange.done', {
        amount: exchange.amount,
        src: exchange.src,
        receive: exchange.amount_receive,
        dst: exchange.dst,
      }),
      exchange,
      ...(await getWalletEnvelope(app.db, user.id)),
    };
  });
};

export default exchangeRoutes;
