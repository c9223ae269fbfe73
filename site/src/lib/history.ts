import type { TExchangeRecord, TPaymentRecord, TTransferRecord, TWithdrawal } from '@obmen/shared';
import { buildPath, CALLS } from '@obmen/shared/calls';
import { callCore, CoreError, type TCoreCall, type TCoreLocals } from './core.ts';

/** Spec §2: /history has the tabs exchange, transfer and payment, and these children. */
export const HISTORY_TABS = ['exchange', 'transfer', 'payment'] as const;
export const HISTORY_KINDS = ['deposit', 'exchange', 'payment', 'referral', 'transfer', 'withdraw'] as const;
export type THistoryKind = (typeof HISTORY_KINDS)[number];

/** The kinds whose table the core serves (GET /api/{kind}/history). */
export type THistoryTable = 'exchange' | 'transfer' | 'withdraw' | 'deposit' | 'payment';
const HISTORY_TABLES: readonly string[] = ['exchange', 'transfer', 'withdraw', 'deposit', 'payment'] satisfies THistoryTable[];

export function isHistoryTable(kind: string): kind is THistoryTable {
  return HISTORY_TABLES.includes(kind);
}

export function isHistoryKind(value: string): value is THistoryKind {
  return (HISTORY_KINDS as readonly string[]).includes(value);
}

export type THistoryPage<T> = { items: T[]; page: number; per_page: number; total: number; pages: number };

export type THistoryLoad =
  | { kind: 'exchange'; filters: URLSearchParams; page: number; data: THistoryPage<TExchangeRecord> | null; error: string; fields: Record<string, string> }
  | { kind: 'transfer'; filters: URLSearchParams; page: number; data: THistoryPage<TTransferRecord> | null; error: string; fields: Record<string, string> }
  | { kind: 'withdraw'; filters: URLSearchParams; page: number; data: THistoryPage<TWithdrawal> | null; error: string; fields: Record<string, string> }
  | {
      kind: 'deposit' | 'payment';
      filters: URLSearchParams;
      page: number;
      data: THistoryPage<TPaymentRecord> | null;
      error: string;
      fields: Record<string, string>;
    }
  | {
      kind: Exclude<THistoryKind, THistoryTable>;
      filters: URLSearchParams;
      page: number;
      data: null;
      error: string;
      fields: Record<string, string>;
    };

/** The filters each table understands (the core's ZHistoryQuery), read from the page's query string. */
const FILTERS: Record<THistoryTable, readonly string[]> = {
  exchange: ['from', 'to', 'currency', 'status', 'per_page'],
  withdraw: ['from', 'to', 'currency', 'status', 'per_page'],
  deposit: ['from', 'to', 'currency', 'status', 'per_page'],
  payment: ['from', 'to', 'currency', 'status', 'per_page'],
  transfer: ['from', 'to', 'currency', 'status', 'direction', 'per_page'],
};

export function historyFilters(kind: THistoryTable, url: URL): URLSearchParams {
  const query = new URLSearchParams();
  for (const name of FILTERS[kind]) {
    const value = url.searchParams.get(name)?.trim();
    if (value) query.set(name, value.slice(0, 40));
  }
  return query;
}

/** The call behind each table (GET /api/{kind}/history). */
const HISTORY_CALLS = {
  exchange: CALLS['GET /api/exchange/history'],
  transfer: CALLS['GET /api/transfer/history'],
  withdraw: CALLS['GET /api/withdraw/history'],
  deposit: CALLS['GET /api/deposit/history'],
  payment: CALLS['GET /api/payment/history'],
} as const satisfies Record<THistoryTable, unknown>;

/** The API address of a table: JSON for a page, or the CSV export of every filtered row. */
export function historyApiPath(kind: THistoryTable, filters: URLSearchParams, extra: Record<string, string>): string {
  return buildPath(HISTORY_CALLS[kind], { query: { ...Object.fromEntries(filters), ...extra } });
}

/** One page of a history table from the core; a refused filter comes back as messages, not a 500. */
export async function loadHistory(locals: TCoreLocals, kind: THistoryKind, url: URL, call: TCoreCall): Promise<THistoryLoad> {
  const pageText = url.searchParams.get('page') ?? '1';
  const page = /^\d{1,7}$/.test(pageText) && Number(pageText) >= 1 ? Number(pageText) : 1;
  if (!isHistoryTable(kind)) return { kind, filters: new URLSearchParams(), page, data: null, error: '', fields: {} };
  const filters = historyFilters(kind, url);
  try {
    const input = { ...call, query: { ...Object.fromEntries(filters), page: String(page) } };
    const loaded = { filters, page, error: '', fields: {} };
    // One case per table: each pairs its kind with the answer of its own call.
    switch (kind) {
      case 'exchange':
        return { ...loaded, kind, data: await callCore(locals, HISTORY_CALLS.exchange, input) };
      case 'transfer':
        return { ...loaded, kind, data: await callCore(locals, HISTORY_CALLS.transfer, input) };
      case 'withdraw':
        return { ...loaded, kind, data: await callCore(locals, HISTORY_CALLS.withdraw, input) };
      case 'deposit':
      case 'payment':
        return { ...loaded, kind, data: await callCore(locals, HISTORY_CALLS[kind], input) };
    }
  } catch (err) {
    if (!(err instanceof CoreError && err.status === 400)) throw err;
    const body = err.body as { message?: string; fields?: Record<string, string> } | null;
    return { kind, filters, page, data: null, error: body?.message ?? '', fields: body?.fields ?? {} };
  }
}
