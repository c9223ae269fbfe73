import { copyFile, mkdtemp, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { ZChatText, CHAT_MESSAGE_MAX_CHARS } from '@obmen/shared';
import type { Db, Queryable } from '../../db/index.ts';
import { AppError } from '../../errors.ts';
import { removeFiles } from '../../storage/files.ts';
import type { TReceivedFile } from '../../storage/upload.ts';
import { parseInput } from '../../validation.ts';
import { emitChatEvents } from './events.ts';
import { checkAndStoreChatFiles, insertMessage, lockConversation, messagesOf, SUPPORT_FILE_BASE, type TChatContext, type TConversationRow } from './service.ts';
import { writeAudit } from '../audit/service.ts';

/*
 * Support for operators (core CLI `support:*`, cli/chat.ts): the open conversations with how long
 * each has waited, one conversation, a reply (text and files, checked like a user's), closing.
 * Every look and every answer is written to operator_audit under the operator's name.
 */

const supportNotFound = () => new AppError('chat_not_found');

async function supportOfAccount(db: Queryable, accountId: number): Promise<TConversationRow & { user_id: string }> {
  const [row] = await db.query<TConversationRow & { user_id: string }>(
    `SELECT c.id::text, c.kind, c.user_a::text, c.user_b::text, c.status, c.user_a::text AS user_id
       FROM conversations c JOIN users u ON u.id = c.user_a WHERE c.kind = 'support' AND u.account_id = $1`,
    [accountId],
  );
  if (!row) throw supportNotFound();
  return row;
}

export type TSupportQueueItem = {
  account_id: number;
  status: 'open' | 'closed';
  waiting_since: string | null;
  waiting_minutes: number | null;
  messages: number;
  last_message: string;
};

/** support:list: open conversations, the longest waiting first (answered ones after those waiting). */
export async function listSupportQueue(db: Db, operator: string, options: { all?: boolean; now?: Date } = {}): Promise<TSupportQueueItem[]> {
  const now = options.now ?? new Date();
  const rows = await db.query<Omit<TSupportQueueItem, 'waiting_minutes'> & { waited_s: number | null }>(
    `SELECT u.account_id, c.status, to_char(c.waiting_since AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"') AS waiting_since,
            floor(extract(epoch FROM ($2::timestamptz - c.waiting_since)))::int AS waited_s,
            (SELECT count(*)::int FROM chat_messages m WHERE m.conversation_id = c.id) AS messages,
            coalesce((SELECT left(m.text, 80) FROM chat_messages m WHERE m.conversation_id = c.id ORDER BY m.id DESC LIMIT 1), '') AS last_message
       FROM conversations c JOIN users u ON u.id = c.user_a
      WHERE c.kind = 'support' AND ($1 OR c.status = 'open')
      ORDER BY c.waiting_since ASC NULLS LAST, c.last_message_at DESC NULLS LAST
      LIMIT 200`,
    [options.all === true, now.toISOString()],
  );
  await writeAudit(db, { actor: operator, action: 'support.list', subject: 'support', details: { count: rows.length }, outcome: 'viewed' });
  return rows.map(({ waited_s, ...row }) => ({ ...row, waiting_minutes: waited_s === null ? null : Math.max(0, Math.floor(waited_s / 60)) }));
}

/** support:show <account id>: the conversation's newest page, files by id (support:file saves one). */
export async function showSupport(db: Db, operator: string, accountId: number, page = 1) {
  const conversation = await supportOfAccount(db, accountId);
  const [count] = await db.query<{ n: number }>('SELECT count(*)::int AS n FROM chat_messages WHERE conversation_id = $1', [conversation.id]);
  const messages = await messagesOf(db, conversation, conversation.user_id, null, (page - 1) * 50, SUPPORT_FILE_BASE);
  await writeAudit(db, { actor: operator, action: 'support.show', subject: `account:${accountId}`, details: { page }, outcome: 'viewed' });
  return {
    account_id: accountId,
    status: conversation.status,
    total: count?.n ?? 0,
    messages: messages.map((message) => ({
      id: message.id,
      from: message.author === 'me' ? 'user' : 'operator',
      text: message.text,
      files: message.files.map((file) => ({ id: file.id, mime: file.mime, size: file.size })),
      created_at: message.created_at,
    })),
  };
}

/**
 * support:reply <account id> <text> [--file path]…: the files are checked like a user's (by
 * their bytes, images re-encoded) from a private copy, so nothing is written beside the originals.
 */
export async function replySupport(ctx: TChatContext, operator: string, accountId: number, text: string, filePaths: string[] = []) {
  const body = parseInput(ZChatText(CHAT_MESSAGE_MAX_CHARS, 'chat.message_too_long'), text);
  if (!body && !filePaths.length) throw new AppError('validation', { fields: { text: 'chat.message_empty' } });
  const dir = await mkdtemp(path.join(tmpdir(), 'obmen-reply-'));
  try {
    const files: TReceivedFile[] = [];
    for (const [index, source] of filePaths.entries()) {
      const target = path.join(dir, `${index}.bin`);
      await copyFile(source, target);
      files.push({ field: `file${index}`, path: target, size: (await stat(target)).size });
    }
    const stored = await checkAndStoreChatFiles(ctx.storage, files, { owner: `operator:${operator}` });
    try {
      const messageId = await ctx.db.transaction(async (tx) => {
        const found = await supportOfAccount(tx, accountId);
        const conversation = await lockConversation(tx, 'support', found.user_id, null);
        const id = await insertMessage(tx, conversation, { operator }, body, stored);
        await emitChatEvents(tx, conversation, id, [found.user_id]);
        await writeAudit(tx, { actor: operator, action: 'support.reply', subject: `account:${accountId}`, details: { message_id: id, files: stored.length } });
        return id;
      });
      return { status: 'ok', account_id: accountId, message_id: Number(messageId) };
    } catch (err) {
      await removeFiles(
        ctx.storage,
        stored.map((file) => file.key),
      );
      throw err;
    }
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/** support:close <account id>: nothing waits any more; the user's next message opens it again. */
export async function closeSupport(db: Db, operator: string, accountId: number) {
  return db.transaction(async (tx) => {
    const conversation = await supportOfAccount(tx, accountId);
    await tx.query(`UPDATE conversations SET status = 'closed', waiting_since = NULL WHERE id = $1`, [conversation.id]);
    await writeAudit(tx, { actor: operator, action: 'support.close', subject: `account:${accountId}` });
    return { status: 'ok', account_id: accountId, closed: true };
  });
}

/** support:file <file id> <path>: saves a support conversation's file for the operator (audited). */
export async function saveSupportFile(ctx: TChatContext, operator: string, fileId: string, target: string) {
  const [file] = await ctx.db.query<{ storage_key: string; account_id: number }>(
    `SELECT f.storage_key, u.account_id FROM chat_files f JOIN chat_messages m ON m.id = f.message_id
       JOIN conversations c ON c.id = m.conversation_id JOIN users u ON u.id = c.user_a
      WHERE f.public_id::text = $1 AND c.kind = 'support'`,
    [fileId],
  );
  const object = file && (await ctx.storage.get(file.storage_key));
  if (!file || !object) throw new AppError('chat_file_not_found');
  const chunks: Buffer[] = [];
  for await (const chunk of object.body) chunks.push(chunk as Buffer);
  await writeFile(target, Buffer.concat(chunks), { mode: 0o600 });
  await writeAudit(ctx.db, { actor: operator, action: 'support.file', subject: `account:${file.account_id}`, details: { file: fileId }, outcome: 'viewed' });
  return { status: 'ok', saved: target, size: object.size };
}

/** chat:reports: private conversations users reported, not yet reviewed, with their last messages. */
export async function listReports(db: Db, operator: string) {
  const rows = await db.query<{ id: string; reporter: number; reported: number; reason: string; created_at: string }>(
    `SELECT r.id::text, ru.account_id AS reporter, ou.account_id AS reported, r.reason,
            to_char(r.created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"') AS created_at
       FROM chat_reports r JOIN conversations c ON c.id = r.conversation_id
       JOIN users ru ON ru.id = r.reporter_id
       JOIN users ou ON ou.id = CASE WHEN c.user_a = r.reporter_id THEN c.user_b ELSE c.user_a END
      WHERE r.reviewed_at IS NULL ORDER BY r.id LIMIT 200`,
  );
  await writeAudit(db, { actor: operator, action: 'chat.reports', subject: 'chat', details: { count: rows.length }, outcome: 'viewed' });
  return rows;
}
