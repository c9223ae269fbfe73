import { createHash, randomBytes } from 'node:crypto';
import {
  QUOTE_TTL_S,
  formatAmount,
  type TCurrencyInfo,
  type TExchangeCheckBody,
  type TExchangePair,
  type TExchangeQuote,
  type TExchangeRecord,
  type TLocale,
} from '@obmen/shared';
import { statement, type Db, type Queryable } from '../../db/index.ts';
import { AppError, notFoundOf } from '../../errors.ts';
import { currencies, enabledCurrency, parseUserAmount, precisionLookup, publicCurrency, type TCurrency } from '../currencies/service.ts';
import { fromDbError, moneyError, withRetry } from '../../money-errors.ts';
import { formatExchange, type TRawExchange } from '../history/service.ts';
import { offerFeed } from '../events/service.ts';
import { userBalances } from '../ledger/service.ts';
import { requestHash } from '../idempotency/service.ts';
import { quoteAmountParams, quoteCost, quoteFromPay, quoteFromReceive, type TPairTerms, type TQuoteAmounts } from '../rates/quote.ts';
import { publicPair } from '../rates/service.ts';
import type { RateSource } from '../rates/source.ts';

export type TExchangeDeps = { db: Db; rates: RateSource };

/** The pair's terms from the rate source, or 422 pair_unavailable. */
export async function pairTerms(deps: TExchangeDeps, src: string, dst: string): Promise<TPairTerms> {
  const terms = src === dst ? null : await deps.rates.pair(src, dst);
  if (!terms) throw moneyError('pair_unavailable', { src, dst }, 'dst');
  return terms;
}

type TPriced = { src: TCurrency; dst: TCurrency; terms: TPairTerms; amounts: TQuoteAmounts; requested: 'pay' | 'receive'; requestedAmount: bigint };

/** Prices a check body (either side typed) at the source's current terms. */
export async function price(deps: TExchangeDeps, body: TExchangeCheckBody): Promise<TPriced> {
  const src = await enabledCurrency(deps.db, body.src, 'src');
  const dst = await enabledCurrency(deps.db, body.dst, 'dst');
  if (src.code === dst.code) throw moneyError('same_currency', {}, 'dst');
  const terms = await pairTerms(deps, src.code, dst.code);
  const precision = { src: src.precision, dst: dst.precision };
  if (body.amount !== undefined) {
    const pay = parseUserAmount(body.amount, src, 'amount');
    return { src, dst, terms, amounts: quoteFromPay(terms, precision, pay), requested: 'pay', requestedAmount: pay };
  }
  const receive = parseUserAmount(body.amount_receive ?? '', dst, 'amount_receive');
  return { src, dst, terms, amounts: quoteFromReceive(terms, precision, receive), requested: 'receive', requestedAmount: receive };
}

function quoteView(priced: TPriced, expiresAt: string): TExchangeQuote {
  const { src, dst, terms, amounts } = priced;
  const cost = quoteCost(terms, { src: src.precision, dst: dst.precision }, amounts);
  return {
    src: src.code,
    dst: dst.code,
    amount: formatAmount(amounts.pay, src.precision),
    amount_receive: formatAmount(amounts.receive, dst.precision),
    fee: formatAmount(amounts.fee + amounts.remainder, src.precision),
    rate: amounts.rate,
    rate_inverse: amounts.rateInverse,
    cost: formatAmount(cost.cost, src.precision),
    cost_percent: cost.fraction,
    limits: { min: formatAmount(terms.min, src.precision), max: terms.max === null ? null : formatAmount(terms.max, src.precision) },
    expires_at: expiresAt,
    expires_in: QUOTE_TTL_S,
  };
}

const hashToken = (token: string) => createHash('sha256').update(token, 'utf8').digest();

/**
 * POST /api/exchange/check: a quote with a one-time token, valid QUOTE_TTL_S seconds, stored
 * server-side with the exact amounts an exchange will post. Also says whether the user's
 * balance covers it (a quote is given either way).
 */
export async function createQuote(deps: TExchangeDeps, userId: string, body: TExchangeCheckBody): Promise<TExchangeQuote> {
  const priced = await price(deps, body);
  const { amounts } = priced;
  const token = randomBytes(24).toString('base64url');
  // One statement, so retrying a serialization failure (SERIALIZABLE databases) is safe.
  const [row] = await withRetry(() =>
    deps.db.query<{ expires_at: string; balance: string }>(
      `INSERT INTO exchange_quotes (token_hash, user_id, src, dst, pay, fee, spent, remainder, receive, rate, requested, requested_amount, expires_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, now() + $13::int * interval '1 second')
     RETURNING iso_time(expires_at) AS expires_at,
       coalesce((SELECT balance FROM ledger_accounts WHERE user_id = $2 AND currency = $3), 0)::text AS balance`,
      [
        hashToken(token),
        userId,
        priced.src.code,
        priced.dst.code,
        ...quoteAmountParams(amounts),
        priced.requested,
        priced.requestedAmount.toString(),
        QUOTE_TTL_S,
      ],
    ),
  );
  const balance = BigInt(row!.balance);
  return { ...quoteView(priced, row!.expires_at), token, balance: formatAmount(balance, priced.src.precision), sufficient: balance >= amounts.pay };
}

/** POST /api/exchange/landing: the same figures for anonymous visitors, with no token. */
export async function landingQuote(deps: TExchangeDeps, body: TExchangeCheckBody): Promise<TExchangeQuote> {
  const priced = await price(deps, body);
  return quoteView(priced, new Date(Date.now() + QUOTE_TTL_S * 1000).toISOString());
}

type TQuoteRefusal = { code: 'quote_expired' | 'quote_used' | 'quote_invalid'; requote: TExchangeCheckBody | null };

/** A refusal of exchange_execute() about the quote, with what the user asked for; null for any other error. */
function quoteRefusal(err: unknown, byCode: Map<string, TCurrency>): TQuoteRefusal | null {
  const pg = err as { code?: string; message?: string; detail?: string };
  if (pg?.code !== 'OB000' || (pg.message !== 'quote_expired' && pg.message !== 'quote_used' && pg.message !== 'quote_invalid')) return null;
  const asked = JSON.parse(pg.detail || '{}') as { src?: string; dst?: string; requested?: 'pay' | 'receive'; requested_amount?: string };
  const precision = asked.requested === 'pay' ? byCode.get(asked.src ?? '')?.precision : byCode.get(asked.dst ?? '')?.precision;
  if (!asked.src || !asked.dst || !asked.requested_amount || precision === undefined) return { code: pg.message, requote: null };
  const amount = formatAmount(asked.requested_amount, precision);
  return {
    code: pg.message,
    requote: asked.requested === 'pay' ? { src: asked.src, dst: asked.dst, amount } : { src: asked.src, dst: asked.dst, amount_receive: amount },
  };
}

/** An expired or spent quote is refused with a fresh quote for the same pair and amount in the error body. */
async function refuseQuote(deps: TExchangeDeps, userId: string, refused: TQuoteRefusal): Promise<AppError> {
  let quote: TExchangeQuote | undefined;
  if (refused.requote) {
    try {
      quote = await createQuote(deps, userId, refused.requote);
    } catch {
      quote = undefined;
    }
  }
  return new AppError(refused.code, quote ? { data: { quote } } : {});
}

export const exchangeScope = (src: string, dst: string) => `POST /api/exchange/${src}/${dst}`;

const EXCHANGE_EXECUTE = statement('exchange_execute', 'SELECT exchange_execute($1, $2, $3, $4, $5, $6) AS r');

/**
 * POST /api/exchange/{src}/{dst} {quote}: spends the quote (once, unexpired, this user's, this
 * pair) and posts exactly its amounts as two linked legs through the liquidity accounts, in ONE
 * round trip (the SQL function exchange_execute(): idempotency key, quote, ledger, record, answer).
 * Deadlocks are retried; the same key replays the first answer.
 */
export async function executeExchange(
  deps: TExchangeDeps,
  userId: string,
  key: string,
  pair: { src: string; dst: string },
  token: string,
): Promise<{ exchange: TRawExchange; replayed: boolean }> {
  const byCode = await currencies(deps.db);
  const hash = requestHash(exchangeScope(pair.src, pair.dst), { quote: token });
  try {
    const [row] = await withRetry(() =>
      deps.db.query<{ r: { replayed: boolean; result: { exchange: TRawExchange } } }>(EXCHANGE_EXECUTE, [
        userId,
        key,
        hash,
        hashToken(token),
        pair.src,
        pair.dst,
      ]),
    );
    // exchange_execute() recorded the user's "wallets" event; committed now.
    if (!row!.r.replayed) {
      deps.db.announce?.([userId]);
      const done = row!.r.result.exchange;
      offerFeed(deps.db, { kind: 'exchange', currency: done.src, amount: formatAmount(done.amount, byCode.get(done.src)?.precision ?? 0), to: done.dst });
    }
    return { exchange: row!.r.result.exchange, replayed: row!.r.replayed };
  } catch (err) {
    const refused = quoteRefusal(err, byCode);
    if (refused) throw await refuseQuote(deps, userId, refused);
    throw fromDbError(err, precisionLookup(byCode));
  }
}

/** Housekeeping: quotes a day past their expiry are of no use to anyone. */
export async function purgeQuotes(db: Queryable): Promise<void> {
  await db.query(`DELETE FROM exchange_quotes WHERE expires_at < now() - interval '1 day'`);
}

/** GET /api/exchange/status/{id}: one of the user's exchanges. */
export async function exchangeStatus(db: Queryable, userId: string, id: string, locale: TLocale): Promise<TExchangeRecord> {
  if (!/^\d{1,18}$/.test(id)) throw notFoundOf('exchange');
  const [row] = await db.query<TRawExchange>(
    `SELECT id::text AS id, batch_id::text AS batch_id, src, dst, pay::text AS amount, receive::text AS amount_receive, fee::text AS fee, rate,
            status, error_code, iso_time(created_at) AS created_at
     FROM exchanges WHERE id = $1 AND user_id = $2`,
    [id, userId],
  );
  if (!row) throw notFoundOf('exchange');
  return formatExchange(row, await currencies(db), locale);
}

/** GET /api/exchange/{src}/{dst}: the pair for the exchange form, with the user's balances. */
export async function pairInfo(
  deps: TExchangeDeps,
  userId: string | null,
  src: string,
  dst: string,
  locale: TLocale,
): Promise<{ pair: TExchangePair; src: TCurrencyInfo; dst: TCurrencyInfo; balances?: { src: string; dst: string } }> {
  const source = await enabledCurrency(deps.db, src, 'src');
  const target = await enabledCurrency(deps.db, dst, 'dst');
  const byCode = await currencies(deps.db);
  const pair = publicPair(await pairTerms(deps, source.code, target.code), byCode);
  if (!pair) throw moneyError('pair_unavailable', { src, dst }, 'dst');
  const info = { pair, src: publicCurrency(source, locale), dst: publicCurrency(target, locale) };
  if (!userId) return info;
  const balances = await userBalances(deps.db, userId);
  return {
    ...info,
    balances: {
      src: formatAmount(balances.get(source.code) ?? 0n, source.precision),
      dst: formatAmount(balances.get(target.code) ?? 0n, target.precision),
    },
  };
}
