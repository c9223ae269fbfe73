import { z } from 'zod';
import { LOCALES } from './constants.ts';
import { ZExchangeQuote } from './money.ts';

export const ZLocale = z.enum(LOCALES);

export const ZUser = z.object({
  is_authenticated: z.boolean(),
  account_id: z.number().int().positive().nullable(),
  need_set_password: z.boolean(),
  locale: ZLocale,
  email: z.string().optional(),
});
export type TUser = z.infer<typeof ZUser>;

export const ZAuthType = z.enum(['password', 'email']);
export type TAuthType = z.infer<typeof ZAuthType>;

export const ZSiteSettings = z.object({
  logo_url: z.string(),
  auth_type: ZAuthType,
  site_blocked: z.boolean(),
});
export type TSiteSettings = z.infer<typeof ZSiteSettings>;

export const ZBalance = z.object({
  currency: z.string(),
  amount: z.string(),
  logo: z.string(),
});
export type TBalance = z.infer<typeof ZBalance>;

export const ZWallet = z.object({
  number: z.string(),
  currency: z.string(),
  logo: z.string(),
  /** What can be spent now (major units). */
  balance: z.string(),
  /** What holds keep for requests under way (withdrawals, card orders), not spendable; absent from older answers. */
  held: z.string().optional(),
  last_exchange: z.boolean(),
});
export type TWallet = z.infer<typeof ZWallet>;

/** The spec lets wallets arrive as a list of name/value pairs too. */
export const ZWalletNameValue = z.object({ name: z.string(), value: z.string() });

export const ZUnreadMsgs = z.object({
  private: z.number().int().nonnegative(),
  support: z.number().int().nonnegative(),
});
export type TUnreadMsgs = z.infer<typeof ZUnreadMsgs>;

export const ZNotificationButton = z.object({ url: z.string(), title: z.string() });
export const ZNotification = z.object({
  notification_id: z.number().int(),
  display: z.enum(['inner', 'modal']),
  type: z.enum(['danger', 'success', 'secondary']),
  title: z.string(),
  text: z.string(),
  buttons: z.array(ZNotificationButton),
  closable: z.boolean(),
});
export type TNotification = z.infer<typeof ZNotification>;

/**
 * What the BFF adds to every JSON object answer it passes on from the core: the front-end build
 * (`fv`), so a browser on an older build reloads. The served document declares it on every JSON
 * answer; the core's own answers never carry it.
 */
export const ZBffEnvelope = z.object({
  fv: z.string().optional().describe('The front-end build, added by the BFF to every JSON answer of the core.'),
});

/**
 * The keys any /api response may carry and the client applies globally (spec §7).
 * Passthrough: the rest of the body belongs to the call itself.
 */
export const ZEnvelope = z.looseObject({
  ...ZBffEnvelope.shape,
  user: ZUser.optional(),
  site_settings: ZSiteSettings.optional(),
  wallets: z.union([z.array(ZWallet), z.array(ZWalletNameValue)]).optional(),
  total_balance: ZBalance.optional(),
  unread_msgs: ZUnreadMsgs.optional(),
  notifications: z.array(ZNotification).optional(),
  status: z.string().optional(),
  redirect_url: z.string().optional(),
});
export type TEnvelope = z.infer<typeof ZEnvelope>;

export const ZFieldErrors = z.record(z.string(), z.string());

/** Every error answer: `message` is already localized; `code` is stable for programs. */
export const ZApiError = z.object({
  status: z.literal('error'),
  code: z.string(),
  message: z.string(),
  fields: ZFieldErrors.optional(),
  /** `unauthorized`: the anonymous user, in the caller's language. */
  user: ZUser.optional(),
  /** A refused exchange quote (expired, spent): a fresh one for the same pair and amount, when one could be made. */
  quote: ZExchangeQuote.optional(),
  /** `withdrawals_blocked`: when withdrawals open again (ISO 8601). */
  blocked_until: z.string().optional(),
});
export type TApiError = z.infer<typeof ZApiError>;

export const ZMenuItem = z.object({
  url: z.string(),
  title: z.string(),
  order: z.number().int(),
  icon_url: z.string().optional(),
});
export type TMenuItem = z.infer<typeof ZMenuItem>;

export const ZMenus = z.object({
  header_menu: z.array(ZMenuItem),
  footer_menu: z.array(ZMenuItem),
  main_menu: z.array(ZMenuItem),
});
export type TMenus = z.infer<typeof ZMenus>;

export const ZFooterImage = z.object({
  name: z.string(),
  ext: z.string(),
  /** Where the picture loads from: the site's /image/footer_logos/… or an uploaded logo's /api/site/logos/…. */
  src: z.string(),
  url: z.string().optional(),
});
export type TFooterImage = z.infer<typeof ZFooterImage>;

export const ZMenuResponse = z.object({
  menus: ZMenus,
  footer_images: z.array(ZFooterImage),
});
export type TMenuResponse = z.infer<typeof ZMenuResponse>;

export const ZLangBody = z.object({ lang: ZLocale });
export type TLangBody = z.infer<typeof ZLangBody>;
