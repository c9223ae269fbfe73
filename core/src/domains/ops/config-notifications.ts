import { DEFAULT_LOCALE, type TOpsNotificationBody, ZOpsNotificationBody } from '@obmen/shared';
import type { z } from 'zod';
import type { Db, Queryable } from '../../db/index.ts';
import { AppError, notFoundOf } from '../../errors.ts';
import { writeAudit } from '../audit/service.ts';
import { servedHtml } from '../content/service.ts';
import { deleteNotification, insertNotification, listNotifications, userIdOfAccount } from '../notifications/service.ts';
import { auditedActor, type TOpsActor } from './customers.ts';

/*
 * Notifications from /ops/config/notifications: to everyone or to chosen accounts, now or at a
 * time the operator chose. A scheduled one is stored as the form was validated and published by
 * the `notifications-scheduled` job once due, or cancelled before that; every step is audited.
 */

type TBody = z.output<typeof ZOpsNotificationBody>;
type TComposedText = TOpsNotificationBody['texts'][number];

/** The texts as a customer would get them: the sanitiser's result, as stored and then served. */
export function previewNotification(texts: TComposedText[]) {
  return texts.map((text) => ({ ...text, text: servedHtml(text.text ?? ''), buttons: text.buttons ?? [] }));
}

/**
 * Whom a notification goes to: null for everyone, else each chosen account's user. An unknown
 * account refuses the whole send (`strict`), or, for a scheduled one whose account went since,
 * is passed over.
 */
async function recipientsOf(db: Queryable, body: TBody, strict: boolean): Promise<Array<string | null>> {
  if (body.to === 'everyone') return [null];
  const users: string[] = [];
  for (const accountId of new Set(body.accounts)) {
    const userId = await userIdOfAccount(db, accountId);
    if (userId) users.push(userId);
    else if (strict) throw notFoundOf('account');
  }
  return users;
}

/** One notification for everyone, or one for each user, through the notification service (their open pages get it live). */
async function insertFor(tx: Queryable, body: TBody, users: Array<string | null>): Promise<number[]> {
  const ids: number[] = [];
  for (const userId of users)
    ids.push(
      await insertNotification(tx, {
        userId,
        display: body.display,
        type: body.type,
        closable: body.closable,
        expiresAt: body.expires_at ? new Date(body.expires_at) : null,
        texts: body.texts,
      }),
    );
  return ids;
}

/** What the audit trail keeps of a notification: what it says and to whom. */
const described = (body: TBody) => ({
  to: body.to,
  accounts: body.accounts,
  display: body.display,
  type: body.type,
  closable: body.closable,
  texts: body.texts,
  ...(body.send_at ? { send_at: body.send_at } : {}),
});

/**
 * Publishes a notification now (a customer's open pages get it live: the `notifications` event,
 * or the everyone-counter the realtime hub broadcasts), or stores it for its `send_at`.
 */
export async function publishNotification(db: Db, actor: TOpsActor, input: TOpsNotificationBody): Promise<{ ids: number[]; scheduled: number | null }> {
  const body = ZOpsNotificationBody.parse(input);
  const sendAt = body.send_at ? new Date(body.send_at) : null;
  if (sendAt && sendAt <= actor.now) throw new AppError('validation', { fields: { send_at: 'ops.config.notify_send_at_past' } });
  const users = await recipientsOf(db, body, true);
  return db.transaction(async (tx) => {
    if (sendAt) {
      const by = auditedActor(actor);
      const [row] = await tx.query<{ id: string }>(
        'INSERT INTO notifications_scheduled (send_at, body, scheduled_by) VALUES ($1, $2::jsonb, $3) RETURNING id::text AS id',
        [sendAt, JSON.stringify(body), by.actor],
      );
      await writeAudit(tx, {
        ...by,
        action: 'config.notify_schedule',
        subject: `notification_scheduled:${row!.id}`,
        before: null,
        after: described(body),
      });
      return { ids: [], scheduled: Number(row!.id) };
    }
    const ids = await insertFor(tx, body, users);
    await writeAudit(tx, {
      ...auditedActor(actor),
      action: 'config.notify',
      subject: body.to === 'everyone' ? 'notification:everyone' : `notification:${ids.join(',')}`,
      before: null,
      after: { ids, ...described(body) },
    });
    return { ids, scheduled: null };
  });
}

/**
 * The `notifications-scheduled` job: each notification due at `now`, oldest first, published
 * exactly once. One transaction per notification claims its row (state 'scheduled' → 'sent',
 * skipping rows another core holds) and inserts what it becomes, so a second core, a cancel at
 * the same moment or a crash in between can neither repeat nor lose it. One whose expiry passed
 * before it could go out lapses instead.
 */
export async function publishDueNotifications(db: Db, now: Date): Promise<{ sent: number; lapsed: number }> {
  const done = { sent: 0, lapsed: 0 };
  for (;;) {
    const outcome = await db.transaction(async (tx) => {
      const [row] = await tx.query<{ id: string; body: unknown; scheduled_by: string }>(
        `UPDATE notifications_scheduled SET state = 'sent', done_at = $1
         WHERE id = (SELECT id FROM notifications_scheduled WHERE state = 'scheduled' AND send_at <= $1 ORDER BY send_at, id LIMIT 1 FOR UPDATE SKIP LOCKED)
           AND state = 'scheduled'
         RETURNING id::text AS id, body, scheduled_by`,
        [now],
      );
      if (!row) return null;
      const body = ZOpsNotificationBody.parse(row.body);
      if (body.expires_at && new Date(body.expires_at) <= now) {
        await tx.query("UPDATE notifications_scheduled SET state = 'lapsed' WHERE id = $1", [row.id]);
        await writeAudit(tx, {
          actor: 'system',
          action: 'config.notify_lapsed',
          subject: `notification_scheduled:${row.id}`,
          details: { scheduled_by: row.scheduled_by },
        });
        return 'lapsed' as const;
      }
      const ids = await insertFor(tx, body, await recipientsOf(tx, body, false));
      await tx.query('UPDATE notifications_scheduled SET notification_ids = $2 WHERE id = $1', [row.id, ids]);
      await writeAudit(tx, {
        actor: 'system',
        action: 'config.notify_scheduled_sent',
        subject: `notification_scheduled:${row.id}`,
        details: { scheduled_by: row.scheduled_by },
        before: null,
        after: { ids },
      });
      return 'sent' as const;
    });
    if (!outcome) return done;
    done[outcome]++;
  }
}

/** The notifications waiting for their time, soonest first. */
export async function scheduledNotifications(db: Queryable) {
  const rows = await db.query<{ id: string; send_at: string; body: unknown; scheduled_by: string }>(
    `SELECT id::text AS id, iso_time(send_at) AS send_at, body, scheduled_by FROM notifications_scheduled WHERE state = 'scheduled' ORDER BY send_at, id LIMIT 100`,
  );
  return rows.map((row) => {
    const body = ZOpsNotificationBody.parse(row.body);
    const first = body.texts.find((text) => text.locale === DEFAULT_LOCALE) ?? body.texts[0]!;
    return {
      id: Number(row.id),
      send_at: row.send_at,
      to: body.to,
      accounts: body.accounts,
      display: body.display,
      locales: body.texts.map((text) => text.locale).sort(),
      title: first.title,
      scheduled_by: row.scheduled_by.split(':').slice(2).join(':') || row.scheduled_by,
    };
  });
}

/** Cancels a scheduled notification before it goes out; one sent or cancelled already is a 409. */
export async function cancelScheduledNotification(db: Db, actor: TOpsActor, id: number): Promise<void> {
  await db.transaction(async (tx) => {
    const [row] = await tx.query<{ body: unknown; send_at: string }>(
      `UPDATE notifications_scheduled SET state = 'cancelled', done_at = $2 WHERE id = $1 AND state = 'scheduled' RETURNING body, iso_time(send_at) AS send_at`,
      [id, actor.now],
    );
    if (!row) {
      const [other] = await tx.query('SELECT 1 FROM notifications_scheduled WHERE id = $1', [id]);
      throw other ? new AppError('notification_not_scheduled') : notFoundOf('notification');
    }
    await writeAudit(tx, {
      ...auditedActor(actor),
      action: 'config.notify_cancel',
      subject: `notification_scheduled:${id}`,
      before: described(ZOpsNotificationBody.parse(row.body)),
      after: null,
    });
  });
}

export const recentNotifications = async (db: Queryable) => ({ notifications: await listNotifications(db, 50), scheduled: await scheduledNotifications(db) });

/** Deleting one takes it off every page (`notify:delete`); the audit row keeps what it said. */
export async function removeNotification(db: Db, actor: TOpsActor, id: number): Promise<void> {
  await db.transaction(async (tx) => {
    const before = await tx.query(
      'SELECT n.id, n.user_id::text, n.display, n.type, t.locale, t.title FROM notifications n JOIN notification_texts t ON t.notification_id = n.id WHERE n.id = $1',
      [id],
    );
    if (!before.length || !(await deleteNotification(tx, id))) throw notFoundOf('notification');
    await writeAudit(tx, {
      ...auditedActor(actor),
      action: 'config.notify_delete',
      subject: `notification:${id}`,
      before: { texts: before },
      after: null,
    });
  });
}
