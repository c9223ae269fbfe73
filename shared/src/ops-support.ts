import { z } from 'zod';
import { ZChatFile } from './chat.ts';

/*
 * The back office's support desk (/ops/support): the open support conversations, longest waiting
 * first, each with its claim; one conversation's messages; replies, closing and reopening; saved
 * replies; the reported private chats; and every queue's clock (GET /api/ops/queues).
 */

/** Who holds a conversation: a colleague's live claim is shown, not taken. */
export const ZOpsClaim = z.object({ operator: z.string(), mine: z.boolean(), lapses_at: z.string() });
export type TOpsClaim = z.infer<typeof ZOpsClaim>;

export const ZOpsSupportItem = z.object({
  account_id: z.number().int(),
  status: z.enum(['open', 'closed']),
  /** Since when the customer's oldest unanswered message waits; null: nothing waits. */
  waiting_since: z.string().nullable(),
  waited_ms: z.number().int().nullable(),
  overdue: z.boolean(),
  /** The customer's messages since the last answer. */
  unread: z.number().int(),
  messages: z.number().int(),
  last_message: z.string(),
  last_message_at: z.string().nullable(),
  claim: ZOpsClaim.nullable(),
});
export type TOpsSupportItem = z.infer<typeof ZOpsSupportItem>;

/** GET /api/ops/support?status= */
export const ZOpsSupportListQuery = z.object({ status: z.enum(['open', 'closed']).default('open') });
export const ZOpsSupportListResponse = z.object({
  status: z.literal('ok'),
  target_ms: z.number().int(),
  /** The customers' unanswered messages over every open conversation (the desk's header). */
  unread: z.number().int(),
  conversations: z.array(ZOpsSupportItem),
});
export type TOpsSupportListResponse = z.infer<typeof ZOpsSupportListResponse>;

/** A conversation by its customer's account id. */
export const ZOpsSupportParams = z.object({ account: z.coerce.number().int().min(1) });
export const ZOpsSupportFileParams = ZOpsSupportParams.extend({ file: z.uuid() });

export const ZOpsSupportMessage = z.object({
  id: z.number().int(),
  author: z.enum(['customer', 'operator']),
  text: z.string(),
  files: z.array(ZChatFile),
  created_at: z.string(),
});
export type TOpsSupportMessage = z.infer<typeof ZOpsSupportMessage>;

/** GET /api/ops/support/{account}: the newest messages, oldest first. */
export const ZOpsSupportThreadResponse = z.object({
  status: z.literal('ok'),
  conversation: ZOpsSupportItem,
  messages: z.array(ZOpsSupportMessage),
});
export type TOpsSupportThreadResponse = z.infer<typeof ZOpsSupportThreadResponse>;

/** POST /api/ops/support/{account}/claim */
export const ZOpsClaimResponse = z.object({ status: z.literal('ok'), claim: ZOpsClaim });

/** POST /api/ops/support/{account}/reply (multipart: text, file0..n) */
export const ZOpsSupportReplyBody = z.object({ text: z.string().optional() });
export const ZOpsSupportReplyResponse = z.object({ status: z.literal('ok'), message: ZOpsSupportMessage });

export const ZOpsSavedReply = z.object({ id: z.number().int(), locale: z.enum(['ru', 'en']), title: z.string(), body: z.string() });
export type TOpsSavedReply = z.infer<typeof ZOpsSavedReply>;
/** GET /api/ops/support/replies: both languages, the operator picks. */
export const ZOpsSavedRepliesResponse = z.object({ status: z.literal('ok'), replies: z.array(ZOpsSavedReply) });

export const ZOpsReportMessage = z.object({ id: z.number().int(), from: z.number().int(), text: z.string(), files: z.number().int(), created_at: z.string() });
export const ZOpsChatReport = z.object({
  id: z.number().int(),
  reporter: z.number().int(),
  reported: z.number().int(),
  reason: z.string(),
  created_at: z.string(),
  waited_ms: z.number().int(),
  /** The conversation's latest messages, oldest first. */
  messages: z.array(ZOpsReportMessage),
});
export type TOpsChatReport = z.infer<typeof ZOpsChatReport>;
/** GET /api/ops/chat-reports: not yet resolved, oldest first. */
export const ZOpsChatReportsResponse = z.object({ status: z.literal('ok'), target_ms: z.number().int(), reports: z.array(ZOpsChatReport) });

/** POST /api/ops/chat-reports/{id}/resolve */
export const ZOpsReportParams = z.object({ id: z.coerce.number().int().min(1) });
export const ZOpsReportResolveBody = z.object({
  outcome: z.enum(['no_violation', 'violation']),
  note: z.string().max(1000, 'validation.too_long').default(''),
});

export const OPS_QUEUES = [
  'support',
  'chat_reports',
  'kyc',
  'withdrawals',
  'webhooks_failed',
  'bank_unmatched',
  'chain_waiting',
  'chain_held',
  'card_orders',
  'suspense',
] as const;
export const ZOpsQueue = z.object({
  name: z.enum(OPS_QUEUES),
  target_ms: z.number().int(),
  count: z.number().int(),
  /** The oldest item's age; null: the queue is empty. */
  oldest_ms: z.number().int().nullable(),
  overdue: z.number().int(),
});
export type TOpsQueue = z.infer<typeof ZOpsQueue>;
/** GET /api/ops/queues */
export const ZOpsQueuesResponse = z.object({ status: z.literal('ok'), queues: z.array(ZOpsQueue) });

/**
 * The desk's live state over /ws?ops=1, sent when it changes: the customers' unanswered messages,
 * the conversations waiting, and the newest message's id (any new message changes it: refetch).
 */
export type TOpsSocketMessage = { type: 'ops.support'; unread: number; waiting: number; last: number };
