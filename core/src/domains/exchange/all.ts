import {
  DEFAULT_EXCHANGE_ALL_CURRENCY,
  formatAmount,
  translate,
  type TCurrencyInfo,
  type TExchangeAllLeg,
  type TExchangeBatch,
  type TLocale,
} from '@obmen/shared';
import type { Queryable } from '../../db/index.ts';
import { AppError, notFoundOf } from '../../errors.ts';
import { currencies, enabledCurrency, precisionLookup, publicCurrency, type TCurrency } from '../currencies/service.ts';
import { errorKey, fromDbError, moneyError } from '../../money-errors.ts';
import { houseAccount, lockAccounts, userAccount } from '../ledger/posting.ts';
import { userBalances } from '../ledger/service.ts';
import { runIdempotent } from '../idempotency/service.ts';
import { recordEvent } from '../events/service.ts';
import { quoteAmountParams, quoteFromPay, type TPairTerms, type TQuoteAmounts } from '../rates/quote.ts';
import type { TExchangeDeps } from './service.ts';

/** A leg as stored in exchange_batches.legs: amounts in minor units, error as a code. */
type TRawLeg = {
  src: string;
  amount: string;
  amount_receive: string;
  fee: string;
  rate: string;
  status: TExchangeAllLeg['status'];
  exchange_id: string | null;
  error_code: string | null;
  error_vars?: Record<string, string | number>;
};

type TRawBatch = { id: string; currency: string; status: TExchangeBatch['status']; legs: TRawLeg[]; created_at: string };

function formatLeg(leg: TRawLeg, target: string, byCode: Map<string, TCurrency>, locale: TLocale): TExchangeAllLeg {
  const src = byCode.get(leg.src)?.precision ?? 0;
  const dst = byCode.get(target)?.precision ?? 0;
  return {
    src: leg.src,
    amount: formatAmount(leg.amount, src),
    amount_receive: formatAmount(leg.amount_receive, dst),
    fee: formatAmount(leg.fee, src),
    rate: leg.rate,
    status: leg.status,
    exchange_id: leg.exchange_id,
    error_code: leg.error_code,
    error: leg.error_code ? translate(locale, errorKey(leg.error_code), { src: leg.src, dst: target, currency: leg.src, ...leg.error_vars }) : null,
  };
}

function formatBatch(batch: TRawBatch, byCode: Map<string, TCurrency>, locale: TLocale): TExchangeBatch {
  const received = batch.legs
    .filter((leg) => leg.status === 'completed' || leg.status === 'planned')
    .reduce((sum, leg) => sum + BigInt(leg.amount_receive), 0n);
  return {
    id: batch.id,
    currency: batch.currency,
    status: batch.status,
    amount_receive: formatAmount(received, byCode.get(batch.currency)?.precision ?? 0),
    legs: batch.legs.map((leg) => formatLeg(leg, batch.currency, byCode, locale)),
    created_at: batch.created_at,
  };
}

/** What one source balance would become: a planned leg or why it cannot go. */
function planLeg(src: TCurrency, target: TCurrency, balance: bigint, terms: TPairTerms | null): { leg: TRawLeg; amounts: TQuoteAmounts | null } {
  const base: TRawLeg = {
    src: src.code,
    amount: balance.toString(),
    amount_receive: '0',
    fee: '0',
    rate: '',
    status: 'unavailable',
    exchange_id: null,
    error_code: null,
  };
  if (!terms) return { leg: { ...base, error_code: 'pair_unavailable' }, amounts: null };
  try {
    const amounts = quoteFromPay(terms, { src: src.precision, dst: target.precision }, balance);
    return {
      leg: { ...base, status: 'planned', amount_receive: amounts.receive.toString(), fee: (amounts.fee + amounts.remainder).toString(), rate: amounts.rate },
      amounts,
    };
  } catch (err) {
    if (!(err instanceof AppError)) throw err;
    return { leg: { ...base, error_code: err.code, error_vars: err.vars }, amounts: null };
  }
}

type TSelection = { target: TCurrency; sources: TCurrency[]; terms: Map<string, TPairTerms | null> };

/** The target and the wallets to convert (all non-zero ones, or the chosen set), with their pair terms. */
async function select(deps: TExchangeDeps, userId: string, targetCode: string | undefined, only: string[] | undefined): Promise<TSelection> {
  const target = await enabledCurrency(deps.db, targetCode ?? DEFAULT_EXCHANGE_ALL_CURRENCY, 'currency');
  const byCode = await currencies(deps.db);
  const balances = await userBalances(deps.db, userId);
  const wanted = only?.length ? new Set(only) : null;
  if (wanted) {
    for (const code of wanted) if (!byCode.get(code)?.enabled) throw moneyError('currency_disabled', { currency: code }, 'currencies');
  }
  const sources = [...byCode.values()].filter(
    (currency) => currency.code !== target.code && currency.enabled && (balances.get(currency.code) ?? 0n) > 0n && (!wanted || wanted.has(currency.code)),
  );
  const terms = new Map<string, TPairTerms | null>();
  for (const source of sources) terms.set(source.code, await deps.rates.pair(source.code, target.code));
  return { target, sources, terms };
}

/** GET /api/exchange/all[/{currency}]: what converting would give now (indicative: POST prices again). */
export async function previewExchangeAll(
  deps: TExchangeDeps,
  userId: string,
  targetCode: string | undefined,
  only: string[] | undefined,
  locale: TLocale,
): Promise<{ currency: string; currencies: TCurrencyInfo[]; preview: TExchangeBatch }> {
  const { target, sources, terms } = await select(deps, userId, targetCode, only);
  const balances = await userBalances(deps.db, userId);
  const byCode = await currencies(deps.db);
  const legs = sources.map((src) => planLeg(src, target, balances.get(src.code) ?? 0n, terms.get(src.code) ?? null).leg);
  const planned = legs.filter((leg) => leg.status === 'planned').length;
  const preview: TRawBatch = { id: '', currency: target.code, status: planned ? 'completed' : 'empty', legs, created_at: new Date().toISOString() };
  return {
    currency: target.code,
    currencies: [...byCode.values()].filter((c) => c.enabled).map((currency) => publicCurrency(currency, locale)),
    preview: formatBatch(preview, byCode, locale),
  };
}

/**
 * POST /api/exchange/all[/{currency}]: converts every non-zero balance (or the chosen ones)
 * into one currency at the current rates. One database transaction that claims the
 * idempotency key, locks every account the batch touches (ascending id), then runs each leg
 * in its own savepoint: a leg posts completely or not at all, a failed leg is recorded and
 * reported with its reason, the others go on. Status: completed (all legs), partial, failed
 * (none), empty (nothing to convert).
 */
export async function exchangeAll(
  deps: TExchangeDeps,
  userId: string,
  key: string,
  targetCode: string | undefined,
  only: string[] | undefined,
  locale: TLocale,
): Promise<{ batch: TExchangeBatch; replayed: boolean }> {
  const selection = await select(deps, userId, targetCode, only);
  const { target, sources, terms } = selection;
  const byCode = await currencies(deps.db);
  const payload = { currency: target.code, currencies: only?.length ? [...new Set(only)].sort() : null };
  const { result, replayed } = await runIdempotent(deps.db, { userId, key, scope: 'POST /api/exchange/all', payload }, async (tx) => {
    const srcCodes = sources.map((s) => s.code);
    const touched = [...srcCodes, target.code];
    await lockAccounts(tx, [
      ...touched.map((code) => userAccount(userId, code)),
      ...touched.map((code) => houseAccount('liquidity', code, userId)),
      ...srcCodes.map((code) => houseAccount('fees', code, userId)),
    ]);
    const [batchRow] = await tx.query<{ id: string; created_at: string }>(
      `INSERT INTO exchange_batches (user_id, currency, status, idempotency_key) VALUES ($1, $2, 'empty', $3)
       RETURNING id::text AS id, iso_time(created_at) AS created_at`,
      [userId, target.code, key],
    );
    const balances = await userBalances(tx, userId);
    const legs: TRawLeg[] = [];
    for (const src of sources) {
      const { leg, amounts } = planLeg(src, target, balances.get(src.code) ?? 0n, terms.get(src.code) ?? null);
      if (!amounts) {
        legs.push(leg);
        continue;
      }
      await tx.query('SAVEPOINT exchange_leg');
      try {
        const [row] = await tx.query<{ e: { id: string } }>('SELECT money_exchange($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, NULL, NULL) AS e', [
          userId,
          src.code,
          target.code,
          ...quoteAmountParams(amounts),
          batchRow!.id,
        ]);
        await tx.query('RELEASE SAVEPOINT exchange_leg');
        legs.push({ ...leg, status: 'completed', exchange_id: row!.e.id });
      } catch (err) {
        await tx.query('ROLLBACK TO SAVEPOINT exchange_leg');
        const pg = err as { code?: string; message?: string };
        // A deadlock or serialization failure retries the whole batch; other failures stay with their leg.
        if (pg.code === '40P01' || pg.code === '40001') throw err;
        const refusal = fromDbError(err, precisionLookup(byCode));
        const code = refusal instanceof AppError ? refusal.code : 'internal';
        const vars = refusal instanceof AppError ? refusal.vars : {};
        const [failed] = await tx.query<{ id: string }>(
          `INSERT INTO exchanges (user_id, batch_id, src, dst, pay, fee, receive, rate, status, error_code)
           VALUES ($1, $2, $3, $4, $5, 0, 0, $6, 'failed', $7) RETURNING id::text AS id`,
          [userId, batchRow!.id, src.code, target.code, amounts.pay.toString(), amounts.rate, code],
        );
        legs.push({ ...leg, status: 'failed', exchange_id: failed!.id, error_code: code, error_vars: vars });
      }
    }
    const done = legs.filter((leg) => leg.status === 'completed').length;
    const status: TExchangeBatch['status'] = legs.length === 0 ? 'empty' : done === legs.length ? 'completed' : done === 0 ? 'failed' : 'partial';
    await tx.query('UPDATE exchange_batches SET status = $2, legs = $3::jsonb WHERE id = $1', [batchRow!.id, status, JSON.stringify(legs)]);
    if (done > 0) await recordEvent(tx, userId, 'wallets', null);
    const batch: TRawBatch = { id: batchRow!.id, currency: target.code, status, legs, created_at: batchRow!.created_at };
    return { batch };
  });
  return { batch: formatBatch(result.batch, byCode, locale), replayed };
}

/** GET /api/exchange/all/status/{id} */
export async function exchangeAllStatus(db: Queryable, userId: string, id: string, locale: TLocale): Promise<TExchangeBatch> {
  if (!/^\d{1,18}$/.test(id)) throw notFoundOf('exchange_batch');
  const [row] = await db.query<TRawBatch>(
    `SELECT id::text AS id, currency, status, legs, iso_time(created_at) AS created_at FROM exchange_batches WHERE id = $1 AND user_id = $2`,
    [id, userId],
  );
  if (!row) throw notFoundOf('exchange_batch');
  return formatBatch(row, await currencies(db), locale);
}
