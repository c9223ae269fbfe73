import { z } from 'zod';
import { BIDI_CONTROLS } from './text.ts';
import { ZUnreadMsgs } from './envelope.ts';

/*
 * Chats (spec §3 "Chat", "Chat message", §7 "Support" and "Chat"): the support conversation
 * and private conversations by the other user's account id. Messages are plain text (links
 * made clickable by the page, never HTML) with files from the private storage.
 */

/** A message's text, in characters (a 1 MB message is refused with this field message). */
export const CHAT_MESSAGE_MAX_CHARS = 4000;
/** A multipart text field is cut (and refused) beyond this many bytes: 4,000 characters of UTF-8 fit. */
export const CHAT_FIELD_MAX_BYTES = 4 * CHAT_MESSAGE_MAX_CHARS + 1024;
/** Messages per page of GET /api/support and GET /api/chat/private/{id} (newest page first). */
export const CHAT_PAGE_SIZE = 50;
export const CHAT_REPORT_MAX_CHARS = 1000;

/** Trimmed, bounded, no bidirectional controls (as every text one user writes and another reads). */
export function ZChatText(max: number, tooLong: 'chat.message_too_long' | 'chat.report_too_long') {
  return z
    .string()
    .trim()
    .max(max, tooLong)
    .refine((value) => !BIDI_CONTROLS.test(value), { error: 'validation.bidi_control' });
}

/** The text of a new message: `text` (support) or `message` (private chats); spec §3 names both. */
export const ZChatMessageFields = z.object({
  text: ZChatText(CHAT_MESSAGE_MAX_CHARS, 'chat.message_too_long').optional(),
  message: ZChatText(CHAT_MESSAGE_MAX_CHARS, 'chat.message_too_long').optional(),
});
export type TChatMessageFields = z.infer<typeof ZChatMessageFields>;

export const ZChatFile = z.object({
  id: z.uuid(),
  mime: z.string(),
  size: z.number().int(),
  /** A re-encoded image: shown as a preview. */
  image: z.boolean(),
  /** Where the participants (through the BFF) read it. */
  url: z.string(),
});
export type TChatFile = z.infer<typeof ZChatFile>;

export const ZChatAuthor = z.enum(['me', 'other', 'operator']);
export type TChatAuthor = z.infer<typeof ZChatAuthor>;

export const ZChatMessage = z.object({
  id: z.number().int(),
  author: ZChatAuthor,
  text: z.string(),
  files: z.array(ZChatFile),
  created_at: z.string(),
});
export type TChatMessage = z.infer<typeof ZChatMessage>;

export const ZChatPageQuery = z.object({ page: z.coerce.number().int().min(1).max(100_000).default(1) });

export const ZChatReadBody = z.object({ last_read_message: z.coerce.number().int().min(0).max(Number.MAX_SAFE_INTEGER) });
export type TChatReadBody = z.infer<typeof ZChatReadBody>;

/** /api/chat/private/{id}: the other user's 8-digit account id. */
export const ZChatPrivateParams = z.object({
  id: z
    .string()
    .regex(/^\d{8}$/)
    .transform(Number),
});
export const ZChatFileParams = z.object({ file: z.uuid() });
export const ZChatPrivateFileParams = ZChatPrivateParams.extend(ZChatFileParams.shape);

export const ZChatBlockBody = z.object({
  blocked: z.preprocess((value) => (value === 'true' ? true : value === 'false' ? false : value), z.boolean()),
});
export const ZChatReportBody = z.object({ reason: ZChatText(CHAT_REPORT_MAX_CHARS, 'chat.report_too_long').default('') });

const ZUnreadEnvelope = { unread_msgs: ZUnreadMsgs };

/** A page of one conversation, oldest first within the page; page 1 is the newest. */
export const ZChatThread = z.object({
  messages: z.array(ZChatMessage),
  page: z.number().int(),
  pages: z.number().int(),
  total: z.number().int(),
  /** The caller's read cursor in this conversation. */
  last_read_message: z.number().int(),
});
export type TChatThread = z.infer<typeof ZChatThread>;

export const ZSupportResponse = z.object({
  status: z.literal('ok'),
  chat: z.object({ id: z.literal('support'), closed: z.boolean() }),
  ...ZChatThread.shape,
  ...ZUnreadEnvelope,
});
export type TSupportResponse = z.infer<typeof ZSupportResponse>;

export const ZPrivateChatInfo = z.object({
  id: z.number().int(),
  title: z.string(),
  /** The caller blocked this account. */
  blocked: z.boolean(),
});
export type TPrivateChatInfo = z.infer<typeof ZPrivateChatInfo>;

export const ZPrivateChatResponse = z.object({ status: z.literal('ok'), chat: ZPrivateChatInfo, ...ZChatThread.shape, ...ZUnreadEnvelope });
export type TPrivateChatResponse = z.infer<typeof ZPrivateChatResponse>;

/** POST /api/support, POST /api/chat/private/{id}: the new message. */
export const ZChatSentResponse = z.object({ status: z.literal('ok'), message: ZChatMessage, ...ZUnreadEnvelope });
export type TChatSentResponse = z.infer<typeof ZChatSentResponse>;

export const ZChatReadResponse = z.object({ status: z.literal('ok'), last_read_message: z.number().int(), ...ZUnreadEnvelope });

/** Spec §3 "Chat": id (the other user's account id), title, unread_msgs. */
export const ZChatListItem = z.object({ id: z.number().int(), title: z.string(), unread_msgs: z.number().int(), blocked: z.boolean() });
export type TChatListItem = z.infer<typeof ZChatListItem>;
export const ZChatListResponse = z.object({ status: z.literal('ok'), chats: z.array(ZChatListItem), ...ZUnreadEnvelope });
export type TChatListResponse = z.infer<typeof ZChatListResponse>;

export const ZChatBlockResponse = z.object({ status: z.literal('ok'), blocked: z.boolean() });

/** The realtime event `chat.message`: a new message of one chat, as the receiving user sees it. */
export type TChatMessageEvent = { chat: 'support' | number; message: TChatMessage /** A private chat's title, as in /api/chat/list. */; title?: string };
