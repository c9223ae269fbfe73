import type { TLocale } from '@obmen/shared';
import type { Db, Queryable } from '../../db/index.ts';
import { queueMail } from '../../mail/outbox.ts';
import { rateLimitedFor } from '../../rate-limit.ts';

/**
 * Wrong passwords are counted per (client address, typed address): after PASSWORD_FAILURES_FREE
 * of them that pair waits PASSWORD_WAIT_FIRST_S before its next try, and each further wrong one
 * doubles the wait (up to PASSWORD_WAIT_MAX_S). The owner signing in from another address is
 * not slowed at all: an account-wide lock let anyone lock the owner's password sign-in with
 * ten tries. No CAPTCHA: a person typing gets ten tries, a script from one address ~100 a day
 * per account (with login_ip bounding the address across accounts). A right password clears
 * the pair; a pair is forgotten a day after its last failure.
 */
export const PASSWORD_FAILURES_FREE = 10;
const PASSWORD_WAIT_FIRST_S = 30;
const PASSWORD_WAIT_MAX_S = 15 * 60;
const FORGET_AFTER_S = 24 * 60 * 60;
/** The owner is told at most this often that some address keeps trying. */
const NOTICE_EVERY_S = 24 * 60 * 60;

type TPair = { ipKey: string; emailKey: string };

/** How long a pair with this many failures waits after its last one before its next try. */
export function passwordWaitS(failures: number): number {
  if (failures < PASSWORD_FAILURES_FREE) return 0;
  return Math.min(PASSWORD_WAIT_MAX_S, PASSWORD_WAIT_FIRST_S * 2 ** (failures - PASSWORD_FAILURES_FREE));
}

/**
 * Counts one try of the pair before the password is checked (a right one clears it after), so
 * tries racing each other all count; or throws 429 + Retry-After while the pair waits.
 * Answers the pair's failures, this try included.
 */
export async function claimPasswordTry(db: Db, pair: TPair): Promise<number> {
  return db.transaction(async (tx) => {
    await tx.query(
      `INSERT INTO password_failures (ip_key, email_key, failures, last_failed_at) VALUES ($1, $2, 0, now())
       ON CONFLICT (ip_key, email_key) DO NOTHING`,
      [pair.ipKey, pair.emailKey],
    );
    const [row] = await tx.query<{ failures: number; since_s: number }>(
      `SELECT failures, extract(epoch FROM now() - last_failed_at)::float8 AS since_s
       FROM password_failures WHERE ip_key = $1 AND email_key = $2 FOR UPDATE`,
      [pair.ipKey, pair.emailKey],
    );
    const failures = !row || row.since_s >= FORGET_AFTER_S ? 0 : row.failures;
    const waitS = passwordWaitS(failures) - (row?.since_s ?? 0);
    if (waitS > 0) throw rateLimitedFor(Math.ceil(waitS));
    await tx.query('UPDATE password_failures SET failures = $3, last_failed_at = now() WHERE ip_key = $1 AND email_key = $2', [
      pair.ipKey,
      pair.emailKey,
      failures + 1,
    ]);
    return failures + 1;
  });
}

/** The right password: the pair starts afresh. */
export async function clearPasswordFailures(db: Queryable, pair: TPair): Promise<void> {
  await db.query('DELETE FROM password_failures WHERE ip_key = $1 AND email_key = $2', [pair.ipKey, pair.emailKey]);
}

/**
 * The pair just reached the slowdown: the owner is told (once a day at most, whatever the
 * number of addresses), with the address and the time, through the outbox.
 */
export async function noticePasswordFailures(
  db: Db,
  user: { id: string; email: string; locale: TLocale; account_id: number },
  ip: string,
  resetLink: string,
): Promise<boolean> {
  return db.transaction(async (tx) => {
    const [due] = await tx.query(
      `INSERT INTO password_failure_notices AS n (user_id, mailed_at) VALUES ($1, now())
       ON CONFLICT (user_id) DO UPDATE SET mailed_at = now() WHERE n.mailed_at <= now() - $2::int * interval '1 second'
       RETURNING 1`,
      [user.id, NOTICE_EVERY_S],
    );
    if (!due) return false;
    await queueMail(tx, {
      kind: 'password_failures',
      to: user.email,
      locale: user.locale,
      vars: { account_id: user.account_id, ip, time: `${new Date().toISOString().slice(0, 16).replace('T', ' ')} UTC`, reset_link: resetLink },
    });
    return true;
  });
}

/** Housekeeping: pairs a day past their last failure. */
export async function purgePasswordFailures(db: Queryable): Promise<void> {
  await db.query(`DELETE FROM password_failures WHERE last_failed_at < now() - $1::int * interval '1 second'`, [FORGET_AFTER_S]);
}
