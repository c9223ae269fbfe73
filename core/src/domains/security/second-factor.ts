import { createHash, randomBytes } from 'node:crypto';
import type { TSecondFactorNeed } from '@obmen/shared';
import type { Db, Queryable } from '../../db/index.ts';
import { AppError } from '../../errors.ts';
import { consumeRateLimit } from '../../rate-limit.ts';
import { verifyPasskeyAssertion } from './passkeys.ts';
import { base32Encode, matchTotp } from './totp.ts';

/*
 * The second factor and the "security changed" mark, for every domain that guards an action
 * with them (sign-in here; withdrawals in payments; card-number reveal in cards). This file
 * imports nothing of another domain, so any domain may import it without a cycle.
 */

/** How many recovery codes an enrolment hands out (each works once). */
export const RECOVERY_CODE_COUNT = 10;
/** Withdrawals wait this long after a password change or reset, 2FA off, or an e-mail change. */
export const SECURITY_HOLD_S = 24 * 60 * 60;

export type TSecondFactorMethod = 'totp' | 'recovery' | 'passkey';

/** What a guarded form carries: a typed code, or a passkey's assertion (JSON text). */
export type TSecondFactorProof = { code?: string | null | undefined; passkey?: string | null | undefined };

/** Which second factors the user has: a TOTP app (typed codes) and passkeys. */
export type TSecondFactorKinds = { totp: boolean; passkey: boolean };

export async function secondFactorKinds(db: Queryable, userId: string): Promise<TSecondFactorKinds> {
  const [row] = await db.query<TSecondFactorKinds>(
    `SELECT EXISTS (SELECT 1 FROM user_totp WHERE user_id = $1 AND enabled_at IS NOT NULL) AS totp,
            EXISTS (SELECT 1 FROM user_passkeys WHERE user_id = $1) AS passkey`,
    [userId],
  );
  return { totp: Boolean(row?.totp), passkey: Boolean(row?.passkey) };
}

/**
 * 2FA is on: a TOTP app, or at least one passkey. Either makes every guarded action ask for the
 * second factor (the passkey, for a user without TOTP).
 */
export async function secondFactorEnabled(db: Queryable, userId: string): Promise<boolean> {
  const { totp, passkey } = await secondFactorKinds(db, userId);
  return totp || passkey;
}

/** What a guarded form's answer says of the second factor (shared's ZSecondFactorNeed). */
export async function secondFactorNeed(db: Queryable, userId: string): Promise<TSecondFactorNeed> {
  const { totp, passkey } = await secondFactorKinds(db, userId);
  return { second_factor: totp || passkey, totp };
}

/** A TOTP app is on: what turning TOTP off and renewing the recovery codes depend on (they are about typed codes). */
export async function totpEnabled(db: Queryable, userId: string): Promise<boolean> {
  return (await secondFactorKinds(db, userId)).totp;
}

/** A recovery code as typed: case, spaces and dashes do not matter. */
export function normalizeRecoveryCode(code: string): string {
  return code.toLowerCase().replace(/[\s-]/g, '');
}

export function hashRecoveryCode(code: string): Buffer {
  return createHash('sha256').update(normalizeRecoveryCode(code), 'utf8').digest();
}

/** 80 random bits as 16 base32 characters, shown as `abcd-efgh-ijkl-mnop`. */
export function newRecoveryCode(): string {
  const text = base32Encode(randomBytes(10)).toLowerCase();
  return text.match(/.{4}/g)!.join('-');
}

/** Replaces the user's recovery codes by ten new ones; returns them (shown once, kept hashed). */
export async function issueRecoveryCodes(db: Queryable, userId: string): Promise<string[]> {
  const codes = Array.from({ length: RECOVERY_CODE_COUNT }, newRecoveryCode);
  await db.query('DELETE FROM recovery_codes WHERE user_id = $1', [userId]);
  await db.query('INSERT INTO recovery_codes (user_id, code_hash) SELECT $1, unnest($2::bytea[])', [userId, codes.map(hashRecoveryCode)]);
  return codes;
}

/**
 * Checks a code of the user's second factor and spends it:
 * - 2FA off (no TOTP, no passkey): `'none'` (nothing to check; the caller goes on);
 * - a 6-digit TOTP code of the current step, the one before or the one after, newer than the
 *   last code accepted (a code works once): `'totp'`;
 * - one of the unused recovery codes: `'recovery'` (it is used up);
 * - an assertion of one of the user's passkeys over a live second-factor challenge (spent):
 *   `'passkey'`, or 400 `passkey_invalid`; a user with passkeys and no TOTP has only this.
 * Otherwise 400 `second_factor_required` (neither) or `second_factor_invalid`, field `code`.
 *
 * Every attempt counts against the user's limit (10 per 15 minutes, 429 beyond), and a spent
 * code stays spent: that is why it takes the database handle, not a transaction. Call it
 * before the transaction of the guarded action (a failure there rolls back nothing here; the
 * user types a fresh code).
 */
export async function verifySecondFactor(db: Db, userId: string, proof: TSecondFactorProof, nowMs: number = Date.now()): Promise<'none' | TSecondFactorMethod> {
  const [totp] = await db.query<{ secret: string | null; last_step: string | null; passkeys: boolean }>(
    `SELECT t.secret, t.last_step, EXISTS (SELECT 1 FROM user_passkeys p WHERE p.user_id = $1) AS passkeys
     FROM (SELECT 1) one LEFT JOIN user_totp t ON t.user_id = $1 AND t.enabled_at IS NOT NULL`,
    [userId],
  );
  if (!totp || (!totp.secret && !totp.passkeys)) return 'none';
  const typed = (proof.code ?? '').trim();
  const passkey = (proof.passkey ?? '').trim();
  if (!typed && !passkey) throw new AppError('second_factor_required');
  await consumeRateLimit(db, 'second_factor_user', userId);
  if (passkey) {
    await verifyPasskeyAssertion(db, passkey, userId, new Date(nowMs));
    return 'passkey';
  }
  // Passkeys only: a typed code cannot match anything (recovery codes come with TOTP).
  if (!totp.secret) throw new AppError('second_factor_invalid');
  const digits = typed.replace(/\s/g, '');
  if (/^\d{6}$/.test(digits)) {
    const step = matchTotp(totp.secret, digits, nowMs, Number(totp.last_step ?? 0));
    // The conditional UPDATE makes the step single-use even for two requests at once.
    if (step !== null) {
      const [spent] = await db.query('UPDATE user_totp SET last_step = $2 WHERE user_id = $1 AND enabled_at IS NOT NULL AND last_step < $2 RETURNING user_id', [
        userId,
        step,
      ]);
      if (spent) return 'totp';
    }
    throw new AppError('second_factor_invalid');
  }
  if (/^[a-z2-7]{16}$/.test(normalizeRecoveryCode(typed))) {
    const [used] = await db.query('UPDATE recovery_codes SET used_at = now() WHERE user_id = $1 AND code_hash = $2 AND used_at IS NULL RETURNING id', [
      userId,
      hashRecoveryCode(typed),
    ]);
    if (used) return 'recovery';
  }
  throw new AppError('second_factor_invalid');
}

/** Password changed or reset, 2FA turned off, e-mail changed: withdrawals wait SECURITY_HOLD_S. */
export async function markSecurityChanged(db: Queryable, userId: string): Promise<void> {
  await db.query('UPDATE users SET security_changed_at = now() WHERE id = $1', [userId]);
}

/**
 * Until when the user's withdrawals are held, or null when they are not: the later of the hold
 * after a security change and an operator's block.
 */
export async function withdrawalsBlockedUntil(db: Queryable, userId: string): Promise<Date | null> {
  const [row] = await db.query<{ until: Date }>(
    `SELECT until FROM (SELECT greatest(security_changed_at + $2::int * interval '1 second', withdrawals_blocked_until) AS until FROM users WHERE id = $1) u
     WHERE until > now()`,
    [userId, SECURITY_HOLD_S],
  );
  return row ? new Date(row.until) : null;
}

/** 403 `withdrawals_blocked` (with `blocked_until` in the body) while the hold lasts. */
export async function refuseWhileWithdrawalsBlocked(db: Queryable, userId: string): Promise<void> {
  const until = await withdrawalsBlockedUntil(db, userId);
  if (!until) return;
  const iso = until.toISOString();
  throw new AppError('withdrawals_blocked', { vars: { until: `${iso.slice(0, 10)} ${iso.slice(11, 16)} UTC` }, data: { blocked_until: iso } });
}

/**
 * Every key of the account stops at once: whatever ends all its sessions (a password changed or
 * reset, "this wasn't me", an operator's block, closing the account) and 2FA turned off (keys
 * exist only under it) ends its bots' access too.
 */
export async function revokeAllApiKeys(tx: Queryable, userId: string): Promise<void> {
  await tx.query('UPDATE api_keys SET revoked_at = now() WHERE user_id = $1 AND revoked_at IS NULL', [userId]);
}
