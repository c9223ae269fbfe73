import { ZChatText, CHAT_MESSAGE_MAX_CHARS, type TOpsChatReport, type TOpsSavedReply, type TOpsSupportItem, type TOpsSupportMessage } from '@obmen/shared';
import type { Db, Queryable } from '../../db/index.ts';
import { AppError } from '../../errors.ts';
import { removeFiles } from '../../storage/files.ts';
import type { TReceivedFile } from '../../storage/upload.ts';
import { parseInput } from '../../validation.ts';
import { writeAudit } from '../audit/service.ts';
import { emitChatEvents } from './events.ts';
import { checkAndStoreChatFiles, fileIn, insertMessage, lockConversation, messagesOf, type TChatContext, type TConversationRow } from './service.ts';

/*
 * Support for operators, one set of services for the back office's desk (ops/support-routes.ts)
 * and the command line (cli/chat.ts): the queue, one conversation, replies with files (checked
 * like a customer's), closing and reopening, the customers' files, saved replies and reported
 * private chats. Each look and each action is written to the audit trail under `who.actor`
 * (`operator:<id>:<email>` from the desk, `cli:<name>` from the command line).
 */

/** Who acts, for the audit trail: the actor and, from the web, the request's id and address. */
export type TWho = { actor: string; requestId?: string; ip?: string };

const trail = (who: TWho) => ({ actor: who.actor, requestId: who.requestId ?? null, ip: who.ip ?? null });
const supportNotFound = () => new AppError('chat_not_found');
const UTC_MS = `'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'`;

/** The desk's file links: /api/ops/support/{account}/file/{id} (support.view_files, audited). */
export const deskFileBase = (accountId: number) => `/api/ops/support/${accountId}`;

type TConversationOfAccount = TConversationRow & { user_id: string };

/** The support conversation of an account, or 404 chat_not_found. */
export async function requireSupport(db: Queryable, accountId: number): Promise<TConversationOfAccount> {
  const [row] = await db.query<TConversationOfAccount>(
    `SELECT c.id::text, c.kind, c.user_a::text, c.user_b::text, c.status, c.user_a::text AS user_id
       FROM conversations c JOIN users u ON u.id = c.user_a WHERE c.kind = 'support' AND u.account_id = $1`,
    [accountId],
  );
  if (!row) throw supportNotFound();
  return row;
}

export type TSupportRow = Omit<TOpsSupportItem, 'claim'>;
export type TQueueOptions = { now: Date; targetMs: number };

/**
 * Support conversations, the longest waiting first (answered ones after those waiting): the open
 * ones, the closed ones, or one account's. `unread`: the customer's messages since the last answer.
 */
async function supportRows(db: Queryable, filter: { status?: 'open' | 'closed'; accountId?: number }, options: TQueueOptions): Promise<TSupportRow[]> {
  const rows = await db.query<Omit<TSupportRow, 'overdue'>>(
    `SELECT u.account_id, c.status, to_char(c.waiting_since AT TIME ZONE 'UTC', ${UTC_MS}) AS waiting_since,
            CASE WHEN c.waiting_since IS NULL THEN NULL ELSE greatest(0, floor(extract(epoch FROM ($1::timestamptz - c.waiting_since)) * 1000))::bigint END AS waited_ms,
            (SELECT count(*)::int FROM chat_messages m WHERE m.conversation_id = c.id) AS messages,
            (SELECT count(*)::int FROM chat_messages m WHERE m.conversation_id = c.id AND m.sender_id IS NOT NULL
                AND m.id > coalesce((SELECT max(o.id) FROM chat_messages o WHERE o.conversation_id = c.id AND o.sender_id IS NULL), 0)) AS unread,
            coalesce((SELECT left(m.text, 120) FROM chat_messages m WHERE m.conversation_id = c.id ORDER BY m.id DESC LIMIT 1), '') AS last_message,
            to_char(c.last_message_at AT TIME ZONE 'UTC', ${UTC_MS}) AS last_message_at
       FROM conversations c JOIN users u ON u.id = c.user_a
      WHERE c.kind = 'support' AND ($2::text IS NULL OR c.status = $2) AND ($3::bigint IS NULL OR u.account_id = $3)
      ORDER BY c.waiting_since ASC NULLS LAST, c.last_message_at DESC NULLS LAST
      LIMIT 200`,
    [options.now.toISOString(), filter.status ?? null, filter.accountId ?? null],
  );
  return rows.map((row) => {
    const waited = row.waited_ms === null ? null : Number(row.waited_ms);
    return { ...row, waited_ms: waited, overdue: row.status === 'open' && waited !== null && waited > options.targetMs };
  });
}

export const supportQueue = (db: Queryable, status: 'open' | 'closed', options: TQueueOptions) => supportRows(db, { status }, options);

/** The customers' unanswered messages over every open conversation, and how many conversations wait. */
export async function deskState(db: Queryable): Promise<{ unread: number; waiting: number; last: number }> {
  const [row] = await db.query<{ unread: number; waiting: number; last: string }>(
    `SELECT coalesce(sum((SELECT count(*) FROM chat_messages m WHERE m.conversation_id = c.id AND m.sender_id IS NOT NULL
                AND m.id > coalesce((SELECT max(o.id) FROM chat_messages o WHERE o.conversation_id = c.id AND o.sender_id IS NULL), 0))), 0)::int AS unread,
            count(*) FILTER (WHERE c.waiting_since IS NOT NULL)::int AS waiting,
            coalesce(max((SELECT max(m.id) FROM chat_messages m WHERE m.conversation_id = c.id)), 0)::text AS last
       FROM conversations c WHERE c.kind = 'support' AND c.status = 'open'`,
  );
  return { unread: row?.unread ?? 0, waiting: row?.waiting ?? 0, last: Number(row?.last ?? 0) };
}

function deskMessage(message: Awaited<ReturnType<typeof messagesOf>>[number]): TOpsSupportMessage {
  return {
    id: message.id,
    author: message.author === 'operator' ? 'operator' : 'customer',
    text: message.text,
    files: message.files,
    created_at: message.created_at,
  };
}

/** One conversation: its row and newest messages (page 1 the newest), audited as a view. */
export async function supportThread(db: Queryable, who: TWho, accountId: number, options: TQueueOptions & { page?: number }) {
  const conversation = await requireSupport(db, accountId);
  const [row] = await supportRows(db, { accountId }, options);
  const page = options.page ?? 1;
  const messages = await messagesOf(db, conversation, conversation.user_id, null, (page - 1) * 50, deskFileBase(accountId));
  await writeAudit(db, { ...trail(who), action: 'support.show', subject: `account:${accountId}`, details: { page }, outcome: 'viewed' });
  return { conversation: row!, messages: messages.map(deskMessage) };
}

/**
 * A reply with text and files: the files are checked by their bytes like a customer's (images
 * re-encoded) and stored before the transaction; they go again if it fails. The customer gets
 * the message live (emitChatEvents), as from any operator.
 */
export async function replySupport(ctx: TChatContext, who: TWho, accountId: number, text: string, files: TReceivedFile[]): Promise<TOpsSupportMessage> {
  const body = parseInput(ZChatText(CHAT_MESSAGE_MAX_CHARS, 'chat.message_too_long'), text);
  if (!body && !files.length) throw new AppError('validation', { fields: { text: 'chat.message_empty' } });
  await requireSupport(ctx.db, accountId);
  const stored = await checkAndStoreChatFiles(ctx.storage, files, { owner: who.actor });
  try {
    return await ctx.db.transaction(async (tx) => {
      const found = await requireSupport(tx, accountId);
      const conversation = await lockConversation(tx, 'support', found.user_id, null);
      const id = await insertMessage(tx, conversation, { operator: who.actor.slice(0, 100) }, body, stored);
      await emitChatEvents(tx, conversation, id, [found.user_id]);
      await writeAudit(tx, {
        ...trail(who),
        action: 'support.reply',
        subject: `account:${accountId}`,
        details: { message_id: Number(id), files: stored.length },
      });
      const [message] = await messagesOf(tx, conversation, found.user_id, [id], 0, deskFileBase(accountId));
      return deskMessage(message!);
    });
  } catch (err) {
    await removeFiles(
      ctx.storage,
      stored.map((file) => file.key),
    );
    throw err;
  }
}

/** Closed: nothing waits any more (the customer's next message opens it again); reopened: back on the desk. */
export async function setSupportStatus(db: Db, who: TWho, accountId: number, status: 'open' | 'closed') {
  return db.transaction(async (tx) => {
    const conversation = await requireSupport(tx, accountId);
    const waiting = status === 'closed' ? 'NULL' : 'waiting_since';
    await tx.query(`UPDATE conversations SET status = $2, waiting_since = ${waiting} WHERE id = $1`, [conversation.id, status]);
    await writeAudit(tx, {
      ...trail(who),
      action: status === 'closed' ? 'support.close' : 'support.reopen',
      subject: `account:${accountId}`,
      before: { status: conversation.status },
      after: { status },
    });
  });
}

/** A customer's file of their support conversation, for an operator to see: the view is audited. */
export async function supportFileOf(db: Queryable, who: TWho, accountId: number, fileId: string) {
  const conversation = await requireSupport(db, accountId).catch(() => null);
  const file = conversation && (await fileIn(db, conversation.id, fileId));
  if (!file) throw new AppError('chat_file_not_found');
  await writeAudit(db, { ...trail(who), action: 'support.file', subject: `account:${accountId}`, details: { file: fileId }, outcome: 'viewed' });
  return file;
}

/** The saved replies of both languages, in their order. */
export async function savedReplies(db: Queryable): Promise<TOpsSavedReply[]> {
  const rows = await db.query<TOpsSavedReply & { id: string }>('SELECT id::text, locale, title, body FROM support_saved_replies ORDER BY locale, position, id');
  return rows.map((row) => ({ ...row, id: Number(row.id) }));
}

/** Reported private chats not yet resolved, oldest first, each with the conversation's latest messages (a view, audited). */
export async function listReports(db: Queryable, who: TWho, now: Date): Promise<TOpsChatReport[]> {
  const reports = await db.query<Omit<TOpsChatReport, 'messages' | 'waited_ms' | 'id'> & { id: string; conversation_id: string; waited_ms: string }>(
    `SELECT r.id::text, r.conversation_id::text, ru.account_id AS reporter, ou.account_id AS reported, r.reason,
            to_char(r.created_at AT TIME ZONE 'UTC', ${UTC_MS}) AS created_at,
            greatest(0, floor(extract(epoch FROM ($1::timestamptz - r.created_at)) * 1000))::bigint::text AS waited_ms
       FROM chat_reports r JOIN conversations c ON c.id = r.conversation_id
       JOIN users ru ON ru.id = r.reporter_id
       JOIN users ou ON ou.id = CASE WHEN c.user_a = r.reporter_id THEN c.user_b ELSE c.user_a END
      WHERE r.reviewed_at IS NULL ORDER BY r.created_at, r.id LIMIT 100`,
    [now.toISOString()],
  );
  const messages = reports.length
    ? await db.query<{ id: string; conversation_id: string; from: number; text: string; files: number; created_at: string }>(
        `SELECT m.id::text, m.conversation_id::text, u.account_id AS "from", m.text,
                (SELECT count(*)::int FROM chat_files f WHERE f.message_id = m.id) AS files,
                to_char(m.created_at AT TIME ZONE 'UTC', ${UTC_MS}) AS created_at
           FROM (SELECT *, row_number() OVER (PARTITION BY conversation_id ORDER BY id DESC) AS n
                   FROM chat_messages WHERE conversation_id = ANY($1::bigint[])) m
           JOIN users u ON u.id = m.sender_id
          WHERE m.n <= 20 ORDER BY m.id`,
        [[...new Set(reports.map((report) => report.conversation_id))]],
      )
    : [];
  await writeAudit(db, { ...trail(who), action: 'chat.reports', subject: 'chat', details: { count: reports.length }, outcome: 'viewed' });
  return reports.map(({ conversation_id, ...report }) => ({
    ...report,
    id: Number(report.id),
    waited_ms: Number(report.waited_ms),
    messages: messages
      .filter((message) => message.conversation_id === conversation_id)
      .map(({ conversation_id: _, ...message }) => ({ ...message, id: Number(message.id) })),
  }));
}

/** A report looked at and decided: off the queue, with the outcome and note in the trail. */
export async function resolveReport(db: Db, who: TWho, reportId: number, decision: { outcome: string; note: string; now: Date }) {
  await db.transaction(async (tx) => {
    const [row] = await tx.query<{ id: string }>(
      'UPDATE chat_reports SET reviewed_at = $2, reviewed_by = $3 WHERE id = $1 AND reviewed_at IS NULL RETURNING id::text',
      [reportId, decision.now, who.actor.slice(0, 200)],
    );
    if (!row) throw new AppError('chat_not_found');
    await writeAudit(tx, {
      ...trail(who),
      action: 'chat.report_resolve',
      subject: `chat_report:${reportId}`,
      reasonCode: decision.outcome,
      reasonText: decision.note || null,
      after: { reviewed: true },
    });
  });
}
