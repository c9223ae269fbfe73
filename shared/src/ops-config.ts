import { z } from 'zod';
import { LOCALES } from './constants.ts';
import { CARD_KINDS, ZCardProduct } from './cards.ts';
import { ARTICLE_NAME, MENU_NAMES, ZArticle } from './content.ts';
import { ZAuthType, ZFooterImage, ZMenus, ZSiteSettings } from './envelope.ts';
import { ZReferralTerms } from './referral.ts';
import { LIMIT_OPERATIONS, VERIFICATION_LEVELS, ZVerificationLimit } from './verification.ts';
import {
  NOTIFICATION_BUTTONS_MAX,
  NOTIFICATION_DISPLAYS,
  NOTIFICATION_TEXT_MAX,
  NOTIFICATION_TITLE_MAX,
  NOTIFICATION_TYPES,
  ZNotificationButtonInput,
} from './notifications.ts';

/*
 * Configuration without a shell (/ops/config): what the `ops` commands set, on screens. A
 * sensitive setting is never changed by one operator: the screen proposes a `config.change`
 * request (four eyes) naming the setting and its new value; a second operator's approval runs the
 * same service the command runs. Everything else changes at once, audited with before and after.
 */

/** Referral terms as the `referral:terms` command takes them (each optional: what is given changes). */
const ZReferralTermsInput = z.object({
  share: z.string().trim().max(20).optional(),
  currency: z.string().trim().max(10).optional(),
  hold: z.string().trim().max(20).optional(),
  min: z.string().trim().max(40).optional(),
  enabled: z.enum(['true', 'false'], 'validation.invalid').optional(),
  same_ip_days: z.string().trim().max(5).optional(),
});

const ZDirection = z.enum(['deposit', 'withdraw', 'purchase'], 'validation.invalid');
const ZSystemId = z.string().trim().min(1, 'validation.required').max(60, 'validation.invalid');
const ZPriceTerm = z.string().trim().min(1, 'validation.required').max(40, 'validation.too_long').optional();

/** A payment system's terms in one currency, as `payments:system:price` takes them (fee in percent). */
export const ZPaymentPriceInput = z.object({
  direction: ZDirection,
  id: ZSystemId,
  currency: z.string().trim().min(2, 'validation.required').max(10, 'validation.invalid'),
  fee_percent: ZPriceTerm,
  fee_fixed: ZPriceTerm,
  min: ZPriceTerm,
  max: ZPriceTerm,
  confirmations: ZPriceTerm,
  /** The verification level the whole system needs (0 or 1), for every currency of it. */
  level: ZPriceTerm,
});

const ZFee = z
  .string()
  .trim()
  .regex(/^\d{1,20}(\.\d{1,18})?$/, 'validation.invalid')
  .optional();
export const CARD_PRODUCT_ID = /^[a-z0-9][a-z0-9-]{1,39}$/;
const ZCardProductId = z.string().trim().regex(CARD_PRODUCT_ID, 'validation.invalid');
/** Card limits as the commands take them: CUR:day/month, comma-separated (none: no limits). */
const ZCardLimits = z
  .string()
  .trim()
  .max(400, 'validation.too_long')
  .regex(/^(\s*[A-Za-z0-9]{2,10}\s*:\s*[\d.]+\s*\/\s*[\d.]+\s*(,|$))*$/, 'validation.invalid')
  .optional();

/**
 * A card product's prices for new orders, as `cards:product:price` takes them (major units;
 * limits as CUR:day/month,…; a new fee currency comes with both fees in it).
 */
export const ZCardPriceInput = z.object({
  id: ZCardProductId,
  issue_fee: ZFee,
  monthly_fee: ZFee,
  fee_currency: z.string().trim().min(2, 'validation.required').max(10, 'validation.invalid').optional(),
  limits: ZCardLimits,
});

const ZLimitAmount = z
  .string()
  .trim()
  .min(1, 'validation.required')
  .regex(/^\d{1,20}(\.\d{1,18})?$/, 'validation.invalid');

/** One level's limits of one operation, as `kyc:limits:set` takes them (major units of the currency). */
export const ZLevelLimitInput = z.object({
  level: z.literal(VERIFICATION_LEVELS, 'validation.invalid'),
  operation: z.enum(LIMIT_OPERATIONS, 'validation.invalid'),
  currency: z.string().trim().min(2, 'validation.required').max(10, 'validation.invalid'),
  per_24h: ZLimitAmount,
  per_30d: ZLimitAmount,
});
export type TLevelLimitInput = z.infer<typeof ZLevelLimitInput>;

const ZMoneyCurrency = z.string().trim().min(2, 'validation.required').max(10, 'validation.invalid');
const ZMoneyTerm = z.string().trim().min(1, 'validation.required').max(40, 'validation.too_long');

/** A currency's transfer terms, as `transfer:set` takes them (major units; max `none`: no maximum; fee_percent a fraction). */
export const ZTransferTermsInput = z.object({
  currency: ZMoneyCurrency,
  min: ZMoneyTerm.optional(),
  max: ZMoneyTerm.optional(),
  fee_percent: ZMoneyTerm.optional(),
  fee_fixed: ZMoneyTerm.optional(),
  enabled: z.enum(['true', 'false'], 'validation.invalid').optional(),
});
export type TTransferTermsInput = z.infer<typeof ZTransferTermsInput>;
/** A withdrawal amount per currency, as `withdraw:large` and `withdraw:auto` take it (major units; 0: none). */
export const ZWithdrawAmountInput = z.object({ currency: ZMoneyCurrency, amount: ZMoneyTerm });

/** The sensitive settings, each with its value: the parameters of a `config.change` request. */
export const ZConfigChange = z.discriminatedUnion('setting', [
  z.object({ setting: z.literal('site.auth_type'), value: ZAuthType }),
  z.object({ setting: z.literal('site.site_blocked'), value: z.boolean() }),
  z.object({ setting: z.literal('referral.terms'), value: ZReferralTermsInput }),
  z.object({ setting: z.literal('payments.price'), value: ZPaymentPriceInput }),
  z.object({ setting: z.literal('cards.price'), value: ZCardPriceInput }),
  z.object({ setting: z.literal('limits.level'), value: ZLevelLimitInput }),
  z.object({ setting: z.literal('transfer.terms'), value: ZTransferTermsInput }),
  z.object({ setting: z.literal('withdraw.large'), value: ZWithdrawAmountInput }),
  z.object({ setting: z.literal('withdraw.auto'), value: ZWithdrawAmountInput }),
]);
export type TConfigChange = z.infer<typeof ZConfigChange>;
export type TConfigSetting = TConfigChange['setting'];

/** GET /api/ops/config/referral: none until share and currency are first set. */
export const ZOpsReferralConfigResponse = z.object({
  status: z.literal('ok'),
  terms: ZReferralTerms.extend({ same_ip_days: z.number().int() }).nullable(),
});

/** GET /api/ops/config/site */
export const ZOpsSiteConfigResponse = z.object({ status: z.literal('ok'), settings: ZSiteSettings });

const ZOpsAccountId = z.number().int().min(10000000, 'validation.invalid').max(99999999, 'validation.invalid');

const ZComposedText = z.object({
  locale: z.enum(LOCALES),
  title: z.string().trim().min(1, 'validation.required').max(NOTIFICATION_TITLE_MAX, 'validation.too_long'),
  /** HTML: sanitised by the core before it is stored or previewed. */
  text: z.string().max(NOTIFICATION_TEXT_MAX, 'validation.too_long').default(''),
  buttons: z.array(ZNotificationButtonInput).max(NOTIFICATION_BUTTONS_MAX).default([]),
});

/** POST /api/ops/config/notifications/preview: the texts as a customer would get them. */
export const ZOpsNotificationPreviewBody = z.object({ texts: z.array(ZComposedText).min(1).max(LOCALES.length) });
export const ZOpsNotificationPreviewResponse = z.object({
  status: z.literal('ok'),
  texts: z.array(z.object({ locale: z.enum(LOCALES), title: z.string(), text: z.string(), buttons: z.array(ZNotificationButtonInput) })),
});

/** POST /api/ops/config/notifications: one notification to everyone, or one each to chosen accounts. */
export const ZOpsNotificationBody = z
  .object({
    to: z.enum(['everyone', 'accounts'], 'validation.invalid'),
    accounts: z.array(ZOpsAccountId).max(100, 'validation.too_long').default([]),
    display: z.enum(NOTIFICATION_DISPLAYS, 'validation.invalid'),
    type: z.enum(NOTIFICATION_TYPES, 'validation.invalid'),
    closable: z.boolean().default(true),
    /** Until when it shows; none: until closed or deleted. */
    expires_at: z.iso.datetime({ offset: true, message: 'validation.invalid' }).nullable().default(null),
    /** When it goes out; none: now. A later time stores it until the `notifications-scheduled` job publishes it. */
    send_at: z.iso.datetime({ offset: true, message: 'validation.invalid' }).nullable().default(null),
    texts: z
      .array(ZComposedText)
      .min(1, 'validation.required')
      .max(LOCALES.length)
      .refine((texts) => new Set(texts.map((text) => text.locale)).size === texts.length, 'validation.invalid'),
  })
  .refine((body) => body.to === 'everyone' || body.accounts.length > 0, { path: ['accounts'], message: 'validation.required' })
  .refine((body) => !body.send_at || !body.expires_at || Date.parse(body.expires_at) > Date.parse(body.send_at), {
    path: ['expires_at'],
    message: 'ops.config.notify_expires_before_send',
  });
export type TOpsNotificationBody = z.input<typeof ZOpsNotificationBody>;
/** The notifications published now, or the scheduled one's number (`ids` empty until it goes out). */
export const ZOpsNotificationResponse = z.object({ status: z.literal('ok'), ids: z.array(z.number().int()), scheduled: z.number().int().nullable() });

export const ZOpsNotificationRow = z.object({
  id: z.number().int(),
  account_id: z.number().int().nullable(),
  display: z.string(),
  type: z.string(),
  closable: z.boolean(),
  locales: z.array(z.string()),
  title: z.string(),
  created_at: z.string(),
  expires_at: z.string().nullable(),
  closed_by: z.number().int(),
});
/** A notification waiting for its time. */
export const ZOpsScheduledRow = z.object({
  id: z.number().int(),
  send_at: z.string(),
  to: z.enum(['everyone', 'accounts']),
  accounts: z.array(z.number().int()),
  display: z.string(),
  locales: z.array(z.string()),
  title: z.string(),
  scheduled_by: z.string(),
});
/** GET /api/ops/config/notifications: the latest, newest first; the scheduled ones, soonest first. */
export const ZOpsNotificationsResponse = z.object({
  status: z.literal('ok'),
  notifications: z.array(ZOpsNotificationRow),
  scheduled: z.array(ZOpsScheduledRow),
});
export const ZOpsNotificationParams = z.object({ id: z.string().regex(/^[1-9]\d{0,17}$/, 'validation.invalid') });

/** A pair's terms as the `rates:list` command shows them (amounts in major units of src). */
export const ZOpsRateRow = z.object({
  src: z.string(),
  dst: z.string(),
  rate: z.string(),
  spread: z.string(),
  fee_percent: z.string(),
  fee_fixed: z.string(),
  min_amount: z.string(),
  max_amount: z.string().nullable(),
  enabled: z.boolean(),
  source: z.string(),
  updated_at: z.string(),
});
export type TOpsRateRow = z.infer<typeof ZOpsRateRow>;
/** GET /api/ops/config/rates: every pair, and where quotes take their mid rates from now. */
export const ZOpsRatesResponse = z.object({
  status: z.literal('ok'),
  pairs: z.array(ZOpsRateRow),
  /** `table`: the operators' rates; `feed`: the price feed, its last good fetch (null: none yet). */
  feed: z.object({ source: z.string(), fetched_at: z.string().nullable() }),
});
const ZTermText = z.string().trim().min(1, 'validation.required').max(40, 'validation.too_long').optional();
/** POST /api/ops/config/rates: `rates:set` — only what is given changes; a new pair needs a rate. */
export const ZOpsRateBody = z.object({
  src: z.string().trim().min(2, 'validation.required').max(10, 'validation.invalid'),
  dst: z.string().trim().min(2, 'validation.required').max(10, 'validation.invalid'),
  rate: ZTermText,
  spread: ZTermText,
  fee_percent: ZTermText,
  fee_fixed: ZTermText,
  min: ZTermText,
  max: ZTermText,
  enabled: z.enum(['true', 'false'], 'validation.invalid').optional(),
});
export type TOpsRateBody = z.infer<typeof ZOpsRateBody>;
export const ZOpsRateResponse = z.object({ status: z.literal('ok'), pair: ZOpsRateRow });

/** A payment system in one currency, as `payments:systems` lists it (amounts in major units, fee in percent). */
export const ZOpsPaymentSystemRow = z.object({
  direction: z.string(),
  id: z.string(),
  provider: z.string(),
  currency: z.string(),
  enabled: z.boolean(),
  system_enabled: z.boolean(),
  currency_enabled: z.boolean(),
  level: z.number().int(),
  fee_percent: z.string(),
  fee_fixed: z.string(),
  min: z.string(),
  max: z.string(),
  confirmations: z.number().int(),
});
export type TOpsPaymentSystemRow = z.infer<typeof ZOpsPaymentSystemRow>;
/** GET /api/ops/config/payments */
export const ZOpsPaymentSystemsResponse = z.object({ status: z.literal('ok'), systems: z.array(ZOpsPaymentSystemRow) });
/** POST /api/ops/config/payments/enabled: a whole system on or off, or one of its currencies. */
export const ZOpsPaymentEnableBody = z.object({
  direction: ZDirection,
  id: ZSystemId,
  currency: z.string().trim().min(2).max(10, 'validation.invalid').optional(),
  enabled: z.boolean(),
});
export type TOpsPaymentEnableBody = z.infer<typeof ZOpsPaymentEnableBody>;

/** GET /api/ops/config/articles: every article and language, without bodies. */
export const ZOpsArticlesResponse = z.object({
  status: z.literal('ok'),
  articles: z.array(z.object({ name: z.string(), locale: z.enum(LOCALES), title: z.string(), bytes: z.number().int(), updated_at: z.string() })),
});
export const ZOpsArticleParams = z.object({ name: z.string().regex(ARTICLE_NAME, 'validation.invalid'), locale: z.enum(LOCALES, 'validation.invalid') });
/** GET /api/ops/config/articles/{name}/{locale}: the stored (sanitised) HTML, to edit as Markdown (HTML passes through). */
export const ZOpsArticleResponse = z.object({ status: z.literal('ok'), article: ZArticle });
const ZArticleMarkdown = z.string().max(500_000, 'validation.too_long');
/** POST /api/ops/config/articles/preview: the Markdown as a page would serve it (the sanitiser's result). */
export const ZOpsArticlePreviewBody = z.object({ markdown: ZArticleMarkdown });
export const ZOpsArticlePreviewResponse = z.object({ status: z.literal('ok'), html: z.string() });
/** POST /api/ops/config/articles: `article:set` with Markdown. */
export const ZOpsArticleBody = z.object({
  name: z.string().trim().regex(ARTICLE_NAME, 'validation.invalid'),
  locale: z.enum(LOCALES, 'validation.invalid'),
  title: z.string().trim().min(1, 'validation.required').max(200, 'validation.too_long'),
  markdown: ZArticleMarkdown.min(1, 'validation.required'),
});
export type TOpsArticleBody = z.infer<typeof ZOpsArticleBody>;

/** GET /api/ops/config/menus: the three menus in each language. */
export const ZOpsMenusResponse = z.object({ status: z.literal('ok'), menus: z.object({ ru: ZMenus, en: ZMenus }) });
const ZMenuTarget = z.object({
  locale: z.enum(LOCALES, 'validation.invalid'),
  menu: z.enum(MENU_NAMES, 'validation.invalid'),
  /** A site path without its slash ("article/fees") or an https address, as `menu:set` takes it. */
  url: z
    .string()
    .trim()
    .max(200, 'validation.too_long')
    .regex(/^([A-Za-z0-9][A-Za-z0-9/_.~%?=&-]*|https:\/\/[^\s\\]+)$/, 'validation.invalid'),
});
/** POST /api/ops/config/menus: an item added, or the one with the same language, menu and address changed. */
export const ZOpsMenuItemBody = ZMenuTarget.extend({
  title: z.string().trim().min(1, 'validation.required').max(100, 'validation.too_long'),
  order: z.number().int().min(-1_000_000).max(1_000_000).default(0),
});
export type TOpsMenuItemBody = z.infer<typeof ZOpsMenuItemBody>;
/** POST /api/ops/config/menus/remove */
export const ZOpsMenuRemoveBody = ZMenuTarget;
export type TOpsMenuRemoveBody = z.infer<typeof ZOpsMenuRemoveBody>;

/** A card product as `cards:products` lists it, amounts in major units (every currency, enabled or not). */
export const ZOpsCardProductRow = ZCardProduct.omit({ description: true, image: true }).extend({ enabled: z.boolean() });
export type TOpsCardProductRow = z.infer<typeof ZOpsCardProductRow>;
/** GET /api/ops/config/cards */
export const ZOpsCardProductsResponse = z.object({ status: z.literal('ok'), products: z.array(ZOpsCardProductRow) });
const ZProductText = (max: number) => z.string().trim().min(1, 'validation.required').max(max, 'validation.too_long');
/**
 * POST /api/ops/config/cards: a new product as `cards:product:create` takes it (major units;
 * currencies comma-separated, limits as CUR:day/month,…); it starts out of the catalogue.
 */
export const ZOpsCardCreateBody = z.object({
  id: ZCardProductId,
  kind: z.enum(CARD_KINDS, 'validation.invalid'),
  name_ru: ZProductText(100),
  name_en: ZProductText(100),
  description_ru: z.string().trim().max(1000, 'validation.too_long').optional(),
  description_en: z.string().trim().max(1000, 'validation.too_long').optional(),
  currencies: ZProductText(100),
  fee_currency: z.string().trim().min(2, 'validation.required').max(10, 'validation.invalid'),
  issue_fee: ZFee,
  monthly_fee: ZFee,
  limits: ZCardLimits,
  /** Physical cards: 1 to 90 days. */
  delivery_days: z
    .string()
    .trim()
    .regex(/^\d{1,2}$/, 'validation.invalid')
    .refine((days) => Number(days) >= 1 && Number(days) <= 90, 'validation.invalid')
    .optional(),
});
export type TOpsCardCreateBody = z.infer<typeof ZOpsCardCreateBody>;

/** GET /api/ops/config/limits: every level's limits (what `kyc:limits` lists). */
export const ZOpsLimitsResponse = z.object({ status: z.literal('ok'), limits: z.array(ZVerificationLimit) });

/** A currency's transfer terms as `transfer:set` answers them (major units; max null: none). */
export const ZTransferTerms = z.object({
  currency: z.string(),
  min: z.string(),
  max: z.string().nullable(),
  fee_percent: z.string(),
  fee_fixed: z.string(),
  enabled: z.boolean(),
});
export type TTransferTerms = z.infer<typeof ZTransferTerms>;
/**
 * GET /api/ops/config/money: per currency, its transfer terms (null: never set, the defaults
 * apply), from which amount approving a withdrawal needs a second operator and up to which one
 * is approved without an operator (major units; null: no such rule).
 */
export const ZOpsMoneyConfigResponse = z.object({
  status: z.literal('ok'),
  currencies: z.array(
    z.object({
      currency: z.string(),
      enabled: z.boolean(),
      transfer: ZTransferTerms.omit({ currency: true }).nullable(),
      large: z.string().nullable(),
      auto: z.string().nullable(),
    }),
  ),
});
export type TOpsMoneyRow = z.infer<typeof ZOpsMoneyConfigResponse>['currencies'][number];

/** POST /api/ops/config/cards/enabled: a product into or out of the catalogue (its cards stay). */
export const ZOpsCardEnableBody = z.object({ id: ZCardProductId, enabled: z.boolean() });
export type TOpsCardEnableBody = z.infer<typeof ZOpsCardEnableBody>;

/** A footer image as the configuration screen lists it: where it loads from, and whether it was uploaded. */
export const ZOpsFooterImageRow = ZFooterImage.extend({ order: z.number().int(), uploaded: z.boolean() });
/** GET /api/ops/config/footer; also the answer of an upload or a removal. */
export const ZOpsFooterResponse = z.object({ status: z.literal('ok'), images: z.array(ZOpsFooterImageRow) });
const ZFooterName = z
  .string()
  .trim()
  .regex(/^[a-z0-9_-]{1,64}$/, 'validation.invalid');
/**
 * POST /api/ops/config/footer (multipart: these fields and `file`, a PNG, JPEG or WebP picture,
 * re-encoded before it is stored): a logo under `name`, replacing the one of that name.
 */
export const ZOpsFooterLogoFields = z.object({
  name: ZFooterName,
  /** Where the logo links to: a site path or an https address (none: no link). */
  url: z
    .string()
    .trim()
    .max(200, 'validation.too_long')
    .regex(/^(\/[A-Za-z0-9/_.~%?=&-]*|https:\/\/[^\s\\]+)?$/, 'validation.invalid')
    .optional(),
  order: z
    .string()
    .trim()
    .regex(/^-?\d{1,7}$/, 'validation.invalid')
    .optional(),
});
export type TOpsFooterLogoFields = z.infer<typeof ZOpsFooterLogoFields>;
/** POST /api/ops/config/footer/remove */
export const ZOpsFooterRemoveBody = z.object({ name: ZFooterName });
export type TOpsFooterRemoveBody = z.infer<typeof ZOpsFooterRemoveBody>;
