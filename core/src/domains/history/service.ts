import type { FastifyReply } from 'fastify';
import { HISTORY_CSV_MAX_ROWS, formatAmount, translate, type THistoryQuery, type TExchangeRecord, type TLocale, type TTransferRecord } from '@obmen/shared';
import type { Queryable } from '../../db/index.ts';
import { AppError } from '../../errors.ts';
import { currencies, type TCurrency } from '../currencies/service.ts';
import { errorKey } from '../../money-errors.ts';

/** An exchange as money_exchange() and the exchanges table give it: amounts in minor units. */
export type TRawExchange = {
  id: string;
  batch_id: string | null;
  src: string;
  dst: string;
  amount: string;
  amount_receive: string;
  fee: string;
  rate: string;
  status: 'completed' | 'failed';
  error_code: string | null;
  created_at: string;
};

export function formatExchange(raw: TRawExchange, byCode: Map<string, TCurrency>, locale: TLocale): TExchangeRecord {
  const src = byCode.get(raw.src)?.precision ?? 0;
  const dst = byCode.get(raw.dst)?.precision ?? 0;
  return {
    id: raw.id,
    batch_id: raw.batch_id,
    src: raw.src,
    dst: raw.dst,
    amount: formatAmount(raw.amount, src),
    amount_receive: formatAmount(raw.amount_receive, dst),
    fee: formatAmount(raw.fee, src),
    rate: raw.rate,
    status: raw.status,
    error: raw.error_code ? translate(locale, errorKey(raw.error_code), { src: raw.src, dst: raw.dst, currency: raw.src }) : null,
    created_at: raw.created_at,
  };
}

export type THistoryPage<T> = { items: T[]; page: number; per_page: number; total: number; pages: number };

/** from/to as given (a UTC day, inclusive, or an instant) → [from, to) instants. */
export function dateBounds(query: Pick<THistoryQuery, 'from' | 'to'>): { from: string | null; to: string | null } {
  const parse = (text: string, field: 'from' | 'to') => {
    const dayOnly = /^\d{4}-\d{2}-\d{2}$/.test(text);
    const date = new Date(dayOnly ? `${text}T00:00:00Z` : text);
    if (Number.isNaN(date.getTime()) || (dayOnly && date.toISOString().slice(0, 10) !== text)) {
      throw new AppError('validation', { fields: { [field]: 'validation.invalid' } });
    }
    if (field === 'to') date.setTime(date.getTime() + (dayOnly ? 86_400_000 : 1));
    return date.toISOString();
  };
  return { from: query.from ? parse(query.from, 'from') : null, to: query.to ? parse(query.to, 'to') : null };
}

/** The page figures of an answer. */
export function historyPaging(query: Pick<THistoryQuery, 'page' | 'per_page'>, total: number) {
  return { page: query.page, per_page: query.per_page, total, pages: Math.max(1, Math.ceil(total / query.per_page)) };
}

/** CSV limits rows to the newest HISTORY_CSV_MAX_ROWS of the filter; JSON pages. */
export function historyWindow(query: Pick<THistoryQuery, 'page' | 'per_page' | 'format'>): { limit: number; offset: number } {
  return query.format === 'csv' ? { limit: HISTORY_CSV_MAX_ROWS, offset: 0 } : { limit: query.per_page, offset: (query.page - 1) * query.per_page };
}

/** GET /api/exchange/history: the user's exchanges (single ones and /exchange/all legs), newest first. */
export async function exchangeHistory(db: Queryable, userId: string, query: THistoryQuery, locale: TLocale): Promise<THistoryPage<TExchangeRecord>> {
  const { from, to } = dateBounds(query);
  const where = `user_id = $1 AND ($2::timestamptz IS NULL OR created_at >= $2) AND ($3::timestamptz IS NULL OR created_at < $3)
    AND ($4::text IS NULL OR src = $4 OR dst = $4) AND ($5::text IS NULL OR status = $5)`;
  const params = [userId, from, to, query.currency ?? null, query.status ?? null];
  const { limit, offset } = historyWindow(query);
  const [count] = await db.query<{ total: number }>(`SELECT count(*)::int AS total FROM exchanges WHERE ${where}`, params);
  const rows = await db.query<TRawExchange>(
    `SELECT id::text AS id, batch_id::text AS batch_id, src, dst, pay::text AS amount, receive::text AS amount_receive, fee::text AS fee,
            rate, status, error_code, iso_time(created_at) AS created_at
     FROM exchanges WHERE ${where} ORDER BY created_at DESC, id DESC LIMIT ${limit} OFFSET ${offset}`,
    params,
  );
  const byCode = await currencies(db);
  return { items: rows.map((row) => formatExchange(row, byCode, locale)), ...historyPaging(query, count!.total) };
}

/** GET /api/transfer/history: sent and received transfers, newest first; `direction` filters. */
export async function transferHistory(db: Queryable, userId: string, query: THistoryQuery): Promise<THistoryPage<TTransferRecord>> {
  const { from, to } = dateBounds(query);
  const where = `(t.sender_id = $1 OR t.recipient_id = $1)
    AND ($2::timestamptz IS NULL OR t.created_at >= $2) AND ($3::timestamptz IS NULL OR t.created_at < $3)
    AND ($4::text IS NULL OR t.currency = $4) AND ($5::text IS NULL OR t.status = $5)
    AND ($6::text IS NULL OR ($6 = 'out') = (t.sender_id = $1))`;
  const params = [userId, from, to, query.currency ?? null, query.status ?? null, query.direction ?? null];
  const { limit, offset } = historyWindow(query);
  const [count] = await db.query<{ total: number }>(`SELECT count(*)::int AS total FROM transfers t WHERE ${where}`, params);
  const rows = await db.query<Omit<TTransferRecord, 'amount' | 'fee'> & { amount: string; fee: string }>(
    `SELECT t.id::text AS id, CASE WHEN t.sender_id = $1 THEN 'out' ELSE 'in' END AS direction, o.account_id,
            mask_person(o.first_name, o.last_name, o.email) AS name, t.currency, t.amount::text AS amount,
            CASE WHEN t.sender_id = $1 THEN t.fee ELSE 0 END::text AS fee, t.comment, t.status, iso_time(t.created_at) AS created_at
     FROM transfers t JOIN users o ON o.id = CASE WHEN t.sender_id = $1 THEN t.recipient_id ELSE t.sender_id END
     WHERE ${where} ORDER BY t.created_at DESC, t.id DESC LIMIT ${limit} OFFSET ${offset}`,
    params,
  );
  const byCode = await currencies(db);
  return {
    items: rows.map((row) => {
      const precision = byCode.get(row.currency)?.precision ?? 0;
      return { ...row, account_id: Number(row.account_id), amount: formatAmount(row.amount, precision), fee: formatAmount(row.fee, precision) };
    }),
    ...historyPaging(query, count!.total),
  };
}

// ---- CSV ------------------------------------------------------------------------------------

/** One CSV cell: quoted when needed; a leading = + - @ (spreadsheet formula) is defused with '. */
export function csvCell(value: unknown): string {
  let text = value === null || value === undefined ? '' : String(value);
  if (/^[=+\-@\t\r]/.test(text) && !/^-?\d+(\.\d+)?$/.test(text)) text = `'${text}`;
  return /[",\r\n;]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
}

function toCsv<T extends Record<string, unknown>>(columns: Array<keyof T & string>, rows: T[]): string {
  return [columns.join(','), ...rows.map((row) => columns.map((column) => csvCell(row[column])).join(','))].join('\r\n') + '\r\n';
}

/** A history's `format=csv` answer: a download named `filename`. */
export function sendCsv<T extends Record<string, unknown>>(reply: FastifyReply, filename: string, columns: Array<keyof T & string>, rows: T[]) {
  return reply.type('text/csv; charset=utf-8').header('content-disposition', `attachment; filename="${filename}"`).send(toCsv(columns, rows));
}

export const EXCHANGE_CSV_COLUMNS: Array<keyof TExchangeRecord & string> = [
  'id',
  'created_at',
  'src',
  'dst',
  'amount',
  'amount_receive',
  'fee',
  'rate',
  'status',
  'batch_id',
  'error',
];
export const TRANSFER_CSV_COLUMNS: Array<keyof TTransferRecord & string> = [
  'id',
  'created_at',
  'direction',
  'account_id',
  'name',
  'currency',
  'amount',
  'fee',
  'status',
  'comment',
];
