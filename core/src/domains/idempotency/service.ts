import { createHash } from 'node:crypto';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { IDEMPOTENCY_HEADER, IDEMPOTENCY_KEY_PATTERN, REPLAYED_HEADER } from '@obmen/shared';
import type { Db, Queryable } from '../../db/index.ts';
import { AppError } from '../../errors.ts';
import { fromDbError, withRetry } from '../../money-errors.ts';

/**
 * Idempotency of money-moving POSTs, one mechanism for all of them: the client sends
 * `Idempotency-Key` once per submitted form; the SQL function idempotency_claim()
 * (core/sql/functions) claims one row per (user, key) FIRST in the database transaction that
 * moves the money, and idempotency_store() keeps the answer with it before commit:
 *   - a new key applies the request and stores its answer;
 *   - a concurrent duplicate blocks on the row's unique index until the first commits, then
 *     replays the stored answer (20 at once: one applies, 19 replay);
 *   - if the first attempt fails, it rolls back and leaves no row: the key is free again;
 *   - the same key with another request (hash of route + normalized body) is refused (422).
 * A call that is one SQL function (money_transfer_many, exchange_execute) claims and stores inside
 * it, in one round trip; a call made of several statements goes through runIdempotent().
 */

/** The header of a money-moving request, required and well-formed. */
export function idempotencyKeyOf(request: FastifyRequest): string {
  const raw = request.headers[IDEMPOTENCY_HEADER];
  const key = Array.isArray(raw) ? raw[0] : raw;
  if (key === undefined || key === '') throw new AppError('idempotency_key_required');
  if (!IDEMPOTENCY_KEY_PATTERN.test(key)) throw new AppError('idempotency_key_invalid');
  return key;
}

/** A money route's call with the request's key; an answer replayed from the first run says so in its header. */
export async function callWithIdempotencyKey<T extends { replayed: boolean }>(
  request: FastifyRequest,
  reply: FastifyReply,
  call: (key: string) => Promise<T>,
): Promise<T> {
  const done = await call(idempotencyKeyOf(request));
  if (done.replayed) reply.header(REPLAYED_HEADER, 'true');
  return done;
}

/** Stable JSON: object keys sorted, bigints as decimal strings. */
function canonical(value: unknown): string {
  if (typeof value === 'bigint') return JSON.stringify(value.toString());
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
  if (value && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, v]) => v !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonical(v)}`).join(',')}}`;
  }
  return JSON.stringify(value ?? null);
}

/** What "the same request" means: the operation and its normalized input. */
export function requestHash(scope: string, payload: unknown): string {
  return createHash('sha256').update(scope).update('\n').update(canonical(payload)).digest('hex');
}

export type TIdempotent = { userId: string; key: string; scope: string; payload: unknown };

/**
 * Runs `work` once per (user, key) inside one database transaction that starts by claiming
 * the key; returns its result, or the stored result of the first run (`replayed: true`).
 * `work` must return plain JSON (it is stored as jsonb). Deadlocks are retried.
 */
export async function runIdempotent<T>(db: Db, request: TIdempotent, work: (tx: Queryable) => Promise<T>): Promise<{ result: T; replayed: boolean }> {
  const hash = requestHash(request.scope, request.payload);
  return withRetry(() =>
    db.transaction(async (tx) => {
      const [claim] = await tx
        .query<{ stored: T | null }>('SELECT idempotency_claim($1, $2, $3) AS stored', [request.userId, request.key, hash])
        .catch((err: unknown) => {
          throw fromDbError(err, () => undefined);
        });
      if (claim!.stored !== null) return { result: claim!.stored, replayed: true };
      const result = await work(tx);
      await tx.query('SELECT idempotency_store($1, $2, $3::jsonb)', [request.userId, request.key, JSON.stringify(result)]);
      return { result, replayed: false };
    }),
  );
}

/** Keys older than this are forgotten (a client retries within minutes, not days). */
export const IDEMPOTENCY_KEY_TTL_HOURS = 48;

export async function purgeIdempotencyKeys(db: Queryable): Promise<void> {
  await db.query(`DELETE FROM idempotency_keys WHERE created_at < now() - $1::int * interval '1 hour'`, [IDEMPOTENCY_KEY_TTL_HOURS]);
}
