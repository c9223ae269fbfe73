import { SESSION_TTL_S } from '@obmen/shared';
import { statement, type Queryable } from '../../db/index.ts';
import { hashToken, isTokenShaped, newToken } from '../../lib/tokens.ts';
import type { TAuthUser } from '../user/public.ts';
import { revokeAllApiKeys } from '../security/second-factor.ts';

export type TSession = { id: string; user: TAuthUser; renewed: boolean };

/**
 * Sliding expiry: a session used again is extended to SESSION_TTL_S from now, at most once a
 * day (no write per request). When extended, core sends the token again so the BFF refreshes
 * the cookie's Max-Age too.
 */
const RENEW_AFTER_S = 24 * 60 * 60;

export async function createSession(db: Queryable, userId: string, meta: { ip?: string; userAgent?: string } = {}): Promise<string> {
  const token = newToken();
  await db.query(
    `INSERT INTO sessions (token_hash, user_id, expires_at, ip, user_agent)
     VALUES ($1, $2, now() + $3::int * interval '1 second', $4, $5)`,
    [hashToken(token), userId, SESSION_TTL_S, meta.ip ?? null, meta.userAgent?.slice(0, 512) ?? null],
  );
  return token;
}

const FIND_SESSION = statement('session_find', 'SELECT * FROM session_find($1, $2)');

/** The live session of a token, or null (unknown, expired, revoked, malformed). */
export async function findSession(db: Queryable, token: string): Promise<TSession | null> {
  if (!isTokenShaped(token)) return null;
  // session_find() (core/sql/functions/session_find.sql): the same query with its plan kept per database session.
  const [row] = await db.query<TAuthUser & { session_id: string; renew: boolean }>(FIND_SESSION, [hashToken(token), RENEW_AFTER_S]);
  if (!row) return null;
  const { session_id, renew, ...user } = row;
  if (renew) {
    await db.query(`UPDATE sessions SET last_seen_at = now(), expires_at = now() + $2::int * interval '1 second' WHERE id = $1 AND revoked_at IS NULL`, [
      session_id,
      SESSION_TTL_S,
    ]);
  }
  return { id: session_id, user, renewed: renew };
}

export async function revokeSession(db: Queryable, sessionId: string): Promise<void> {
  await db.query('UPDATE sessions SET revoked_at = now() WHERE id = $1 AND revoked_at IS NULL', [sessionId]);
}

/** Password change and reset, "this wasn't me", an operator's block: every device of the user is signed out, and every bot's key. */
export async function revokeAllSessions(db: Queryable, userId: string): Promise<void> {
  await db.query('UPDATE sessions SET revoked_at = now() WHERE user_id = $1 AND revoked_at IS NULL', [userId]);
  await revokeAllApiKeys(db, userId);
}

export async function purgeSessions(db: Queryable): Promise<void> {
  await db.query(`DELETE FROM sessions WHERE expires_at < now() - interval '30 days' OR revoked_at < now() - interval '30 days'`);
}
