import { qrPath } from '@obmen/shared/qr';
import {
  SIGN_IN_CHALLENGE_TRIES,
  SIGN_IN_CHALLENGE_TTL_S,
  translate,
  type TLocale,
  type TSecurityResponse,
  type TSessionInfo,
  type TSignInRecord,
  type TTotpSetupResponse,
} from '@obmen/shared';
import type { Db, Queryable } from '../../db/index.ts';
import { AppError, notFoundOf } from '../../errors.ts';
import { hashToken, isTokenShaped, newToken } from '../../lib/tokens.ts';
import { queueMail } from '../../mail/outbox.ts';
import { consumeRateLimit } from '../../rate-limit.ts';
import { describeDevice } from './device.ts';
import { addPasskey, deletePasskey, listPasskeys } from './passkeys.ts';
import {
  RECOVERY_CODE_COUNT,
  issueRecoveryCodes,
  markSecurityChanged,
  revokeAllApiKeys,
  secondFactorEnabled,
  totpEnabled,
  verifySecondFactor,
  withdrawalsBlockedUntil,
  type TSecondFactorProof,
} from './second-factor.ts';
import { matchTotp, newTotpSecret, otpauthUri } from './totp.ts';

/** The signed-in user a security call acts for. */
export type TSecurityUser = { id: string; email: string; locale: TLocale; account_id: number };
export type TSecurityDeps = { db: Db; mailer: { kick: () => void }; now: () => Date };
export type TSignInMeta = { ip?: string | undefined; userAgent?: string | undefined };
export type TSignInMethod = TSignInRecord['method'];

/** The sign-ins shown: those of the last 90 days (the log keeps no more), the newest 100 of them. */
const SIGN_INS_SHOWN = 100;

// ---- the sign-in log ---------------------------------------------------------------------------

/** One attempt on a known account. Failures are written outside any transaction that rolls back. */
export async function recordSignIn(
  db: Queryable,
  userId: string,
  meta: TSignInMeta,
  method: TSignInMethod,
  outcome: { success: true } | { success: false; failure: 'password' | 'code' | 'expired' },
): Promise<void> {
  await db.query('INSERT INTO sign_ins (user_id, ip, user_agent, method, success, failure) VALUES ($1, $2, $3, $4, $5, $6)', [
    userId,
    meta.ip ?? null,
    meta.userAgent?.slice(0, 512) ?? null,
    method,
    outcome.success,
    outcome.success ? null : outcome.failure,
  ]);
}

/** Housekeeping: sign-ins older than 90 days, and challenges ended a day ago. */
export async function purgeSignIns(db: Queryable): Promise<void> {
  await db.query(`DELETE FROM sign_ins WHERE at < now() - interval '90 days'`);
  await db.query(`DELETE FROM sign_in_challenges WHERE expires_at < now() - interval '1 day'`);
}

// ---- the second step of a password sign-in -------------------------------------------------------

/** The password was right and 2FA is on: a single-use token for the second step, and whether it takes a typed code. */
export async function openSignInChallenge(db: Queryable, userId: string, totp: boolean): Promise<{ challenge: string; expires_in: number; totp: boolean }> {
  const challenge = newToken();
  await db.query(`INSERT INTO sign_in_challenges (token_hash, user_id, expires_at) VALUES ($1, $2, now() + $3::int * interval '1 second')`, [
    hashToken(challenge),
    userId,
    SIGN_IN_CHALLENGE_TTL_S,
  ]);
  return { challenge, expires_in: SIGN_IN_CHALLENGE_TTL_S, totp };
}

/** The user of a live challenge with tries left (`count`: this is one of its tries), else 400 `challenge_invalid`. */
async function liveSignInChallenge(db: Queryable, challenge: string, count: boolean): Promise<{ id: string; user_id: string }> {
  if (!isTokenShaped(challenge)) throw new AppError('challenge_invalid');
  const [row] = await db.query<{ id: string; user_id: string }>(
    `UPDATE sign_in_challenges SET attempts = attempts + $3
     WHERE token_hash = $1 AND used_at IS NULL AND expires_at > now() AND attempts < $2
     RETURNING id::text, user_id::text`,
    [hashToken(challenge), SIGN_IN_CHALLENGE_TRIES, count ? 1 : 0],
  );
  if (!row) throw new AppError('challenge_invalid');
  return row;
}

/**
 * The passkey's challenge of a pending sign-in: only its own user's passkeys may answer it (a
 * second-factor challenge of that user). A token that is not a live challenge answers
 * `challenge_invalid` whoever it might have been, so nothing is told about other accounts.
 */
export async function signInChallengeOwner(db: Queryable, challenge: string): Promise<string> {
  return (await liveSignInChallenge(db, challenge, false)).user_id;
}

/**
 * Checks the proof of a challenge: a typed code or a passkey's assertion. Each try is counted on
 * the challenge (5 at most) and on the user's second-factor limit; a good proof returns the user,
 * and the caller spends the challenge with `spendSignInChallenge` in the transaction that makes
 * the session.
 */
export async function checkSignInChallenge(
  db: Db,
  challenge: string,
  proof: TSecondFactorProof,
  meta: TSignInMeta,
  nowMs: number,
): Promise<{ userId: string; challengeId: string }> {
  const row = await liveSignInChallenge(db, challenge, true);
  try {
    await verifySecondFactor(db, row.user_id, proof, nowMs);
  } catch (err) {
    if (err instanceof AppError && (err.code === 'second_factor_invalid' || err.code === 'passkey_invalid')) {
      await recordSignIn(db, row.user_id, meta, 'second_factor', { success: false, failure: 'code' });
    }
    throw err;
  }
  return { userId: row.user_id, challengeId: row.id };
}

export async function spendSignInChallenge(tx: Queryable, challengeId: string): Promise<void> {
  const [spent] = await tx.query('UPDATE sign_in_challenges SET used_at = now() WHERE id = $1 AND used_at IS NULL RETURNING id', [challengeId]);
  if (!spent) throw new AppError('challenge_invalid');
}

// ---- what /settings/security shows ---------------------------------------------------------------

export async function getSecurityOverview(db: Queryable, userId: string, currentSessionId: string | null): Promise<TSecurityResponse> {
  const [[factor], passkeys, sessions, signIns, blocked] = await Promise.all([
    db.query<{ enabled_at: string | null; left: number }>(
      `SELECT iso_time(t.enabled_at) AS enabled_at,
              (SELECT count(*)::int FROM recovery_codes r WHERE r.user_id = $1 AND r.used_at IS NULL) AS left
       FROM (SELECT 1) one LEFT JOIN user_totp t ON t.user_id = $1 AND t.enabled_at IS NOT NULL`,
      [userId],
    ),
    listPasskeys(db, userId),
    db.query<{ id: string; ip: string | null; user_agent: string | null; created_at: string; last_seen_at: string }>(
      `SELECT id::text, ip, user_agent, iso_time(created_at) AS created_at, iso_time(last_seen_at) AS last_seen_at
       FROM sessions WHERE user_id = $1 AND revoked_at IS NULL AND expires_at > now() ORDER BY last_seen_at DESC, id DESC`,
      [userId],
    ),
    db.query<{ at: string; ip: string | null; user_agent: string | null; method: TSignInMethod; success: boolean; failure: TSignInRecord['failure'] }>(
      `SELECT iso_time(at) AS at, ip, user_agent, method, success, failure FROM sign_ins WHERE user_id = $1 AND at > now() - interval '90 days'
        ORDER BY id DESC LIMIT $2`,
      [userId, SIGN_INS_SHOWN],
    ),
    withdrawalsBlockedUntil(db, userId),
  ]);
  const enabled = Boolean(factor?.enabled_at);
  return {
    status: 'ok',
    second_factor: { enabled, enabled_at: factor?.enabled_at ?? null, recovery_codes_left: enabled ? (factor?.left ?? 0) : 0, passkeys: passkeys.length },
    passkeys,
    sessions: sessions.map(
      (s): TSessionInfo => ({
        id: s.id,
        device: describeDevice(s.user_agent),
        ip: s.ip,
        created_at: s.created_at,
        last_seen_at: s.last_seen_at,
        current: s.id === currentSessionId,
      }),
    ),
    sign_ins: signIns.map(({ user_agent, ...rest }) => ({ ...rest, device: describeDevice(user_agent) })),
    withdrawals_blocked_until: blocked?.toISOString() ?? null,
  };
}

// ---- sessions ----------------------------------------------------------------------------------

/** Signs one of the user's own sessions out; another user's (or a dead one) is 404. */
export async function revokeOwnSession(db: Queryable, userId: string, sessionId: string): Promise<void> {
  const [row] = await db.query(
    'UPDATE sessions SET revoked_at = now() WHERE id = $1 AND user_id = $2 AND revoked_at IS NULL AND expires_at > now() RETURNING id',
    [sessionId, userId],
  );
  if (!row) throw notFoundOf('session');
}

/** "Sign out everywhere else": every live session of the user but this one. */
export async function revokeOtherSessions(db: Queryable, userId: string, currentSessionId: string | null): Promise<number> {
  const rows = await db.query('UPDATE sessions SET revoked_at = now() WHERE user_id = $1 AND revoked_at IS NULL AND id IS DISTINCT FROM $2 RETURNING id', [
    userId,
    currentSessionId,
  ]);
  return rows.length;
}

// ---- TOTP enrolment ----------------------------------------------------------------------------

/**
 * Starts (or restarts) an enrolment: a new secret, not yet in force. With 2FA already on it is
 * refused (turn it off first, with a code).
 */
export async function startTotpSetup(db: Queryable, user: TSecurityUser): Promise<TTotpSetupResponse> {
  const secret = newTotpSecret();
  const [row] = await db.query(
    `INSERT INTO user_totp (user_id, secret) VALUES ($1, $2)
     ON CONFLICT (user_id) DO UPDATE SET secret = EXCLUDED.secret, created_at = now(), last_step = 0 WHERE user_totp.enabled_at IS NULL
     RETURNING user_id`,
    [user.id, secret],
  );
  if (!row) throw new AppError('second_factor_enabled');
  const uri = otpauthUri(secret, user.email);
  return { status: 'ok', secret, otpauth_uri: uri, qr: qrPath(uri) };
}

/** Confirms an enrolment with a code of the new secret: 2FA is on, ten recovery codes are handed out. */
export async function enableTotp(
  deps: TSecurityDeps,
  user: TSecurityUser,
  code: string,
  locale: TLocale,
): Promise<{ status: 'ok'; message: string; recovery_codes: string[] }> {
  const [pending] = await deps.db.query<{ secret: string; enabled: boolean }>(
    'SELECT secret, enabled_at IS NOT NULL AS enabled FROM user_totp WHERE user_id = $1',
    [user.id],
  );
  if (!pending) throw new AppError('second_factor_not_started');
  if (pending.enabled) throw new AppError('second_factor_enabled');
  await consumeRateLimit(deps.db, 'second_factor_user', user.id);
  const step = matchTotp(pending.secret, code.replace(/\s/g, ''), deps.now().getTime(), 0);
  if (step === null) throw new AppError('second_factor_invalid');
  const codes = await deps.db.transaction(async (tx) => {
    const [enabled] = await tx.query(
      'UPDATE user_totp SET enabled_at = now(), last_step = $3 WHERE user_id = $1 AND secret = $2 AND enabled_at IS NULL RETURNING user_id',
      [user.id, pending.secret, step],
    );
    if (!enabled) throw new AppError('second_factor_not_started');
    const issued = await issueRecoveryCodes(tx, user.id);
    await queueMail(tx, { kind: 'second_factor_enabled', to: user.email, locale: user.locale, vars: { account_id: user.account_id } });
    return issued;
  });
  deps.mailer.kick();
  return { status: 'ok', message: translate(locale, 'security.enabled', { count: RECOVERY_CODE_COUNT }), recovery_codes: codes };
}

/**
 * Turns the TOTP app off with a code (TOTP or recovery) or a passkey; withdrawals then wait 24
 * hours. The passkeys stay (and with them the second factor).
 */
export async function disableTotp(
  deps: TSecurityDeps,
  user: TSecurityUser,
  proof: TSecondFactorProof,
  locale: TLocale,
): Promise<{ status: 'ok'; message: string }> {
  if (!(await totpEnabled(deps.db, user.id))) throw new AppError('second_factor_not_enabled');
  await verifySecondFactor(deps.db, user.id, proof, deps.now().getTime());
  await deps.db.transaction((tx) => removeSecondFactor(tx, user, { passkeys: false }));
  deps.mailer.kick();
  return { status: 'ok', message: translate(locale, 'security.disabled') };
}

/**
 * 2FA off, by the user with a code (the TOTP app only) or by two operators after a lost device
 * (`passkeys: true`: the passkeys go too, or they would still be asked for): the secret and the
 * recovery codes go, withdrawals wait 24 hours, and the user is told by mail (the caller kicks
 * the mailer after its transaction).
 */
export async function removeSecondFactor(
  tx: Queryable,
  user: Pick<TSecurityUser, 'id' | 'email' | 'locale' | 'account_id'>,
  what: { passkeys: boolean },
): Promise<void> {
  await tx.query('DELETE FROM user_totp WHERE user_id = $1', [user.id]);
  await tx.query('DELETE FROM recovery_codes WHERE user_id = $1', [user.id]);
  if (what.passkeys) await tx.query('DELETE FROM user_passkeys WHERE user_id = $1', [user.id]);
  // Keys for bots exist only under a second factor: with none left, they stop.
  if (!(await secondFactorEnabled(tx, user.id))) await revokeAllApiKeys(tx, user.id);
  await markSecurityChanged(tx, user.id);
  await queueMail(tx, { kind: 'second_factor_disabled', to: user.email, locale: user.locale, vars: { account_id: user.account_id } });
}

/** Ten new recovery codes for a code (the old ones stop working). */
export async function renewRecoveryCodes(deps: TSecurityDeps, user: TSecurityUser, proof: TSecondFactorProof, locale: TLocale) {
  if (!(await totpEnabled(deps.db, user.id))) throw new AppError('second_factor_not_enabled');
  await verifySecondFactor(deps.db, user.id, proof, deps.now().getTime());
  const codes = await deps.db.transaction((tx) => issueRecoveryCodes(tx, user.id));
  return { status: 'ok' as const, message: translate(locale, 'security.codes_renewed', { count: RECOVERY_CODE_COUNT }), recovery_codes: codes };
}

// ---- passkeys ----------------------------------------------------------------------------------

/**
 * Keeps a new passkey: with 2FA on (TOTP or an earlier passkey) only after the second factor (a
 * stolen session alone cannot add a key that would then pass for it). A security change: withdrawals wait 24 hours, and
 * the user is told by mail.
 */
export async function enrolPasskey(
  deps: TSecurityDeps,
  user: TSecurityUser,
  body: { name: string; credential: string } & TSecondFactorProof,
  locale: TLocale,
): Promise<{ status: 'ok'; message: string }> {
  const now = deps.now();
  await verifySecondFactor(deps.db, user.id, body, now.getTime());
  await deps.db.transaction(async (tx) => {
    await addPasskey(tx, user.id, body.name, body.credential, now);
    await markSecurityChanged(tx, user.id);
    await queueMail(tx, { kind: 'passkey_added', to: user.email, locale: user.locale, vars: { account_id: user.account_id, name: body.name } });
  });
  deps.mailer.kick();
  return { status: 'ok', message: translate(locale, 'security.passkey_added') };
}

/** Removes one of the user's passkeys, after the second factor (this passkey or another, or a code). */
export async function removePasskey(
  deps: TSecurityDeps,
  user: TSecurityUser,
  id: string,
  proof: TSecondFactorProof,
  locale: TLocale,
): Promise<{ status: 'ok'; message: string }> {
  await verifySecondFactor(deps.db, user.id, proof, deps.now().getTime());
  await deps.db.transaction(async (tx) => {
    await deletePasskey(tx, user.id, id);
    // The last factor gone (no TOTP either): keys for bots, which live only under one, stop.
    if (!(await secondFactorEnabled(tx, user.id))) await revokeAllApiKeys(tx, user.id);
  });
  return { status: 'ok', message: translate(locale, 'security.passkey_removed') };
}
