import { z } from 'zod';
import { ZEmail } from './auth.ts';
import { LOCALES } from './constants.ts';
import { HISTORY_MAX_PAGE_SIZE, HISTORY_PAGE_SIZE, historyPageSchema } from './money.ts';
import { ZVisibleText } from './text.ts';

/*
 * The referral programme: invite codes, terms and totals, referees, bonus history
 * (aggregated per day and referee, never per trade), invitations by mail.
 */

/** The first-party cookie the BFF keeps a landing page's `ref` in (first touch wins, 30 days). */
export const REFERRAL_COOKIE = 'obmen_ref';
export const REFERRAL_COOKIE_MAX_AGE_S = 30 * 24 * 60 * 60;
/** BFF → core: the code of that cookie, on sign-up calls. The BFF drops what a client sends. */
export const REFERRAL_HEADER = 'x-obmen-ref';
/** Invite codes: 6-16 capitals and digits. */
export const REFERRAL_CODE_PATTERN = /^[A-Z0-9]{6,16}$/;
/** Labelled codes a user may have besides the main one. */
export const REFERRAL_MAX_CODES = 5;
export const REFERRAL_MAILING_MAX = 10;
/** An address gets at most one invitation in this many days, whoever sends it. */
export const REFERRAL_INVITE_EVERY_DAYS = 30;

export function isReferralCode(value: unknown): value is string {
  return typeof value === 'string' && REFERRAL_CODE_PATTERN.test(value);
}

/** `ref=…` of a landing page or a cookie: the code, upper-cased, or null. */
export function readReferralCode(value: unknown): string | null {
  if (typeof value !== 'string') return null;
  const code = value.trim().toUpperCase();
  return isReferralCode(code) ? code : null;
}

/** The cookie that remembers it: HttpOnly, SameSite=Lax, Secure over https (as the session cookie). */
export function referralCookie(code: string, secure: boolean): string {
  return `${REFERRAL_COOKIE}=${code}; Max-Age=${REFERRAL_COOKIE_MAX_AGE_S}; Path=/; HttpOnly; SameSite=Lax${secure ? '; Secure' : ''}`;
}

export const ZInviteCode = z.object({
  code: z.string(),
  /** null: the main code */
  label: z.string().nullable(),
  link: z.string(),
  created_at: z.string(),
  referees: z.number().int(),
});
export type TInviteCode = z.infer<typeof ZInviteCode>;

/** GET/POST /api/referral/invite: the main code and link, and every active code. */
export const ZInviteResponse = z.object({
  status: z.literal('ok'),
  message: z.string().optional(),
  code: z.string(),
  link: z.string(),
  codes: z.array(ZInviteCode),
});
export type TInviteResponse = z.infer<typeof ZInviteResponse>;

/** POST /api/referral/invite: `label` creates a labelled code; `retire` retires one of the user's codes. */
export const ZInviteBody = z
  .object({
    label: ZVisibleText(40).min(1, 'validation.required').optional(),
    retire: z.string().trim().toUpperCase().regex(REFERRAL_CODE_PATTERN, 'validation.invalid').optional(),
  })
  .refine((body) => (body.label === undefined) !== (body.retire === undefined), { error: 'validation.required', path: ['label'] });
export type TInviteBody = z.infer<typeof ZInviteBody>;

export const ZReferralTerms = z.object({
  /** the share of each fee, a decimal fraction ("0.2") */
  share: z.string(),
  currency: z.string(),
  hold_seconds: z.number().int(),
  min_payout: z.string(),
  enabled: z.boolean(),
});
export type TReferralTerms = z.infer<typeof ZReferralTerms>;

export const ZReferralTotals = z.object({ currency: z.string(), pending: z.string(), available: z.string(), paid: z.string() });
export type TReferralTotals = z.infer<typeof ZReferralTotals>;

/** GET /api/referral/info. `terms` null: no programme set up. */
export const ZReferralInfoResponse = z.object({ status: z.literal('ok'), terms: ZReferralTerms.nullable(), totals: ZReferralTotals.nullable() });
export type TReferralInfoResponse = z.infer<typeof ZReferralInfoResponse>;

export const ZAmountIn = z.object({ currency: z.string(), amount: z.string() });

export const ZReferee = z.object({
  id: z.string(),
  email: z.string(),
  joined_at: z.string(),
  code: z.string(),
  code_label: z.string().nullable(),
  /** paid a fee in the last 30 days */
  active: z.boolean(),
  earned: z.array(ZAmountIn),
});
export type TReferee = z.infer<typeof ZReferee>;

export const ZPageQuery = z.object({
  page: z.coerce.number().int().min(1).max(1_000_000).default(1),
  per_page: z.coerce.number().int().min(1).max(HISTORY_MAX_PAGE_SIZE).default(HISTORY_PAGE_SIZE),
});

export const ZRefereeListResponse = z.object({ status: z.literal('ok'), ...historyPageSchema(ZReferee).shape });
export type TRefereeListResponse = z.infer<typeof ZRefereeListResponse>;

export const ZRecruitParams = z.object({ id: z.string().regex(/^[1-9][0-9]{0,17}$/) });

/** GET /api/referral/recruit/{id}: one of the user's referees, with earnings per month. */
export const ZRecruitResponse = z.object({
  status: z.literal('ok'),
  recruit: ZReferee.extend({ months: z.array(ZAmountIn.extend({ month: z.string() })) }),
});
export type TRecruitResponse = z.infer<typeof ZRecruitResponse>;

/** One line of the bonus history: one referee's bonuses of one day (UTC), never one trade. */
export const ZBonusDay = z.object({
  date: z.string(),
  referee_id: z.string(),
  referee: z.string(),
  currency: z.string(),
  amount: z.string(),
  /** of it, already paid into the wallet */
  paid: z.string(),
});
export type TBonusDay = z.infer<typeof ZBonusDay>;

export const ZBonusHistoryQuery = ZPageQuery.extend({ format: z.enum(['json', 'csv']).default('json') });
export const ZBonusHistoryResponse = z.object({ status: z.literal('ok'), ...historyPageSchema(ZBonusDay).shape });
export type TBonusHistoryResponse = z.infer<typeof ZBonusHistoryResponse>;

/** Addresses typed into one field: separated by commas, semicolons, spaces or new lines. */
export function splitAddresses(text: string): string[] {
  return text
    .split(/[\s,;]+/)
    .map((part) => part.trim())
    .filter(Boolean);
}

/** POST /api/referral/mailing: up to 10 addresses (a list, or one text), the mail's language. */
export const ZReferralMailingBody = z.object({
  addresses: z.preprocess(
    (value) => (typeof value === 'string' ? splitAddresses(value) : value),
    z
      .array(z.string())
      .min(1, 'validation.required')
      .max(REFERRAL_MAILING_MAX, 'referral.too_many')
      .refine((list) => list.every((address) => ZEmail.safeParse(address).success), { error: 'referral.addresses_invalid' }),
  ),
  locale: z.enum(LOCALES),
});
export type TReferralMailingBody = z.infer<typeof ZReferralMailingBody>;

export const ZReferralMailingResponse = z.object({ status: z.literal('ok'), message: z.string(), accepted: z.number().int() });
