import {
  CHAT_PAGE_SIZE,
  ZChatMessageFields,
  shortPersonName,
  translate,
  type TLocale,
  type TChatFile,
  type TChatListItem,
  type TChatMessage,
  type TChatThread,
  type TUnreadMsgs,
} from '@obmen/shared';
import type { Db, Queryable } from '../../db/index.ts';
import { AppError } from '../../errors.ts';
import { consumeRateLimit } from '../../rate-limit.ts';
import type { TFileStorage } from '../../storage/index.ts';
import { checkFiles, type TFileJob } from '../../storage/inspect.ts';
import { removeFiles, storeFiles, type TStoredFile } from '../../storage/files.ts';
import type { TReceivedFile } from '../../storage/upload.ts';
import { parseInput } from '../../validation.ts';
import { emitChatEvents } from './events.ts';

/*
 * Chats: one support conversation per user, one private conversation per pair of users.
 * Unread counts are exact: per user and conversation, the messages of others after the user's
 * read cursor (chat_reads.last_read_message, which never moves back).
 */

export type TChatContext = { db: Db; storage: TFileStorage };

/** What a user sends: the text (maybe empty) and the received, not yet checked files. */
/** A message's fields and files; `signal` aborts when the sender's connection closes. */
export type TChatInput = { fields: Record<string, unknown>; files: TReceivedFile[]; signal?: AbortSignal };

export type TConversationRow = { id: string; kind: 'support' | 'private'; user_a: string; user_b: string | null; status: 'open' | 'closed' };

const KEY_PREFIX = 'chat';
const FILE_FIELD = /^file\d+$/;

export const chatNotFound = () => new AppError('chat_not_found');
const chatFileNotFound = () => new AppError('chat_file_not_found');

// ---- unread counters ------------------------------------------------------------------------

/** `unread_msgs` of the envelope: others' messages after the user's cursor, per kind of chat. */
export async function unreadOf(db: Queryable, userId: string): Promise<TUnreadMsgs> {
  const rows = await db.query<{ kind: 'support' | 'private'; n: number }>(
    `WITH mine AS (
       SELECT id, kind FROM conversations WHERE user_a = $1
       UNION ALL SELECT id, kind FROM conversations WHERE user_b = $1
     )
     SELECT c.kind, count(m.id)::int AS n
       FROM mine c
       LEFT JOIN chat_reads r ON r.conversation_id = c.id AND r.user_id = $1
       JOIN chat_messages m ON m.conversation_id = c.id AND m.id > coalesce(r.last_read_message, 0)
      WHERE m.sender_id IS DISTINCT FROM $1
      GROUP BY c.kind`,
    [userId],
  );
  const unread: TUnreadMsgs = { private: 0, support: 0 };
  for (const row of rows) unread[row.kind] = row.n;
  return unread;
}

async function unreadIn(db: Queryable, conversationId: string, userId: string): Promise<number> {
  const [row] = await db.query<{ n: number }>(
    `SELECT count(*)::int AS n FROM chat_messages m
      WHERE m.conversation_id = $1 AND m.sender_id IS DISTINCT FROM $2
        AND m.id > coalesce((SELECT last_read_message FROM chat_reads WHERE conversation_id = $1 AND user_id = $2), 0)`,
    [conversationId, userId],
  );
  return row?.n ?? 0;
}

/** Moves a cursor forward (never back, never past the conversation's last message). */
async function moveCursor(db: Queryable, conversationId: string, userId: string, lastRead: number): Promise<number> {
  const [row] = await db.query<{ last_read_message: string }>(
    `INSERT INTO chat_reads AS r (conversation_id, user_id, last_read_message)
     VALUES ($1, $2, LEAST($3::bigint, coalesce((SELECT max(id) FROM chat_messages WHERE conversation_id = $1), 0)))
     ON CONFLICT (conversation_id, user_id) DO UPDATE SET last_read_message = GREATEST(r.last_read_message, EXCLUDED.last_read_message)
     RETURNING last_read_message::text`,
    [conversationId, userId, lastRead],
  );
  return Number(row?.last_read_message ?? 0);
}

async function cursorOf(db: Queryable, conversationId: string, userId: string): Promise<number> {
  const [row] = await db.query<{ last_read_message: string }>('SELECT last_read_message::text FROM chat_reads WHERE conversation_id = $1 AND user_id = $2', [
    conversationId,
    userId,
  ]);
  return Number(row?.last_read_message ?? 0);
}

// ---- conversations ----------------------------------------------------------------------------

const CONVERSATION_COLUMNS = 'id::text, kind, user_a::text, user_b::text, status';

export async function findSupport(db: Queryable, userId: string): Promise<TConversationRow | null> {
  const [row] = await db.query<TConversationRow>(`SELECT ${CONVERSATION_COLUMNS} FROM conversations WHERE kind = 'support' AND user_a = $1`, [userId]);
  return row ?? null;
}

function pair(one: string, other: string): [string, string] {
  return BigInt(one) < BigInt(other) ? [one, other] : [other, one];
}

async function findPrivate(db: Queryable, userId: string, otherId: string): Promise<TConversationRow | null> {
  const [a, b] = pair(userId, otherId);
  const [row] = await db.query<TConversationRow>(`SELECT ${CONVERSATION_COLUMNS} FROM conversations WHERE kind = 'private' AND user_a = $1 AND user_b = $2`, [
    a,
    b,
  ]);
  return row ?? null;
}

/** Creates the conversation if needed and locks it: messages of one conversation are written one at a time. */
async function lockConversation(tx: Queryable, kind: 'support' | 'private', userA: string, userB: string | null): Promise<TConversationRow> {
  const where = kind === 'support' ? `kind = 'support' AND user_a = $1` : `kind = 'private' AND user_a = $1 AND user_b = $2`;
  const params = kind === 'support' ? [userA] : [userA, userB];
  await tx.query(`INSERT INTO conversations (kind, user_a, user_b) VALUES ($1, $2, $3) ON CONFLICT DO NOTHING`, [kind, userA, userB]);
  const [row] = await tx.query<TConversationRow>(`SELECT ${CONVERSATION_COLUMNS} FROM conversations WHERE ${where} FOR UPDATE`, params);
  return row!;
}

type TOtherUser = { id: string; account_id: number; first_name: string | null; last_name: string | null };

/** The other user of an account id, unless it is unknown or the caller: both answer the same. */
async function otherUser(db: Queryable, userId: string, accountId: number): Promise<TOtherUser | null> {
  const [row] = await db.query<TOtherUser>('SELECT id::text, account_id, first_name, last_name FROM users WHERE account_id = $1', [accountId]);
  return row && row.id !== userId ? row : null;
}

/**
 * A private chat's title: the other user's first name and initial, else "Account 12345678" in
 * the reader's language; never the e-mail. An unknown account reads like one with no name.
 */
export function chatTitle(locale: TLocale, accountId: number, other: { first_name: string | null; last_name: string | null } | null): string {
  return shortPersonName(other?.first_name, other?.last_name) ?? translate(locale, 'chat.account_title', { id: accountId });
}

async function blockState(db: Queryable, userId: string, otherId: string): Promise<{ byMe: boolean; byOther: boolean }> {
  const rows = await db.query<{ user_id: string }>(
    'SELECT user_id::text FROM chat_blocks WHERE (user_id = $1 AND blocked_id = $2) OR (user_id = $2 AND blocked_id = $1)',
    [userId, otherId],
  );
  return { byMe: rows.some((row) => row.user_id === userId), byOther: rows.some((row) => row.user_id === otherId) };
}

// ---- messages -----------------------------------------------------------------------------------

type TMessageRow = { id: string; sender_id: string | null; text: string; created_at: string };
type TFileRow = { public_id: string; message_id: string; mime: string; size: number; reencoded: boolean };

function fileUrl(base: string, file: TFileRow): TChatFile {
  return { id: file.public_id, mime: file.mime, size: file.size, image: file.reencoded, url: `${base}/file/${file.public_id}` };
}

async function messagesOf(
  db: Queryable,
  conversation: TConversationRow,
  userId: string | null,
  ids: string[] | null,
  offset: number,
  fileBase: string,
): Promise<TChatMessage[]> {
  const rows = ids
    ? await db.query<TMessageRow>(
        `SELECT id::text, sender_id::text, text, to_char(created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS created_at
           FROM chat_messages WHERE id = ANY($1::bigint[]) ORDER BY id`,
        [ids],
      )
    : await db.query<TMessageRow>(
        `SELECT * FROM (
           SELECT id::text, sender_id::text, text, to_char(created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS created_at, id AS n
             FROM chat_messages WHERE conversation_id = $1 ORDER BY id DESC LIMIT $2 OFFSET $3
         ) page ORDER BY n`,
        [conversation.id, CHAT_PAGE_SIZE, offset],
      );
  const files = rows.length
    ? await db.query<TFileRow>(
        'SELECT public_id::text, message_id::text, mime, size, reencoded FROM chat_files WHERE message_id = ANY($1::bigint[]) ORDER BY id',
        [rows.map((row) => row.id)],
      )
    : [];
  return rows.map((row) => ({
    id: Number(row.id),
    author: row.sender_id === null ? 'operator' : row.sender_id === userId ? 'me' : 'other',
    text: row.text,
    files: files.filter((file) => file.message_id === row.id).map((file) => fileUrl(fileBase, file)),
    created_at: row.created_at,
  }));
}

async function threadOf(db: Queryable, conversation: TConversationRow | null, userId: string, page: number, fileBase: string): Promise<TChatThread> {
  if (!conversation) return { messages: [], page: 1, pages: 1, total: 0, last_read_message: 0 };
  const [count] = await db.query<{ n: number }>('SELECT count(*)::int AS n FROM chat_messages WHERE conversation_id = $1', [conversation.id]);
  const total = count?.n ?? 0;
  const pages = Math.max(1, Math.ceil(total / CHAT_PAGE_SIZE));
  return {
    messages: page > pages ? [] : await messagesOf(db, conversation, userId, null, (page - 1) * CHAT_PAGE_SIZE, fileBase),
    page,
    pages,
    total,
    last_read_message: await cursorOf(db, conversation.id, userId),
  };
}

/** The text (`text` or `message`) and the file parts of a new message; something must be sent. */
function parseMessage(input: TChatInput): { text: string; files: TReceivedFile[] } {
  const fields = parseInput(ZChatMessageFields, { text: input.fields.text, message: input.fields.message });
  const text = fields.text || fields.message || '';
  const bad = input.files.find((file) => !FILE_FIELD.test(file.field));
  if (bad) throw new AppError('validation', { fields: { [bad.field]: 'chat.file_field_invalid' } });
  if (!text && !input.files.length) throw new AppError('validation', { fields: { text: 'chat.message_empty' } });
  return { text, files: input.files };
}

/** Checks every file by its bytes (re-encoding images) and stores them: all or nothing. */
async function checkAndStore(storage: TFileStorage, files: TReceivedFile[], job: TFileJob): Promise<TStoredFile[]> {
  return storeFiles(storage, KEY_PREFIX, await checkFiles(files, job));
}

/** Inserts one message with its files into a locked conversation; the sender has read up to it. */
async function insertMessage(
  tx: Queryable,
  conversation: TConversationRow,
  sender: { userId: string } | { operator: string },
  text: string,
  files: TStoredFile[],
): Promise<string> {
  const [message] = await tx.query<{ id: string }>(
    'INSERT INTO chat_messages (conversation_id, sender_id, operator, text) VALUES ($1, $2, $3, $4) RETURNING id::text',
    [conversation.id, 'userId' in sender ? sender.userId : null, 'operator' in sender ? sender.operator : null, text],
  );
  for (const file of files) {
    await tx.query('INSERT INTO chat_files (message_id, storage_key, mime, size, reencoded) VALUES ($1, $2, $3, $4, $5)', [
      message!.id,
      file.key,
      file.mime,
      file.size,
      file.reencoded,
    ]);
  }
  if ('userId' in sender) await moveCursor(tx, conversation.id, sender.userId, Number(message!.id));
  // Support: a user's message waits (and opens a closed conversation) until an operator answers.
  const waiting = conversation.kind !== 'support' ? 'waiting_since' : 'userId' in sender ? 'coalesce(waiting_since, now())' : 'NULL';
  const status = conversation.kind === 'support' && 'userId' in sender ? `'open'` : 'status';
  await tx.query(`UPDATE conversations SET last_message_at = now(), waiting_since = ${waiting}, status = ${status} WHERE id = $1`, [conversation.id]);
  return message!.id;
}

/**
 * Checks and stores the sender's files (a message with files counts against upload_user), then
 * writes the message in one transaction; the files go again if it fails.
 */
async function writeMessage(
  ctx: TChatContext,
  userId: string,
  input: { files: TReceivedFile[]; signal?: AbortSignal },
  write: (tx: Queryable, stored: TStoredFile[]) => Promise<{ conversation: TConversationRow; messageId: string }>,
): Promise<{ conversation: TConversationRow; messageId: string }> {
  if (input.files.length) await consumeRateLimit(ctx.db, 'upload_user', userId);
  const stored = await checkAndStore(ctx.storage, input.files, { owner: userId, signal: input.signal });
  try {
    return await ctx.db.transaction((tx) => write(tx, stored));
  } catch (err) {
    await removeFiles(
      ctx.storage,
      stored.map((file) => file.key),
    );
    throw err;
  }
}

// ---- support ---------------------------------------------------------------------------------------

export const SUPPORT_FILE_BASE = '/api/support';

/** GET /api/support?page= */
export async function getSupport(db: Queryable, userId: string, page: number) {
  const conversation = await findSupport(db, userId);
  return {
    chat: { id: 'support' as const, closed: conversation?.status === 'closed' },
    ...(await threadOf(db, conversation, userId, page, SUPPORT_FILE_BASE)),
    unread_msgs: await unreadOf(db, userId),
  };
}

/** POST /api/support (text, files file0..n): one conversation per user, whichever page it is written from. */
export async function sendSupport(ctx: TChatContext, userId: string, input: TChatInput) {
  await consumeRateLimit(ctx.db, 'chat_message_user', userId);
  const { text, files } = parseMessage(input);
  const { conversation, messageId } = await writeMessage(ctx, userId, { files, signal: input.signal }, async (tx, stored) => {
    const conversation = await lockConversation(tx, 'support', userId, null);
    const messageId = await insertMessage(tx, conversation, { userId }, text, stored);
    await emitChatEvents(tx, conversation, messageId, [userId]);
    return { conversation, messageId };
  });
  const [message] = await messagesOf(ctx.db, conversation, userId, [messageId], 0, SUPPORT_FILE_BASE);
  return { message: message!, unread_msgs: await unreadOf(ctx.db, userId) };
}

/** POST /api/support/read {last_read_message} */
export async function readSupport(db: Db, userId: string, lastRead: number) {
  const conversation = await findSupport(db, userId);
  const cursor = conversation ? await db.transaction((tx) => moveAndEmit(tx, conversation, userId, lastRead)) : 0;
  return { last_read_message: cursor, unread_msgs: await unreadOf(db, userId) };
}

async function moveAndEmit(tx: Queryable, conversation: TConversationRow, userId: string, lastRead: number): Promise<number> {
  const before = await cursorOf(tx, conversation.id, userId);
  const cursor = await moveCursor(tx, conversation.id, userId, lastRead);
  if (cursor !== before) await emitChatEvents(tx, conversation, null, [userId]);
  return cursor;
}

export async function findSupportFile(db: Queryable, userId: string, fileId: string) {
  const conversation = await findSupport(db, userId);
  return conversation ? fileIn(db, conversation.id, fileId) : null;
}

/** A file of this conversation, or null: another conversation's file id is as missing as an unknown one. */
async function fileIn(db: Queryable, conversationId: string, fileId: string) {
  const [row] = await db.query<{ storage_key: string; mime: string; reencoded: boolean }>(
    `SELECT f.storage_key, f.mime, f.reencoded FROM chat_files f JOIN chat_messages m ON m.id = f.message_id
      WHERE f.public_id = $1::uuid AND m.conversation_id = $2`,
    [fileId, conversationId],
  );
  return row ? { ...row, name: `${fileId.slice(0, 8)}.${row.storage_key.split('.').pop()}` } : null;
}

export { chatFileNotFound };

// ---- private chats ---------------------------------------------------------------------------------

export const privateFileBase = (accountId: number) => `/api/chat/private/${accountId}`;

/** GET /api/chat/list: the private chats, newest activity first. */
export async function listChats(db: Queryable, userId: string, locale: TLocale): Promise<{ chats: TChatListItem[]; unread_msgs: TUnreadMsgs }> {
  const rows = await db.query<{ account_id: number; first_name: string | null; last_name: string | null; unread: number; blocked: boolean }>(
    `WITH mine AS (
       SELECT id, user_b AS other, last_message_at, created_at FROM conversations WHERE kind = 'private' AND user_a = $1
       UNION ALL SELECT id, user_a, last_message_at, created_at FROM conversations WHERE kind = 'private' AND user_b = $1
     )
     SELECT u.account_id, u.first_name, u.last_name,
            (SELECT count(*)::int FROM chat_messages m WHERE m.conversation_id = c.id AND m.sender_id IS DISTINCT FROM $1
               AND m.id > coalesce((SELECT last_read_message FROM chat_reads r WHERE r.conversation_id = c.id AND r.user_id = $1), 0)) AS unread,
            EXISTS (SELECT 1 FROM chat_blocks b WHERE b.user_id = $1 AND b.blocked_id = c.other) AS blocked
       FROM mine c JOIN users u ON u.id = c.other
      ORDER BY coalesce(c.last_message_at, c.created_at) DESC, c.id DESC`,
    [userId],
  );
  return {
    chats: rows.map((row) => ({ id: row.account_id, title: chatTitle(locale, row.account_id, row), unread_msgs: row.unread, blocked: row.blocked })),
    unread_msgs: await unreadOf(db, userId),
  };
}

/**
 * GET /api/chat/private/{id}?page=: an account with no conversation yet, an unknown account and
 * the caller's own id all answer an empty chat, so the call tells nothing about accounts.
 */
export async function getPrivate(db: Queryable, userId: string, accountId: number, page: number, locale: TLocale) {
  const other = await otherUser(db, userId, accountId);
  const conversation = other ? await findPrivate(db, userId, other.id) : null;
  const blocked = other ? (await blockState(db, userId, other.id)).byMe : false;
  return {
    chat: { id: accountId, title: chatTitle(locale, accountId, other), blocked },
    ...(await threadOf(db, conversation, userId, page, privateFileBase(accountId))),
    unread_msgs: await unreadOf(db, userId),
  };
}

/**
 * POST /api/chat/private/{id} (message, files). Oneself and an unknown account get the same
 * 404; a new conversation also counts against chat_open_user, which bounds walking account ids.
 * A block either way refuses the message (403 chat_blocked).
 */
export async function sendPrivate(ctx: TChatContext, userId: string, accountId: number, input: TChatInput) {
  await consumeRateLimit(ctx.db, 'chat_message_user', userId);
  const { text, files } = parseMessage(input);
  const other = await otherUser(ctx.db, userId, accountId);
  const existing = other ? await findPrivate(ctx.db, userId, other.id) : null;
  if (!existing) await consumeRateLimit(ctx.db, 'chat_open_user', userId);
  if (!other) throw chatNotFound();
  const refuseIfBlocked = async (db: Queryable) => {
    const blocks = await blockState(db, userId, other.id);
    if (blocks.byMe) throw new AppError('chat_blocked', { key: 'chat.you_blocked' });
    if (blocks.byOther) throw new AppError('chat_blocked');
  };
  await refuseIfBlocked(ctx.db);
  const [a, b] = pair(userId, other.id);
  const { conversation, messageId } = await writeMessage(ctx, userId, { files, signal: input.signal }, async (tx, stored) => {
    const conversation = await lockConversation(tx, 'private', a, b);
    await refuseIfBlocked(tx);
    const messageId = await insertMessage(tx, conversation, { userId }, text, stored);
    await emitChatEvents(tx, conversation, messageId, [userId, other.id]);
    return { conversation, messageId };
  });
  const [message] = await messagesOf(ctx.db, conversation, userId, [messageId], 0, privateFileBase(accountId));
  return { message: message!, unread_msgs: await unreadOf(ctx.db, userId) };
}

/** POST /api/chat/private/read/{id} {last_read_message}: no conversation, nothing to move (0). */
export async function readPrivate(db: Db, userId: string, accountId: number, lastRead: number) {
  const other = await otherUser(db, userId, accountId);
  const conversation = other ? await findPrivate(db, userId, other.id) : null;
  const cursor = conversation ? await db.transaction((tx) => moveAndEmit(tx, conversation, userId, lastRead)) : 0;
  return { last_read_message: cursor, unread_msgs: await unreadOf(db, userId) };
}

export async function findPrivateFile(db: Queryable, userId: string, accountId: number, fileId: string) {
  const other = await otherUser(db, userId, accountId);
  const conversation = other ? await findPrivate(db, userId, other.id) : null;
  return conversation ? fileIn(db, conversation.id, fileId) : null;
}

/** POST /api/chat/private/block/{id} {blocked}: the caller stops (or resumes) messages with that account. */
export async function setBlocked(db: Queryable, userId: string, accountId: number, blocked: boolean) {
  const other = await otherUser(db, userId, accountId);
  if (!other) throw chatNotFound();
  if (blocked) await db.query('INSERT INTO chat_blocks (user_id, blocked_id) VALUES ($1, $2) ON CONFLICT DO NOTHING', [userId, other.id]);
  else await db.query('DELETE FROM chat_blocks WHERE user_id = $1 AND blocked_id = $2', [userId, other.id]);
  return { blocked };
}

/** POST /api/chat/private/report/{id} {reason}: for operators (chat:reports); only a conversation that exists. */
export async function reportChat(db: Queryable, userId: string, accountId: number, reason: string) {
  const other = await otherUser(db, userId, accountId);
  const conversation = other ? await findPrivate(db, userId, other.id) : null;
  if (!conversation) throw chatNotFound();
  await db.query('INSERT INTO chat_reports (conversation_id, reporter_id, reason) VALUES ($1, $2, $3)', [conversation.id, userId, reason]);
  return {};
}

// ---- operators (core CLI) ----------------------------------------------------------------------------

export { checkAndStore as checkAndStoreChatFiles, insertMessage, lockConversation, messagesOf, unreadIn, fileIn };
