import { createHash } from 'node:crypto';
import type { FastifyRequest } from 'fastify';
import { IDEMPOTENCY_HEADER, IDEMPOTENCY_KEY_PATTERN } from '@obmen/shared';
import type { Db, Queryable } from '../../db/index.ts';
import { AppError } from '../../errors.ts';
import { moneyError, withRetry } from '../../money-errors.ts';

/**
 * Idempotency of money-moving POSTs. The client sends `Idempotency-Key` once per submitted
 * form; core keeps one row per (user, key), inserted FIRST in the same database transaction
 * as the money movement:
 *   - a new key applies the request and stores its answer with the row;
 *   - a concurrent duplicate blocks on the row's unique index until the first commits, then
 *     finds it and replays the stored answer (20 at once: one applies, 19 replay);
 *   - if the first attempt fails, it rolls back and leaves no row: the key is free again;
 *   - the same key with another request (hash of route + normalized body) is refused (422).
 */

/** The header of a money-moving request, required and well-formed. */
export function idempotencyKeyOf(request: FastifyRequest): string {
  const raw = request.headers[IDEMPOTENCY_HEADER];
  const key = Array.isArray(raw) ? raw[0] : raw;
  if (key === undefined || key === '') throw new AppError('idempotency_key_required');
  if (!IDEMPOTENCY_KEY_PATTERN.test(key)) throw new AppError('idempotency_key_invalid');
  return key;
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
 * `work` must return plain JSON (it is stored as jsonb), or store it itself (`storedByWork`: the
 * SQL function money_exchange does). Deadlocks are retried.
 */
export async function runIdempotent<T>(
  db: Db,
  request: TIdempotent,
  work: (tx: Queryable) => Promise<T>,
  options: { storedByWork?: boolean } = {},
): Promise<{ result: T; replayed: boolean }> {
  const hash = requestHash(request.scope, request.payload);
  return withRetry(() =>
    db.transaction(async (tx) => {
      const claimed = await tx.query(
        'INSERT INTO idempotency_keys (user_id, key, request_hash) VALUES ($1, $2, $3) ON CONFLICT DO NOTHING RETURNING 1 AS claimed',
        [request.userId, request.key, hash],
      );
      if (!claimed.length) {
        const [row] = await tx.query<{ request_hash: string; response: T | null }>(
          'SELECT request_hash, response FROM idempotency_keys WHERE user_id = $1 AND key = $2',
          [request.userId, request.key],
        );
        if (!row || row.request_hash !== hash || row.response === null) throw moneyError('idempotency_key_reused');
        return { result: row.response, replayed: true };
      }
      const result = await work(tx);
      // Work that stores its own answer (in the same SQL call that moves the money) saves a round trip under the row locks.
      if (options.storedByWork) return { result, replayed: false };
      await tx.query('UPDATE idempotency_keys SET response = $3::jsonb WHERE user_id = $1 AND key = $2', [
        request.userId,
        request.key,
        JSON.stringify(result),
      ]);
      return { result, replayed: false };
    }),
  );
}

/** Keys older than this are forgotten (a client retries within minutes, not days). */
export const IDEMPOTENCY_KEY_TTL_HOURS = 48;

export async function purgeIdempotencyKeys(db: Queryable): Promise<void> {
  await db.query(`DELETE FROM idempotency_keys WHERE created_at < now() - $1::int * interval '1 hour'`, [IDEMPOTENCY_KEY_TTL_HOURS]);
}
