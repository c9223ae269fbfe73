import { z } from 'zod';
import {
  DEFAULT_LOCALE,
  LOCALES,
  NOTIFICATION_BUTTONS_MAX,
  NOTIFICATION_DISPLAYS,
  NOTIFICATION_TEXT_MAX,
  NOTIFICATION_TITLE_MAX,
  NOTIFICATION_TYPES,
  ZNotificationButtonInput,
  isSafeButtonUrl,
  type TLocale,
  type TNotification,
} from '@obmen/shared';
import type { Db, Queryable } from '../../db/index.ts';
import { AppError, notFoundOf } from '../../errors.ts';
import { sanitizeForServing, sanitizeHtmlContent } from '../../lib/sanitize.ts';
import { recordEvent } from '../events/service.ts';

/** At most this many open notifications travel in one envelope (oldest first). */
export const OPEN_NOTIFICATIONS_MAX = 20;

const ZNotificationText = z.object({
  locale: z.enum(LOCALES),
  /** Plain text: the site renders it as text, never as HTML. */
  title: z.string().trim().min(1).max(NOTIFICATION_TITLE_MAX),
  /** HTML, sanitised before it is stored (lib/sanitize.ts). */
  text: z.string().max(NOTIFICATION_TEXT_MAX).default(''),
  buttons: z.array(ZNotificationButtonInput).max(NOTIFICATION_BUTTONS_MAX).default([]),
});

export const ZSendNotification = z.object({
  /** users.id of the one user it is for; null: everyone, signed in or not. */
  userId: z.string().regex(/^\d+$/).nullable(),
  display: z.enum(NOTIFICATION_DISPLAYS),
  type: z.enum(NOTIFICATION_TYPES),
  closable: z.boolean().default(true),
  expiresAt: z.date().nullish(),
  texts: z
    .array(ZNotificationText)
    .min(1)
    .max(LOCALES.length)
    .refine((texts) => new Set(texts.map((t) => t.locale)).size === texts.length, 'one text per locale'),
});
export type TSendNotification = z.input<typeof ZSendNotification>;

const notClosable = () => new AppError('not_closable');

/** Stores a notification (texts sanitised); returns its notification_id. */
export async function sendNotification(db: Db, input: TSendNotification): Promise<number> {
  return db.transaction((tx) => insertNotification(tx, input));
}

/** sendNotification inside the caller's transaction: the notice exists exactly when the change it tells of does. */
export async function insertNotification(tx: Queryable, input: TSendNotification): Promise<number> {
  const data = ZSendNotification.parse(input);
  if (data.expiresAt && data.expiresAt.getTime() <= Date.now()) throw new AppError('expiry_passed');
  const [row] = await tx.query<{ id: string }>(
    `INSERT INTO notifications (user_id, display, type, closable, expires_at) VALUES ($1, $2, $3, $4, $5) RETURNING id::text AS id`,
    [data.userId, data.display, data.type, data.closable, data.expiresAt ?? null],
  );
  for (const text of data.texts) {
    await tx.query('INSERT INTO notification_texts (notification_id, locale, title, text_html, buttons) VALUES ($1, $2, $3, $4, $5::jsonb)', [
      row!.id,
      text.locale,
      text.title,
      sanitizeHtmlContent(text.text),
      JSON.stringify(text.buttons),
    ]);
  }
  // The user's open notifications reach their browsers live (hydrated at delivery, in their locale).
  if (data.userId !== null) await recordEvent(tx, data.userId, 'notifications', null);
  return Number(row!.id);
}

type TOpenRow = {
  id: string;
  display: TNotification['display'];
  type: TNotification['type'];
  closable: boolean;
  title: string;
  text_html: string;
  buttons: unknown;
};

/**
 * The open notifications of a viewer, for the `notifications` envelope key: the user's own and
 * everyone's, not expired, not closed by this user; in the viewer's locale, else the default
 * locale's text, else any. Anonymous viewers (userId null) get the ones for everyone; their
 * closes live in the browser (localStorage), the site filters those out itself.
 */
export async function listOpenNotifications(db: Queryable, userId: string | null, locale: TLocale): Promise<TNotification[]> {
  const rows = await db.query<TOpenRow>(
    `SELECT n.id::text AS id, n.display, n.type, n.closable, t.title, t.text_html, t.buttons
     FROM notifications n
     CROSS JOIN LATERAL (
       SELECT nt.title, nt.text_html, nt.buttons FROM notification_texts nt
       WHERE nt.notification_id = n.id
       ORDER BY (nt.locale = $2) DESC, (nt.locale = $3) DESC, nt.locale
       LIMIT 1
     ) t
     WHERE (n.user_id IS NULL OR n.user_id = $1::bigint)
       AND (n.expires_at IS NULL OR n.expires_at > now())
       AND ($1::bigint IS NULL OR NOT EXISTS (
         SELECT 1 FROM notification_closes c WHERE c.user_id = $1::bigint AND c.notification_id = n.id))
     ORDER BY n.id
     LIMIT ${OPEN_NOTIFICATIONS_MAX}`,
    [userId, locale, DEFAULT_LOCALE],
  );
  return rows.map((row) => ({
    notification_id: Number(row.id),
    display: row.display,
    type: row.type,
    title: row.title,
    text: sanitizeForServing(row.text_html),
    buttons: toButtons(row.buttons),
    closable: row.closable,
  }));
}

/** Validated when stored; checked again on the way out, like the HTML. */
function toButtons(value: unknown): TNotification['buttons'] {
  if (!Array.isArray(value)) return [];
  const out: TNotification['buttons'] = [];
  for (const item of value) {
    const parsed = ZNotificationButtonInput.safeParse(item);
    if (parsed.success && isSafeButtonUrl(parsed.data.url)) out.push({ url: parsed.data.url, title: parsed.data.title });
  }
  return out;
}

/**
 * POST /api/notify/close. A signed-in user's close is stored (idempotent: closing again is
 * fine); an anonymous visitor's is only checked (`remembered: false`). Unknown, or another
 * user's: 404. Not closable: 409.
 */
export async function closeNotification(db: Queryable, userId: string | null, id: number): Promise<{ remembered: boolean }> {
  const [row] = await db.query<{ closable: boolean }>('SELECT closable FROM notifications WHERE id = $1 AND (user_id IS NULL OR user_id = $2::bigint)', [
    id,
    userId,
  ]);
  if (!row) throw notFoundOf('notification');
  if (!row.closable) throw notClosable();
  if (userId === null) return { remembered: false };
  await db.query('INSERT INTO notification_closes (user_id, notification_id) VALUES ($1, $2) ON CONFLICT (user_id, notification_id) DO NOTHING', [userId, id]);
  return { remembered: true };
}

// ---- operators ------------------------------------------------------------------------------

export type TNotificationSummary = {
  id: number;
  account_id: number | null;
  display: string;
  type: string;
  closable: boolean;
  locales: string[];
  title: string;
  created_at: string;
  expires_at: string | null;
  closed_by: number;
};

export async function listNotifications(db: Queryable, limit = 50): Promise<TNotificationSummary[]> {
  const rows = await db.query<Omit<TNotificationSummary, 'id' | 'closed_by'> & { id: string; closed_by: string }>(
    `SELECT n.id::text AS id, u.account_id, n.display, n.type, n.closable,
       (SELECT array_agg(locale ORDER BY locale) FROM notification_texts WHERE notification_id = n.id) AS locales,
       (SELECT title FROM notification_texts WHERE notification_id = n.id ORDER BY (locale = $2) DESC LIMIT 1) AS title,
       to_char(n.created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"') AS created_at,
       to_char(n.expires_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"') AS expires_at,
       (SELECT count(*) FROM notification_closes WHERE notification_id = n.id)::text AS closed_by
     FROM notifications n LEFT JOIN users u ON u.id = n.user_id
     ORDER BY n.id DESC LIMIT $1`,
    [limit, DEFAULT_LOCALE],
  );
  return rows.map((row) => ({ ...row, id: Number(row.id), closed_by: Number(row.closed_by) }));
}

export async function deleteNotification(db: Queryable, id: number): Promise<boolean> {
  return (await db.query('DELETE FROM notifications WHERE id = $1 RETURNING id', [id])).length > 0;
}

/** users.id of an account id (what operators and users see), or null. */
export async function userIdOfAccount(db: Queryable, accountId: number): Promise<string | null> {
  const [row] = await db.query<{ id: string }>('SELECT id::text AS id FROM users WHERE account_id = $1', [accountId]);
  return row?.id ?? null;
}
