import type { TChatMessageEvent, TLocale, TUnreadMsgs } from '@obmen/shared';
import type { Queryable } from '../../db/index.ts';
import { recordEvent } from '../events/service.ts';
import { chatTitle, messagesOf, privateFileBase, SUPPORT_FILE_BASE, unreadOf, type TConversationRow } from './service.ts';

/**
 * Live chat: inside the transaction that writes a message or moves a read cursor,
 * each user concerned gets `unread_msgs` (their exact counters) and, for a new message,
 * `chat.message` (author and file links as that user sees them). Users in ascending id order.
 */
export async function emitChatEvents(tx: Queryable, conversation: TConversationRow, messageId: string | null, userIds: string[]): Promise<void> {
  const users = [...new Set(userIds)].sort((a, b) => (BigInt(a) < BigInt(b) ? -1 : 1));
  const accounts = await tx.query<{ id: string; account_id: number; first_name: string | null; last_name: string | null; locale: TLocale }>(
    'SELECT id::text, account_id, first_name, last_name, locale FROM users WHERE id = ANY($1::bigint[])',
    [[conversation.user_a, conversation.user_b].filter(Boolean)],
  );
  for (const userId of users) {
    const other = accounts.find((row) => row.id !== userId);
    const me = accounts.find((row) => row.id === userId);
    const chat: 'support' | number = conversation.kind === 'support' ? 'support' : other!.account_id;
    const base = chat === 'support' ? SUPPORT_FILE_BASE : privateFileBase(chat);
    if (messageId) {
      const [message] = await messagesOf(tx, conversation, userId, [messageId], 0, base);
      // A private chat's title too: the first message adds the chat to the reader's sidebar.
      const title = chat === 'support' ? undefined : chatTitle(me?.locale ?? 'ru', chat, other!);
      await recordEvent(tx, userId, 'chat.message', { chat, message: message!, ...(title && { title }) } satisfies TChatMessageEvent);
    }
    // A partial envelope, applied by the browser like any /api answer.
    await recordEvent(tx, userId, 'unread_msgs', { unread_msgs: (await unreadOf(tx, userId)) satisfies TUnreadMsgs });
  }
}
