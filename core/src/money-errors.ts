import { formatAmount, stripTrailingZeros } from '@obmen/shared';
import { AppError } from './errors.ts';

/**
 * The errors of all money code: refusals raised by the SQL functions (core/sql/functions) carry SQLSTATE 'OB000', the error
 * code as message and a JSON detail; they become AppErrors here. 'OB9xx' are broken ledger
 * rules (unbalanced, append-only): internal errors, never the user's fault.
 */
const BUSINESS_SQLSTATE = 'OB000';

/**
 * code → [HTTP status, i18n key of the message (may use vars), form field to highlight, i18n key
 * of the field's message (no vars: the error handler localizes fields without them)].
 */
const REFUSALS: Record<string, [number, string, string | undefined, string | undefined]> = {
  insufficient_funds: [422, 'money.insufficient_funds', 'amount', 'money.field_insufficient_funds'],
  amount_not_positive: [422, 'money.amount_not_positive', 'amount', 'money.amount_not_positive'],
  amount_too_small: [422, 'money.amount_too_small', 'amount', 'money.field_too_small'],
  amount_too_large: [422, 'money.amount_too_large', 'amount', 'money.field_too_large'],
  currency_disabled: [422, 'money.currency_disabled', 'currency', 'money.field_unavailable'],
  pair_unavailable: [422, 'exchange.pair_unavailable', 'dst', 'money.field_unavailable'],
  same_currency: [422, 'exchange.same_currency', 'dst', 'exchange.same_currency'],
  recipient_not_found: [422, 'transfer.recipient_not_found', 'account_id', 'transfer.field_not_found'],
  transfer_to_self: [422, 'transfer.to_self', 'account_id', 'transfer.to_self'],
  idempotency_key_reused: [422, 'money.idempotency_key_reused', undefined, undefined],
  already_reversed: [409, 'money.already_reversed', undefined, undefined],
  transaction_not_found: [404, 'error.not_found', undefined, undefined],
};

/** Amount-valued members of a refusal: read in the message without trailing zeros ("The minimum is 1 USDT"). */
const AMOUNT_VARS = ['balance', 'needed', 'min', 'max'];
const DECIMAL = /^-?\d+\.\d+$/;

type TPrecisionOf = (currency: string) => number | undefined;

export function moneyError(code: string, vars: Record<string, string | number> = {}, field?: string): AppError {
  const [status, key, defaultField, fieldKey] = REFUSALS[code] ?? [422, `money.${code}`, undefined, undefined];
  const name = field ?? defaultField;
  const shown = { ...vars };
  for (const member of AMOUNT_VARS) {
    const value = shown[member];
    if (typeof value === 'string' && DECIMAL.test(value)) shown[member] = stripTrailingZeros(value);
  }
  return new AppError(code, status, key, { vars: shown, ...(name ? { fields: { [name]: fieldKey ?? key } } : {}) });
}

/** The i18n key of an error code, for failed legs and history rows. */
export function errorKey(code: string): string {
  const keys: Record<string, string> = {
    recipient_not_found: 'transfer.recipient_not_found',
    transfer_to_self: 'transfer.to_self',
    pair_unavailable: 'exchange.pair_unavailable',
    rates_unavailable: 'exchange.rates_unavailable',
    internal: 'error.internal',
    busy: 'money.busy',
  };
  return keys[code] ?? `money.${code}`;
}

type TPgError = { code?: string; message?: string; detail?: string };

/** A refusal from SQL as an AppError (amounts in the message in major units); anything else unchanged. */
export function fromDbError(err: unknown, precisionOf: TPrecisionOf, field?: string): unknown {
  const pg = err as TPgError;
  if (!pg || pg.code !== BUSINESS_SQLSTATE || !pg.message) return err;
  let detail: Record<string, string | number> = {};
  try {
    detail = pg.detail ? (JSON.parse(pg.detail) as Record<string, string | number>) : {};
  } catch {
    detail = {};
  }
  const precision = typeof detail.currency === 'string' ? precisionOf(detail.currency) : undefined;
  const vars: Record<string, string | number> = { ...detail };
  if (precision !== undefined) {
    for (const name of AMOUNT_VARS) {
      const value = detail[name];
      if (typeof value === 'string' && /^-?\d+$/.test(value)) vars[name] = formatAmount(value, precision);
    }
  }
  return moneyError(pg.message, vars, field);
}

const RETRYABLE = new Set(['40P01', '40001']);
export const MAX_ATTEMPTS = 6;

export function isRetryable(err: unknown): boolean {
  return RETRYABLE.has((err as TPgError)?.code ?? '');
}

/**
 * Deadlocks and serialization failures are retried here, a bounded number of times with a
 * short random back-off; they never reach a client. Accounts are locked in a fixed order, so
 * this is the second line: it should almost never run.
 */
export async function withRetry<T>(work: () => Promise<T>, attempts = MAX_ATTEMPTS): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await work();
    } catch (err) {
      if (!isRetryable(err)) throw err;
      if (attempt >= attempts) throw new AppError('busy', 503, 'money.busy', { headers: { 'retry-after': '1' } });
      await new Promise((resolve) => setTimeout(resolve, Math.random() * 10 * attempt));
    }
  }
}
