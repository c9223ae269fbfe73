import { z } from 'zod';
import { ZPasskeyAnswerText } from './passkeys.ts';

/*
 * Mail preferences (GET/POST /api/config/mailing) and the one-click unsubscribe
 * (GET/POST /api/mail/unsubscribe?t=). Security mails have no switch.
 */

/**
 * The optional mails: news, referral programme mails (invitations, bonus notices), chat digests,
 * and the money mails by kind: deposits credited, withdrawals sent or failed, transfers
 * received, cards ordered and issued.
 */
export const MAIL_TOPICS = ['news', 'referral', 'chat_digest', 'deposits', 'withdrawals', 'transfers', 'cards'] as const;
export type TMailTopic = (typeof MAIL_TOPICS)[number];

const switches = <T extends z.ZodType>(of: T) => Object.fromEntries(MAIL_TOPICS.map((topic) => [topic, of])) as Record<TMailTopic, T>;

export const ZMailPreferences = z.object(switches(z.boolean()));
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
export const ZMailingBody = z.object(switches(ZFlag.optional()));
export type TMailingBody = z.infer<typeof ZMailingBody>;

/** The anti-phishing code: letters, digits and spaces (any script), 4 to 32 characters. */
export const ANTI_PHISHING_PATTERN = /^[\p{L}\p{N}][\p{L}\p{N} ]{2,30}[\p{L}\p{N}]$/u;

export const ZMailingResponse = z.object({
  status: z.literal('ok'),
  message: z.string().optional(),
  mailing: ZMailPreferences,
  /** The phrase printed at the top of every mail to this account; null: none chosen. */
  anti_phishing_code: z.string().nullable().optional(),
});

/**
 * POST /api/config/anti_phishing: a new code, or an empty one to remove it; with the second
 * factor's code when 2FA is on (a stolen session alone cannot change what mails prove).
 */
export const ZAntiPhishingBody = z.object({
  anti_phishing_code: z
    .string()
    .trim()
    .refine((code) => code === '' || ANTI_PHISHING_PATTERN.test(code), 'mailprefs.anti_phishing_invalid'),
  code: z.string().trim().max(64, 'validation.invalid').optional(),
  passkey: ZPasskeyAnswerText,
});
export type TAntiPhishingBody = z.infer<typeof ZAntiPhishingBody>;
export const ZAntiPhishingResponse = z.object({ status: z.literal('ok'), message: z.string(), anti_phishing_code: z.string().nullable() });
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
