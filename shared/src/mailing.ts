import { z } from 'zod';

/*
 * Mail preferences (GET/POST /api/config/mailing) and the one-click unsubscribe
 * (GET/POST /api/mail/unsubscribe?t=). Security mails have no switch.
 */

/** The optional mails: news, referral programme mails (invitations, bonus notices), chat digests. */
export const MAIL_TOPICS = ['news', 'referral', 'chat_digest'] as const;
export type TMailTopic = (typeof MAIL_TOPICS)[number];

export const ZMailPreferences = z.object({ news: z.boolean(), referral: z.boolean(), chat_digest: z.boolean() });
export type TMailPreferences = z.infer<typeof ZMailPreferences>;

/** A form checkbox or a JSON boolean: true/on/1 and false/off/0. */
const ZFlag = z.preprocess(
  (value) => {
    if (typeof value !== 'string') return value;
    const text = value.trim().toLowerCase();
    if (text === 'true' || text === 'on' || text === '1') return true;
    if (text === 'false' || text === 'off' || text === '0') return false;
    return value;
  },
  z.boolean({ error: 'validation.invalid' }),
);

/** POST /api/config/mailing: the switches to change (a missing one stays). */
export const ZMailingBody = z.object({ news: ZFlag.optional(), referral: ZFlag.optional(), chat_digest: ZFlag.optional() });
export type TMailingBody = z.infer<typeof ZMailingBody>;

export const ZMailingResponse = z.object({ status: z.literal('ok'), message: z.string().optional(), mailing: ZMailPreferences });
export type TMailingResponse = z.infer<typeof ZMailingResponse>;

export const ZUnsubscribeQuery = z.object({ t: z.string().max(800) });

/** What an unsubscribe link names: the address (masked) and the topic. */
export const ZUnsubscribeResponse = z.object({
  status: z.literal('ok'),
  topic: z.enum(MAIL_TOPICS),
  address: z.string(),
  unsubscribed: z.boolean(),
  message: z.string().optional(),
});
export type TUnsubscribeResponse = z.infer<typeof ZUnsubscribeResponse>;

/** An address as others may see it: first letter, stars, the domain (`a***@example.com`). */
export function maskEmail(address: string): string {
  const at = address.lastIndexOf('@');
  if (at < 1) return '***';
  return `${address.slice(0, 1)}***${address.slice(at)}`;
}
