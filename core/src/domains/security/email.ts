import { EMAIL_CHANGE_PATHS, EMAIL_CHANGE_REPORT_TTL_S, EMAIL_CHANGE_TTL_S, clientKey, translate, type TEmailStateResponse, type TLocale } from '@obmen/shared';
import type { Db, Queryable } from '../../db/index.ts';
import { AppError } from '../../errors.ts';
import { hashToken, isTokenShaped, newToken } from '../../lib/tokens.ts';
import { queueMail } from '../../mail/outbox.ts';
import { consumeRateLimit } from '../../rate-limit.ts';
import { markSecurityChanged } from './second-factor.ts';
import type { TSecurityUser } from './service.ts';

/*
 * Binding or changing the account's e-mail. The request writes one `email_changes` row and two
 * mails: a confirmation link to the new address, a notice with an "it was not me" link to the
 * old one. Nothing changes until the confirmation link is followed. When the new address
 * belongs to another account, its owner gets a "someone tried" mail instead of a link, and the
 * requester sees exactly the same answer and pending state (no enumeration).
 */

export type TEmailDeps = { db: Db; publicUrl: string; mailer: { kick: () => void } };
type TMessage = { status: 'ok'; message: string };

const invalidToken = () => new AppError('invalid_token');

export async function getEmailState(db: Queryable, userId: string): Promise<TEmailStateResponse> {
  const [row] = await db.query<{ email: string; confirmed: boolean; pending_email: string | null; expires_at: string | null }>(
    `SELECT u.email, u.email_confirmed_at IS NOT NULL AS confirmed, c.new_email AS pending_email, iso_time(c.expires_at) AS expires_at
     FROM users u
     LEFT JOIN LATERAL (
       SELECT new_email, expires_at FROM email_changes
       WHERE user_id = u.id AND confirmed_at IS NULL AND cancelled_at IS NULL AND expires_at > now()
       ORDER BY id DESC LIMIT 1
     ) c ON true
     WHERE u.id = $1`,
    [userId],
  );
  if (!row) throw new AppError('unauthorized');
  return {
    status: 'ok',
    email: row.email,
    email_confirmed: row.confirmed,
    pending: row.pending_email && row.expires_at ? { email: row.pending_email, expires_at: row.expires_at } : null,
  };
}

/** POST /api/user/email {email}: starts a change; an older request still open is replaced. */
export async function requestEmailChange(deps: TEmailDeps, user: TSecurityUser, email: string, locale: TLocale): Promise<TMessage> {
  if (email.toLowerCase() === user.email.toLowerCase()) {
    throw new AppError('validation', { fields: { email: 'security.email_same' } });
  }
  await consumeRateLimit(deps.db, 'email_change_user', user.id);
  await consumeRateLimit(deps.db, 'link_email', clientKey(email.toLowerCase()));
  const confirm = newToken();
  const report = newToken();
  await deps.db.transaction(async (tx) => {
    await tx.query('UPDATE email_changes SET cancelled_at = now() WHERE user_id = $1 AND confirmed_at IS NULL AND cancelled_at IS NULL', [user.id]);
    await tx.query(
      `INSERT INTO email_changes (user_id, old_email, new_email, confirm_hash, report_hash, expires_at, report_until)
       VALUES ($1, $2, $3, $4, $5, now() + $6::int * interval '1 second', now() + $7::int * interval '1 second')`,
      [user.id, user.email, email, hashToken(confirm), hashToken(report), EMAIL_CHANGE_TTL_S, EMAIL_CHANGE_REPORT_TTL_S],
    );
    const [taken] = await tx.query('SELECT 1 FROM users WHERE lower(email) = lower($1) AND id <> $2', [email, user.id]);
    const hours = EMAIL_CHANGE_TTL_S / 3600;
    if (taken) {
      await queueMail(tx, { kind: 'email_change_taken', to: email, locale: user.locale, vars: {} });
    } else {
      await queueMail(tx, {
        kind: 'email_change_confirm',
        to: email,
        locale: user.locale,
        vars: { account_id: user.account_id, link: `${deps.publicUrl}${EMAIL_CHANGE_PATHS.confirm}${confirm}`, hours },
      });
    }
    await queueMail(tx, {
      kind: 'email_change_notice',
      to: user.email,
      locale: user.locale,
      vars: {
        account_id: user.account_id,
        email,
        hours,
        days: EMAIL_CHANGE_REPORT_TTL_S / 86400,
        link: `${deps.publicUrl}${EMAIL_CHANGE_PATHS.report}${report}`,
      },
    });
  });
  deps.mailer.kick();
  return { status: 'ok', message: translate(locale, 'security.email_link_sent', { email, hours: EMAIL_CHANGE_TTL_S / 3600 }) };
}

/**
 * POST /api/user/email/confirm/{token}: the link from the new address. The account's e-mail
 * becomes it (confirmed), older links of the account stop working, withdrawals wait 24 hours.
 * No sign-in is needed (the link proves the mailbox) and none happens.
 */
export async function confirmEmailChange(deps: TEmailDeps, ip: string, token: string, locale: TLocale): Promise<TMessage> {
  await consumeRateLimit(deps.db, 'token_ip', clientKey(ip));
  if (!isTokenShaped(token)) throw invalidToken();
  const email = await deps.db
    .transaction(async (tx) => {
      const [change] = await tx.query<{ user_id: string; old_email: string; new_email: string }>(
        `UPDATE email_changes SET confirmed_at = now()
       WHERE confirm_hash = $1 AND confirmed_at IS NULL AND cancelled_at IS NULL AND expires_at > now()
       RETURNING user_id::text, old_email, new_email`,
        [hashToken(token)],
      );
      if (!change) throw invalidToken();
      // Taken since the request (or the address of another account all along): the same refusal.
      const [taken] = await tx.query('SELECT 1 FROM users WHERE lower(email) = lower($1) AND id <> $2', [change.new_email, change.user_id]);
      if (taken) throw invalidToken();
      const [updated] = await tx.query(
        `UPDATE users SET email = $3, email_confirmed_at = now(), updated_at = now() WHERE id = $1 AND lower(email) = lower($2) RETURNING id`,
        [change.user_id, change.old_email, change.new_email],
      );
      if (!updated) throw invalidToken();
      await tx.query(`UPDATE auth_tokens SET used_at = now() WHERE user_id = $1 AND used_at IS NULL`, [change.user_id]);
      await markSecurityChanged(tx, change.user_id);
      return change.new_email;
    })
    .catch((err: unknown) => {
      // Two accounts confirming one address at once: the unique index decides, the loser is refused.
      if ((err as { code?: string }).code === '23505') throw invalidToken();
      throw err;
    });
  return { status: 'ok', message: translate(locale, 'security.email_changed', { email }) };
}

/**
 * POST /api/user/email/report/{token}: "it was not me", from the old address. An open change
 * is stopped; one already made is undone (the old address comes back, if still free). Every
 * session of the account ends, open links die, withdrawals wait 24 hours, and the old address
 * gets a mail with a password-reset link.
 */
export async function reportEmailChange(deps: TEmailDeps, ip: string, token: string, locale: TLocale): Promise<TMessage> {
  await consumeRateLimit(deps.db, 'token_ip', clientKey(ip));
  if (!isTokenShaped(token)) throw invalidToken();
  await deps.db.transaction(async (tx) => {
    const [change] = await tx.query<{ user_id: string; old_email: string; new_email: string; confirmed: boolean; locale: TLocale; account_id: number }>(
      `UPDATE email_changes c SET reported_at = now(), cancelled_at = coalesce(c.cancelled_at, now())
       FROM users u
       WHERE c.report_hash = $1 AND c.reported_at IS NULL AND c.report_until > now() AND u.id = c.user_id
       RETURNING c.user_id::text, c.old_email, c.new_email, c.confirmed_at IS NOT NULL AS confirmed, u.locale, u.account_id`,
      [hashToken(token)],
    );
    if (!change) throw invalidToken();
    if (change.confirmed) {
      const [taken] = await tx.query('SELECT 1 FROM users WHERE lower(email) = lower($1) AND id <> $2', [change.old_email, change.user_id]);
      if (!taken) {
        await tx.query('UPDATE users SET email = $3, updated_at = now() WHERE id = $1 AND lower(email) = lower($2)', [
          change.user_id,
          change.new_email,
          change.old_email,
        ]);
      }
    }
    await tx.query('UPDATE email_changes SET cancelled_at = now() WHERE user_id = $1 AND confirmed_at IS NULL AND cancelled_at IS NULL', [change.user_id]);
    await tx.query('UPDATE sessions SET revoked_at = now() WHERE user_id = $1 AND revoked_at IS NULL', [change.user_id]);
    await tx.query('UPDATE auth_tokens SET used_at = now() WHERE user_id = $1 AND used_at IS NULL', [change.user_id]);
    await markSecurityChanged(tx, change.user_id);
    await queueMail(tx, {
      kind: 'email_change_reported',
      to: change.old_email,
      locale: change.locale,
      vars: { account_id: change.account_id, reset_link: `${deps.publicUrl}/forgot-password` },
    });
  });
  deps.mailer.kick();
  return { status: 'ok', message: translate(locale, 'security.email_reported') };
}

/** Housekeeping: requests whose report link ended a month ago. */
export async function purgeEmailChanges(db: Queryable): Promise<void> {
  await db.query(`DELETE FROM email_changes WHERE report_until < now() - interval '30 days'`);
}
