import { AppError } from '../errors.ts';

/** Seconds a client is asked to wait after a 503 for a database that is down or too slow. */
export const DATABASE_RETRY_AFTER_S = 5;

/**
 * SQLSTATEs that mean "the database cannot answer now", not "this request is wrong": class 08
 * (connection exception), server shutting down or starting (57P01-57P03), out of connection
 * slots (53300), and a statement cut by statement_timeout (57014).
 */
const UNAVAILABLE_SQLSTATE = /^(08|57P0[123]$|53300$|57014$)/;
/** Socket errors and the driver's own messages for a lost or unobtainable connection. */
const UNAVAILABLE_ERRNO = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'ENOTFOUND', 'EHOSTUNREACH', 'EAI_AGAIN']);
const UNAVAILABLE_MESSAGE = /Connection terminated|timeout exceeded when trying to connect|not queryable|Connection ended unexpectedly/;

export function isConnectionFailure(err: unknown): boolean {
  const { code, message } = (err ?? {}) as { code?: unknown; message?: unknown };
  if (typeof code === 'string' && (UNAVAILABLE_SQLSTATE.test(code) || UNAVAILABLE_ERRNO.has(code))) return true;
  return typeof message === 'string' && UNAVAILABLE_MESSAGE.test(message);
}

/** What a request gets while the database is unreachable: 503 with Retry-After, localized. */
export function databaseUnavailable(cause: unknown): AppError {
  const err = new AppError('database_unavailable', {
    headers: { 'retry-after': String(DATABASE_RETRY_AFTER_S) },
  });
  err.cause = cause;
  return err;
}

export function isDatabaseUnavailable(err: unknown): boolean {
  return err instanceof AppError && err.code === 'database_unavailable';
}

type TOutageLog = { warn: (obj: object, msg: string) => void; info: (obj: object, msg: string) => void };

/**
 * One log line when the database stops answering and one when it answers again, however many
 * requests fail in between (each of them gets a 503, none logs a stack).
 */
export function trackOutage(log: TOutageLog, now: () => number = Date.now) {
  let downSince: number | null = null;
  return {
    failed(cause: unknown): void {
      if (downSince !== null) return;
      downSince = now();
      const { code, message } = (cause ?? {}) as { code?: unknown; message?: unknown };
      log.warn({ code, reason: message }, 'database unavailable: answering 503 until it is back');
    },
    succeeded(): void {
      if (downSince === null) return;
      log.info({ outageMs: now() - downSince }, 'database available again');
      downSince = null;
    },
  };
}
