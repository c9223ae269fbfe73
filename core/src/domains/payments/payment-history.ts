import {
  isI18nKey,
  translate,
  type TLocale,
  type TPaymentHistoryQuery,
  type TPaymentRecord,
  type TWithdrawal,
  type TWithdrawHistoryQuery,
} from '@obmen/shared';
import type { Queryable } from '../../db/index.ts';
import { currencies } from '../currencies/service.ts';
import { dateBounds, historyPaging, historyWindow, type THistoryPage } from '../history/service.ts';
import { DEPOSIT_COLUMNS, paymentView, type TDepositRow } from './deposits.ts';
import { quoteView, type TPurchaseRow } from './purchase.ts';
import { formatWithdrawal, WITHDRAWAL_COLUMNS, type TWithdrawalRow } from './withdrawals.ts';

/**
 * GET /api/deposit/history (deposits) and GET /api/payment/history (purchases): the caller's
 * payments, newest first, filtered and paged (or the CSV rows). Each item is what `check`
 * answers, so its `url` is the payment's status page. For a purchase the currency filter
 * matches the currency paid with or the one bought.
 */
export async function paymentHistory(
  db: Queryable,
  userId: string,
  direction: 'deposit' | 'purchase',
  query: TPaymentHistoryQuery,
  locale: TLocale,
): Promise<THistoryPage<TPaymentRecord>> {
  const { from, to } = dateBounds(query);
  const where = `user_id = $1 AND direction = $2 AND ($3::timestamptz IS NULL OR created_at >= $3) AND ($4::timestamptz IS NULL OR created_at < $4)
    AND ($5::text IS NULL OR currency = $5 OR EXISTS (SELECT 1 FROM purchases b WHERE b.payment_id = payments.id AND b.buy_currency = $5))
    AND ($6::text IS NULL OR state = $6)`;
  const params = [userId, direction, from, to, query.currency ?? null, query.status ?? null];
  const { limit, offset } = historyWindow(query);
  const [count] = await db.query<{ total: number }>(`SELECT count(*)::int AS total FROM payments WHERE ${where}`, params);
  const rows = await db.query<TDepositRow>(
    `SELECT ${DEPOSIT_COLUMNS} FROM payments WHERE ${where} ORDER BY created_at DESC, id DESC LIMIT ${limit} OFFSET ${offset}`,
    params,
  );
  // The purchases of the page in one query, not one per row.
  const purchases = new Map<string, TPurchaseRow>();
  if (direction === 'purchase' && rows.length > 0) {
    const found = await db.query<TPurchaseRow & { pid: string }>('SELECT payment_id::text AS pid, * FROM purchases WHERE payment_id = ANY($1::bigint[])', [
      rows.map((row) => row.id),
    ]);
    for (const purchase of found) purchases.set(purchase.pid, purchase);
  }
  const names = new Map(
    (await db.query<{ id: string; names: Record<TLocale, string> }>('SELECT id, names FROM payment_systems WHERE direction = $1', [direction])).map(
      (system) => [system.id, system.names[locale]],
    ),
  );
  const items: TPaymentRecord[] = [];
  for (const row of rows) {
    const purchase = purchases.get(row.id);
    items.push({
      ...(await paymentView(db, row, purchase?.buy_currency)),
      system: names.get(row.system_id) ?? row.system_id,
      quote: purchase ? await quoteView(db, purchase) : null,
    });
  }
  return { items, ...historyPaging(query, count!.total) };
}

/** A CSV line of a payment: flat, with its reason in words. */
export function paymentCsvRow(record: TPaymentRecord, locale: TLocale) {
  return {
    id: record.id,
    created_at: record.created_at,
    ps: record.ps,
    system: record.system,
    currency: record.currency,
    amount: record.amount,
    fee: record.fee,
    receive: record.receive,
    buy: record.quote?.buy ?? '',
    buy_receive: record.quote ? (record.quote.final_receive ?? record.quote.receive) : '',
    rate: record.quote ? (record.quote.final_rate ?? record.quote.rate) : '',
    state: record.state,
    reason: record.reason && isI18nKey(record.reason) ? translate(locale, record.reason) : (record.reason ?? ''),
  };
}
type TPaymentCsvColumn = keyof ReturnType<typeof paymentCsvRow>;
export const DEPOSIT_CSV_COLUMNS: TPaymentCsvColumn[] = ['id', 'created_at', 'system', 'currency', 'amount', 'fee', 'receive', 'state', 'reason'];
export const PURCHASE_CSV_COLUMNS: TPaymentCsvColumn[] = [
  'id',
  'created_at',
  'system',
  'currency',
  'amount',
  'fee',
  'buy',
  'buy_receive',
  'rate',
  'state',
  'reason',
];

/** GET /api/withdraw/history: the user's withdrawals, newest first, filtered and paged (or CSV rows). */
export async function withdrawHistory(db: Queryable, userId: string, query: TWithdrawHistoryQuery, locale: TLocale): Promise<THistoryPage<TWithdrawal>> {
  const { from, to } = dateBounds(query);
  const where = `user_id = $1 AND ($2::timestamptz IS NULL OR created_at >= $2) AND ($3::timestamptz IS NULL OR created_at < $3)
    AND ($4::text IS NULL OR currency = $4) AND ($5::text IS NULL OR state = $5)`;
  const params = [userId, from, to, query.currency ?? null, query.status ?? null];
  const { limit, offset } = historyWindow(query);
  const [count] = await db.query<{ total: number }>(`SELECT count(*)::int AS total FROM withdrawals WHERE ${where}`, params);
  const rows = await db.query<TWithdrawalRow>(
    `SELECT ${WITHDRAWAL_COLUMNS} FROM withdrawals WHERE ${where} ORDER BY created_at DESC, id DESC LIMIT ${limit} OFFSET ${offset}`,
    params,
  );
  const byCode = await currencies(db);
  return { items: rows.map((row) => formatWithdrawal(row, byCode.get(row.currency)?.precision ?? 0, locale)), ...historyPaging(query, count!.total) };
}

export const WITHDRAW_CSV_COLUMNS: Array<keyof TWithdrawal & string> = [
  'id',
  'created_at',
  'ps',
  'currency',
  'amount',
  'fee',
  'receive',
  'details',
  'state',
  'reason',
  'finished_at',
];
