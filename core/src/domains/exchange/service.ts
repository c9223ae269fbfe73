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
import type { Db, Queryable } from '../../db/index.ts';
import { AppError, notFound } from '../../errors.ts';
import { currencies, enabledCurrency, publicCurrency, type TCurrency } from '../currencies/service.ts';
import { moneyError } from '../../money-errors.ts';
import { formatExchange, type TRawExchange } from '../history/service.ts';
import { ledgerCall, parseUserAmount, userBalances } from '../ledger/service.ts';
import { runIdempotent } from '../idempotency/service.ts';
import { quoteFromPay, quoteFromReceive, type TPairTerms, type TQuoteAmounts } from '../rates/quote.ts';
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
  return {
    src: src.code,
    dst: dst.code,
    amount: formatAmount(amounts.pay, src.precision),
    amount_receive: formatAmount(amounts.receive, dst.precision),
    fee: formatAmount(amounts.fee + amounts.remainder, src.precision),
    rate: amounts.rate,
    rate_inverse: amounts.rateInverse,
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
  const [row] = await deps.db.query<{ expires_at: string; balance: string }>(
    `INSERT INTO exchange_quotes (token_hash, user_id, src, dst, pay, fee, spent, remainder, receive, rate, requested, requested_amount, expires_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, now() + $13::int * interval '1 second')
     RETURNING iso_time(expires_at) AS expires_at,
       coalesce((SELECT balance FROM ledger_accounts WHERE user_id = $2 AND currency = $3), 0)::text AS balance`,
    [
      hashToken(token), userId, priced.src.code, priced.dst.code, amounts.pay.toString(), amounts.fee.toString(), amounts.spent.toString(),
      amounts.remainder.toString(), amounts.receive.toString(), amounts.rate, priced.requested, priced.requestedAmount.toString(), QUOTE_TTL_S,
    ],
  );
  const balance = BigInt(row!.balance);
  return { ...quoteView(priced, row!.expires_at), token, balance: formatAmount(balance, priced.src.precision), sufficient: balance >= amounts.pay };
}

/** POST /api/exchange/landing: the same figures for anonymous visitors, with no token. */
export async function landingQuote(deps: TExchangeDeps, body: TExchangeCheckBody): Promise<TExchangeQuote> {
  const priced = await price(deps, body);
  return quoteView(priced, new Date(Date.now() + QUOTE_TTL_S * 1000).toISOString());
}

/** A quote that cannot be spent, and what the user asked for with it (to quote it afresh). */
class QuoteRefused extends Error {
  readonly code: 'quote_expired' | 'quote_used' | 'quote_invalid';
  readonly requote: TExchangeCheckBody | null;
  constructor(code: QuoteRefused['code'], requote: TExchangeCheckBody | null) {
    super(code);
    this.code = code;
    this.requote = requote;
  }
}

/** An expired or spent quote is refused with a fresh quote for the same pair and amount in the error body. */
async function refuseQuote(deps: TExchangeDeps, userId: string, refused: QuoteRefused): Promise<AppError> {
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

/**
 * POST /api/exchange/{src}/{dst} {quote}: spends the quote (once, unexpired, this user's, this
 * pair) and posts exactly its amounts as two linked legs through the liquidity accounts,
 * all in one database transaction that starts by claiming the idempotency key.
 */
export async function executeExchange(
  deps: TExchangeDeps,
  userId: string,
  key: string,
  pair: { src: string; dst: string },
  token: string,
): Promise<{ exchange: TRawExchange; replayed: boolean }> {
  await currencies(deps.db);
  const run = () =>
    ledgerCall(deps.db, () =>
    runIdempotent(deps.db, { userId, key, scope: exchangeScope(pair.src, pair.dst), payload: { quote: token } }, async (tx) => {
      const [quote] = await tx.query<{ id: string; src: string; dst: string; pay: string; fee: string; spent: string; remainder: string; receive: string; rate: string }>(
        `UPDATE exchange_quotes SET used_at = now()
         WHERE token_hash = $1 AND user_id = $2 AND used_at IS NULL AND expires_at > now()
         RETURNING id::text AS id, src, dst, pay::text AS pay, fee::text AS fee, spent::text AS spent, remainder::text AS remainder,
                   receive::text AS receive, rate`,
        [hashToken(token), userId],
      );
      if (!quote) throw await whyRefused(tx, userId, token);
      if (quote.src !== pair.src || quote.dst !== pair.dst) throw new QuoteRefused('quote_invalid', null);
      const [row] = await tx.query<{ e: TRawExchange }>(
        'SELECT money_exchange($1, $2, $3, $4, $5, $6, $7, $8, $9, NULL, $10, $11) AS e',
        [userId, quote.src, quote.dst, quote.pay, quote.fee, quote.spent, quote.remainder, quote.receive, quote.rate, quote.id, key],
      );
      return { exchange: row!.e };
    }, { storedByWork: true }),
    );
  try {
    const { result, replayed } = await run();
    return { exchange: result.exchange, replayed };
  } catch (err) {
    throw err instanceof QuoteRefused ? await refuseQuote(deps, userId, err) : err;
  }
}

async function whyRefused(tx: Queryable, userId: string, token: string): Promise<QuoteRefused> {
  const [row] = await tx.query<{ src: string; dst: string; used: boolean; requested: 'pay' | 'receive'; requested_amount: string; sp: number; dp: number }>(
    `SELECT q.src, q.dst, q.used_at IS NOT NULL AS used, q.requested, q.requested_amount::text AS requested_amount,
            s.precision AS sp, d.precision AS dp
     FROM exchange_quotes q JOIN currencies s ON s.code = q.src JOIN currencies d ON d.code = q.dst
     WHERE q.token_hash = $1 AND q.user_id = $2`,
    [hashToken(token), userId],
  );
  if (!row) return new QuoteRefused('quote_invalid', null);
  const requote: TExchangeCheckBody =
    row.requested === 'pay'
      ? { src: row.src, dst: row.dst, amount: formatAmount(row.requested_amount, Number(row.sp)) }
      : { src: row.src, dst: row.dst, amount_receive: formatAmount(row.requested_amount, Number(row.dp)) };
  return new QuoteRefused(row.used ? 'quote_used' : 'quote_expired', requote);
}

/** Housekeeping: quotes a day past their expiry are of no use to anyone. */
export async function purgeQuotes(db: Queryable): Promise<void> {
  await db.query(`DELETE FROM exchange_quotes WHERE expires_at < now() - interval '1 day'`);
}

/** GET /api/exchange/status/{id}: one of the user's exchanges. */
export async function exchangeStatus(db: Queryable, userId: string, id: string, locale: TLocale): Promise<TExchangeRecord> {
  if (!/^\d{1,18}$/.test(id)) throw notFound();
  const [row] = await db.query<TRawExchange>(
    `SELECT id::text AS id, batch_id::text AS batch_id, src, dst, pay::text AS amount, receive::text AS amount_receive, fee::text AS fee, rate,
            status, error_code, iso_time(created_at) AS created_at
     FROM exchanges WHERE id = $1 AND user_id = $2`,
    [id, userId],
  );
  if (!row) throw notFound();
  return formatExchange(row, await currencies(db), locale);
}

/** GET /api/exchange/{src}/{dst}: the pair for the exchange form, with the user's balances. */
export async function pairInfo(
  deps: TExchangeDeps,
  userId: string | null,
  src: string,
  dst: string,
): Promise<{ pair: TExchangePair; src: TCurrencyInfo; dst: TCurrencyInfo; balances?: { src: string; dst: string } }> {
  const source = await enabledCurrency(deps.db, src, 'src');
  const target = await enabledCurrency(deps.db, dst, 'dst');
  const byCode = await currencies(deps.db);
  const pair = publicPair(await pairTerms(deps, source.code, target.code), byCode);
  if (!pair) throw moneyError('pair_unavailable', { src, dst }, 'dst');
  const info = { pair, src: publicCurrency(source), dst: publicCurrency(target) };
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
