import { formatAmount, stripTrailingZeros, type TI18nKey } from '@obmen/shared';
import { AppError, ERRORS, isErrorCode, type TErrorCode } from './errors.ts';

/**
 * The errors of all money code: refusals raised by the SQL functions (core/sql/functions) carry SQLSTATE 'OB000', the error
 * code as message and a JSON detail; they become AppErrors here. 'OB9xx' are broken ledger
 * rules (unbalanced, append-only): internal errors, never the user's fault.
 */
const BUSINESS_SQLSTATE = 'OB000';

/** Amount-valued members of a refusal: read in the message without trailing zeros ("The minimum is 1 USDT"). */
const AMOUNT_VARS = ['balance', 'needed', 'min', 'max', 'fee'];
const DECIMAL = /^-?\d+\.\d+$/;

type TPrecisionOf = (currency: string) => number | undefined;

/** A money refusal; amounts in its message read without trailing zeros ("The minimum is 1 USDT"). */
export function moneyError(code: TErrorCode, vars: Record<string, string | number> = {}, field?: string): AppError {
  const shown = { ...vars };
  for (const member of AMOUNT_VARS) {
    const value = shown[member];
    if (typeof value === 'string' && DECIMAL.test(value)) shown[member] = stripTrailingZeros(value);
  }
  return new AppError(code, { vars: shown, ...(field ? { field } : {}) });
}

/** The i18n key of an error code stored with a failed exchange leg or history row. */
export function errorKey(code: string): TI18nKey {
  return isErrorCode(code) ? ERRORS[code].key : ERRORS.internal.key;
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
  return isErrorCode(pg.message) ? moneyError(pg.message, vars, field) : err;
}

const RETRYABLE = new Set(['40P01', '40001']);
/**
 * Bounds of the retries: attempts and time. Under READ COMMITTED (the default) only a rare
 * deadlock retries. Under SERIALIZABLE or REPEATABLE READ every wait on a row lock ends in a
 * serialization failure, about every second attempt on hot rows (core/test/domains/ledger/faults.test.ts):
 * six attempts let 3 % of the calls reach the client as "busy", so the budget is time, with a
 * growing random back-off that spreads the contenders apart.
 */
export const MAX_ATTEMPTS = 30;
const RETRY_BUDGET_MS = 5_000;
const MAX_BACKOFF_MS = 200;

export function isRetryable(err: unknown): boolean {
  return RETRYABLE.has((err as TPgError)?.code ?? '');
}

/**
 * Deadlocks and serialization failures are retried here, within MAX_ATTEMPTS and
 * RETRY_BUDGET_MS, with a random back-off; they never reach a client. Accounts are locked in a
 * fixed order, so under READ COMMITTED this is the second line: it should almost never run.
 */
export async function withRetry<T>(work: () => Promise<T>, attempts = MAX_ATTEMPTS): Promise<T> {
  const started = Date.now();
  for (let attempt = 1; ; attempt++) {
    try {
      return await work();
    } catch (err) {
      if (!isRetryable(err)) throw err;
      if (attempt >= attempts || Date.now() - started > RETRY_BUDGET_MS) {
        throw new AppError('busy', { headers: { 'retry-after': '1' } });
      }
      await new Promise((resolve) => setTimeout(resolve, Math.random() * Math.min(MAX_BACKOFF_MS, 2 ** attempt)));
    }
  }
}
