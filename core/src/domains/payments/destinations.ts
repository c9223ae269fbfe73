import {
  displayDateTime,
  paymentFormSchema,
  type TLocale,
  type TWithdrawAllowlistBody,
  type TWithdrawBook,
  type TWithdrawDestinationBody,
} from '@obmen/shared';
import type { Db, Queryable } from '../../db/index.ts';
import { AppError, notFoundOf } from '../../errors.ts';
import { hashToken, isTokenShaped, newToken } from '../../lib/tokens.ts';
import { queueMail } from '../../mail/outbox.ts';
import { userLevel } from '../limits/service.ts';
import { verifySecondFactor } from '../security/second-factor.ts';
import type { TDocumentCipher } from '../verification/cipher.ts';
import { findPaymentSystem } from './catalogue.ts';

/*
 * The withdrawal address book. A destination (card number, IBAN, chain address and memo) is
 * saved per system and currency with the second factor (2FA on) and a link confirmed by e-mail,
 * and a withdrawal to it is allowed only 24 hours after it was added: a stolen session or
 * password cannot add a destination and empty the wallet into it at once, and the owner's mail
 * says how to stop it. With "allow-list only" on, withdrawals go only to usable entries; turning
 * that off waits 24 hours too. The destination is kept as a keyed hash (never the number itself)
 * and a masked form.
 */

/** A destination as it may be shown: "•••• 1111", "DE89 •••• 3000", "bc1qar0s…zwf5mdq", "memo 42". */
export function maskDestination(form: Record<string, string | undefined>): string {
  const parts: string[] = [];
  if (form.card_number) parts.push(`•••• ${form.card_number.slice(-4)}`);
  if (form.iban) parts.push(`${form.iban.slice(0, 4)} •••• ${form.iban.slice(-4)}`);
  if (form.address) parts.push(form.address.length > 16 ? `${form.address.slice(0, 8)}…${form.address.slice(-6)}` : form.address);
  if (form.memo) parts.push(`memo ${form.memo}`);
  return parts.join(', ');
}

/** How long a new destination (or the allow-list's switching off) waits. */
export const DESTINATION_WAIT_MS = 24 * 60 * 60_000;
export const DESTINATION_CONFIRM_PATH = '/withdraw/book?confirm=';

export type TBookDeps = { db: Db; cipher: TDocumentCipher; now: () => Date; publicUrl: string; mailer: { kick: () => void } };

/** The fields that say where money goes (the holder's name does not). */
function destinationOf(form: Record<string, string | undefined>): string {
  return [form.card_number ?? form.iban ?? form.address ?? '', form.memo ?? ''].join('|');
}

const hashOf = (cipher: TDocumentCipher, systemId: string, currency: string, form: Record<string, string | undefined>) =>
  cipher.lookupHash(`withdraw destination|${systemId}|${currency}|${destinationOf(form)}`);

/** GET /api/withdraw/book */
export async function withdrawBook(db: Queryable, userId: string, now: Date): Promise<TWithdrawBook> {
  const rows = await db.query<{
    id: string;
    ps: string;
    currency: string;
    label: string;
    shown: string;
    confirmed: boolean;
    created_at: Date;
    usable_from: Date;
  }>(
    `SELECT public_id::text AS id, system_id AS ps, currency, label, shown, confirmed_at IS NOT NULL AS confirmed, created_at, usable_from
       FROM withdraw_destinations WHERE user_id = $1 AND removed_at IS NULL ORDER BY created_at DESC, id DESC`,
    [userId],
  );
  const [user] = await db.query<{ on: boolean; off_at: Date | null }>(
    'SELECT withdraw_allowlist AS on, withdraw_allowlist_off_at AS off_at FROM users WHERE id = $1',
    [userId],
  );
  const offAt = user?.off_at ? new Date(user.off_at) : null;
  return {
    status: 'ok',
    destinations: rows.map((row) => ({
      id: row.id,
      ps: row.ps,
      currency: row.currency,
      label: row.label,
      shown: row.shown,
      state: !row.confirmed ? 'unconfirmed' : new Date(row.usable_from) > now ? 'waiting' : 'usable',
      created_at: new Date(row.created_at).toISOString(),
      usable_from: new Date(row.usable_from).toISOString(),
    })),
    allowlist: { on: Boolean(user?.on) && (offAt === null || offAt > now), off_at: user?.on && offAt && offAt > now ? offAt.toISOString() : null },
  };
}

/**
 * POST /api/withdraw/book: checks the destination by the system's own form rules, takes the
 * second factor, stores it unconfirmed and mails the confirmation link (which says it opens in
 * 24 hours, and to remove it if it was not the owner).
 */
export async function addDestination(deps: TBookDeps, userId: string, body: TWithdrawDestinationBody): Promise<void> {
  const { db, cipher } = deps;
  const entry = await findPaymentSystem(db, { direction: 'withdraw', id: body.ps, currency: body.currency, userLevel: await userLevel(db, userId) });
  if (!entry) throw new AppError('validation', { fields: { ps: 'payments.unknown_system' } });
  const parsed = paymentFormSchema(entry.system.fields, entry.currency.code).safeParse(body);
  if (!parsed.success) {
    const fields: Record<string, string> = {};
    for (const issue of parsed.error.issues) fields[String(issue.path[0] ?? 'ps')] ??= issue.message.includes('.') ? issue.message : 'validation.invalid';
    throw new AppError('validation', { fields });
  }
  await verifySecondFactor(db, userId, { code: body.code, passkey: body.passkey }, deps.now().getTime());
  const form = parsed.data as Record<string, string | undefined>;
  const hash = await hashOf(cipher, entry.system.id, entry.currency.code, form);
  const now = deps.now();
  const token = newToken();
  await db.transaction(async (tx) => {
    const [added] = await tx.query<{ id: string }>(
      `INSERT INTO withdraw_destinations (user_id, system_id, currency, label, shown, destination_hash, confirm_hash, created_at, usable_from)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9) ON CONFLICT DO NOTHING RETURNING id`,
      [
        userId,
        entry.system.id,
        entry.currency.code,
        body.label,
        maskDestination(form),
        hash,
        hashToken(token),
        now,
        new Date(now.getTime() + DESTINATION_WAIT_MS),
      ],
    );
    if (!added) throw new AppError('withdraw_destination_exists');
    const [user] = await tx.query<{ email: string; locale: TLocale }>('SELECT email, locale FROM users WHERE id = $1', [userId]);
    await queueMail(tx, {
      kind: 'withdraw_destination_added',
      to: user!.email,
      locale: user!.locale,
      vars: {
        label: body.label,
        destination: maskDestination(form),
        currency: entry.currency.code,
        usable_from: `${displayDateTime(new Date(now.getTime() + DESTINATION_WAIT_MS).toISOString(), user!.locale, 'UTC')} UTC`,
        link: `${deps.publicUrl}${DESTINATION_CONFIRM_PATH}${token}`,
        book: `${deps.publicUrl}/withdraw/book`,
      },
    });
  });
  deps.mailer.kick();
}

/**
 * POST /api/withdraw/book/confirm/{token}: the mailed link, spent once by its owner signed in
 * (another account's session answers as a spent link and spends nothing); the entry still opens
 * 24 hours after it was added.
 */
export async function confirmDestination(db: Db, userId: string, token: string, now: Date): Promise<void> {
  if (!isTokenShaped(token)) throw new AppError('invalid_token');
  const [row] = await db.query(
    `UPDATE withdraw_destinations SET confirmed_at = $3, confirm_hash = NULL
      WHERE confirm_hash = $1 AND user_id = $2 AND removed_at IS NULL AND created_at > $3::timestamptz - interval '7 days' RETURNING 1`,
    [hashToken(token), userId, now],
  );
  if (!row) throw new AppError('invalid_token');
}

/** POST /api/withdraw/book/{id}/remove: no second factor (removing only ever narrows where money may go). */
export async function removeDestination(db: Queryable, userId: string, id: string, now: Date): Promise<void> {
  const [row] = await db.query('UPDATE withdraw_destinations SET removed_at = $3 WHERE public_id = $1 AND user_id = $2 AND removed_at IS NULL RETURNING 1', [
    id,
    userId,
    now,
  ]);
  if (!row) throw notFoundOf('withdraw_destination');
}

/** POST /api/withdraw/book/allowlist: on at once; off (with the second factor) 24 hours from now. */
export async function setAllowlist(deps: Pick<TBookDeps, 'db' | 'now'>, userId: string, body: TWithdrawAllowlistBody): Promise<void> {
  const now = deps.now();
  if (body.on) {
    await deps.db.query('UPDATE users SET withdraw_allowlist = true, withdraw_allowlist_off_at = NULL WHERE id = $1', [userId]);
    return;
  }
  await verifySecondFactor(deps.db, userId, { code: body.code, passkey: body.passkey }, now.getTime());
  await deps.db.query(
    `UPDATE users SET withdraw_allowlist_off_at = $2 WHERE id = $1 AND withdraw_allowlist AND (withdraw_allowlist_off_at IS NULL OR withdraw_allowlist_off_at > $3)`,
    [userId, new Date(now.getTime() + DESTINATION_WAIT_MS), now],
  );
}

/**
 * Inside the withdrawal's transaction: a destination in the book must be confirmed and past its
 * 24 hours (refused with the time it opens); one not in the book is refused while "allow-list
 * only" is on. Marks the field the destination was typed in.
 */
export async function refuseUnusableDestination(
  tx: Queryable,
  cipher: TDocumentCipher,
  input: { userId: string; systemId: string; currency: string; form: Record<string, string | undefined>; now: Date; locale: TLocale },
): Promise<void> {
  const hash = await hashOf(cipher, input.systemId, input.currency, input.form);
  const [entry] = await tx.query<{ confirmed: boolean; usable_from: Date }>(
    'SELECT confirmed_at IS NOT NULL AS confirmed, usable_from FROM withdraw_destinations WHERE user_id = $1 AND destination_hash = $2 AND removed_at IS NULL',
    [input.userId, hash],
  );
  const field = input.form.card_number ? 'card_number' : input.form.iban ? 'iban' : 'address';
  if (entry && !entry.confirmed) throw new AppError('withdraw_destination_unconfirmed', { field });
  if (entry && new Date(entry.usable_from) > input.now)
    throw new AppError('withdraw_destination_waiting', {
      field,
      vars: { at: `${displayDateTime(new Date(entry.usable_from).toISOString(), input.locale, 'UTC')} UTC` },
    });
  if (entry) return;
  const [user] = await tx.query<{ on: boolean }>(
    'SELECT withdraw_allowlist AND (withdraw_allowlist_off_at IS NULL OR withdraw_allowlist_off_at > $2) AS on FROM users WHERE id = $1',
    [input.userId, input.now],
  );
  if (user?.on) throw new AppError('withdraw_allowlist_only', { field });
}
