import { z } from 'zod';
import { SESSION_COOKIE, SESSION_TOKEN_HEADER } from './constants.ts';
import { ZVisibleText } from './text.ts';
import { ZLocale, ZSiteSettings, ZUser, type TUser } from './envelope.ts';

/*
 * Accounts: the payloads of every /api/auth and /api/user call, their limits, and the session
 * cookie. Validation messages are i18n keys: core localizes them in `fields`, the site runs the
 * same schemas before sending and translates the keys itself.
 */

export const PASSWORD_MIN_LENGTH = 8;
/** Long passphrases are welcome; the bound only stops megabyte "passwords" (NIST asks ≥ 64). */
export const PASSWORD_MAX_LENGTH = 1024;

/** A session lives this long after its last use (sliding), and the cookie as long. */
export const SESSION_TTL_S = 30 * 24 * 60 * 60;
/** Spec: a passwordless sign-in link works once, for 15 minutes. */
export const SIGN_IN_LINK_TTL_S = 15 * 60;
export const RESET_LINK_TTL_S = 60 * 60;
export const CONFIRM_LINK_TTL_S = 24 * 60 * 60;

/** core → BFF: `cleared` when the Bearer token was invalid, expired or revoked, or on logout. */
export const SESSION_STATE_HEADER = 'x-obmen-session';
export const SESSION_CLEARED = 'cleared';

/**
 * Where mailed links land on the site (PUBLIC_URL + path + token). The page then calls:
 *   /login?token=T          → GET, then POST /api/auth/login/T   (passwordless sign-in)
 *   /login?confirm=T        → GET, then POST /api/auth/confirm/T (sign-up or email confirmation)
 *   (the GET says whose link it is; opened in another browser, the POST waits for a click)
 *   /reset-password?token=T → GET /api/auth/reset/T (is it valid?), POST /api/auth/reset/T {password}
 * A GET never spends a token: mail scanners that prefetch links burn nothing.
 */
export const AUTH_LINK_PATHS = {
  sign_in: '/login?token=',
  confirm: '/login?confirm=',
  reset: '/reset-password?token=',
} as const;

/** 256-bit tokens travel as 43 base64url characters. */
export const TOKEN_PATTERN = /^[A-Za-z0-9_-]{43}$/;

/**
 * A sign-in or confirmation link belongs to the browser that asked for it. The core makes a
 * random binding (TOKEN_PATTERN-shaped) when a link is requested and keeps its sha256 beside the
 * token; it hands it to the BFF in LINK_BINDING_HEADER, which turns it into the
 * LINK_BINDING_COOKIE, and the BFF sends the cookie's value back in the same header on every
 * auth call. A link opened in a browser without it is spent only after the person confirms the
 * (masked) address it signs into: an attacker's own link mailed to a victim then shows the
 * attacker's address and signs nobody in on load.
 */
export const LINK_BINDING_HEADER = 'x-obmen-link-binding';
export const LINK_BINDING_COOKIE = 'link_binding';
/** Only the auth calls read it (the core's link calls live under it). */
export const LINK_BINDING_COOKIE_PATH = '/api/auth';

/**
 * Passwords are compared after NFKC normalization (NIST SP 800-63B §5.1.1.2): the same
 * password typed on another keyboard or OS (composed "é" or e + U+0301, full-width digits from
 * an IME) must still match. Length is counted in code points of the normalized text.
 */
export function normalizePassword(password: string): string {
  return password.normalize('NFKC');
}

export function passwordLength(password: string): number {
  let count = 0;
  for (const _ of normalizePassword(password)) count++;
  return count;
}

function required(invalid = 'validation.invalid') {
  return { error: (issue: { input: unknown }) => (issue.input === undefined || issue.input === '' ? 'validation.required' : invalid) };
}

export const ZEmail = z
  .string(required('validation.email_invalid'))
  .trim()
  .min(1, 'validation.required')
  .max(254, 'validation.email_invalid')
  .pipe(z.email({ error: 'validation.email_invalid' }));

/** A new password: 8 to 1024 characters, any script. */
export const ZNewPassword = z
  .string(required())
  .refine((value) => value.length > 0, { error: 'validation.required', abort: true })
  .refine((value) => passwordLength(value) >= PASSWORD_MIN_LENGTH, { error: 'auth.password_too_short', abort: true })
  .refine((value) => value.length <= PASSWORD_MAX_LENGTH * 2 && passwordLength(value) <= PASSWORD_MAX_LENGTH, {
    error: 'auth.password_too_long',
  });

/** A password typed to sign in: only present and bounded, its rules are checked at sign-up. */
export const ZPassword = z
  .string(required())
  .min(1, 'validation.required')
  .max(PASSWORD_MAX_LENGTH * 4, 'auth.password_too_long');

function notTheEmail(body: { email: string; password: string }, ctx: z.RefinementCtx) {
  if (normalizePassword(body.password).toLowerCase() === body.email.toLowerCase()) {
    ctx.addIssue({ code: 'custom', path: ['password'], message: 'auth.password_is_email' });
  }
}

/** POST /api/auth/register */
export const ZRegisterBody = z.object({ email: ZEmail, password: ZNewPassword }).superRefine(notTheEmail);
export type TRegisterBody = z.infer<typeof ZRegisterBody>;

/** POST /api/auth/login_by_password */
export const ZLoginByPasswordBody = z.object({ email: ZEmail, password: ZPassword });
export type TLoginByPasswordBody = z.infer<typeof ZLoginByPasswordBody>;

/** POST /api/auth/login (passwordless) and POST /api/auth/reset */
export const ZEmailBody = z.object({ email: ZEmail });
export type TEmailBody = z.infer<typeof ZEmailBody>;

/** POST /api/auth/reset/{token} */
export const ZResetPasswordBody = z.object({ password: ZNewPassword });
export type TResetPasswordBody = z.infer<typeof ZResetPasswordBody>;

/**
 * POST /api/auth/change. `current_password` is required when the account has a password
 * (`need_set_password` false); a user who signed up by link sets the first one without it.
 */
export const ZChangePasswordBody = z.object({
  current_password: z
    .string()
    .max(PASSWORD_MAX_LENGTH * 4, 'auth.password_too_long')
    .optional(),
  password: ZNewPassword,
});
export type TChangePasswordBody = z.infer<typeof ZChangePasswordBody>;

/** The `{token}` of a mailed link. */
export const ZTokenParams = z.object({ token: z.string().regex(TOKEN_PATTERN, 'auth.invalid_token') });

/**
 * POST /api/auth/login/{token} and /api/auth/confirm/{token}: `confirm` says the person pressed
 * the button of the confirmation step; without it a link opened in another browser than the one
 * that asked for it is refused (409 `link_confirm_required`) and stays unspent.
 */
export const ZLinkSpendBody = z.object({ confirm: z.boolean().optional() }).default({});
export type TLinkSpendBody = z.infer<typeof ZLinkSpendBody>;

/** GET /api/auth/login/{token} and /api/auth/confirm/{token}: what the link would do, spending nothing. */
export const ZLinkPreview = z.object({
  status: z.literal('ok'),
  /** The account's address, masked: `a***@e***.com`. */
  email: z.string(),
  /** The link was asked for in this browser: the page spends it at once. */
  same_browser: z.boolean(),
});
export type TLinkPreview = z.infer<typeof ZLinkPreview>;

/**
 * `alice@example.com` → `a***@e***.com`: enough for its owner to recognise, little for whoever
 * holds a link (maskEmail keeps the domain, for pages that are the address owner's own).
 */
export function maskEmailAndDomain(email: string): string {
  const at = email.lastIndexOf('@');
  const local = email.slice(0, at);
  const domain = email.slice(at + 1);
  const dot = domain.lastIndexOf('.');
  const tld = dot > 0 ? domain.slice(dot) : '';
  return `${local.slice(0, 1)}***@${domain.slice(0, 1)}***${tld}`;
}

// ---- personal data: GET and POST /api/user/info ----------------------------------------------

export const USER_MIN_AGE_YEARS = 18;
const NAME = /^\p{L}[\p{L}\p{M}' .-]*$/u;
const CONTROL = /[\u0000-\u001f\u007f]/;

/** A form field: missing leaves the value alone, empty clears it, anything else is checked. */
function optionalField(schema: z.ZodType<string>) {
  return z
    .string()
    .trim()
    .optional()
    .transform((value, ctx) => {
      if (value === undefined) return undefined;
      if (value === '') return null;
      const result = schema.safeParse(value);
      if (result.success) return result.data;
      ctx.addIssue({ code: 'custom', message: result.error.issues[0]?.message ?? 'validation.invalid' });
      return z.NEVER;
    });
}

export const ZName = ZVisibleText(64).regex(NAME, 'user.name_invalid');

export function isAdultOn(birthDate: string, today: Date, years = USER_MIN_AGE_YEARS): boolean {
  const [y, m, d] = birthDate.split('-').map(Number) as [number, number, number];
  const limit = new Date(Date.UTC(today.getUTCFullYear() - years, today.getUTCMonth(), today.getUTCDate()));
  return Date.UTC(y, m - 1, d) <= limit.getTime();
}

export const ZBirthDate = z
  .string()
  .regex(/^\d{4}-\d{2}-\d{2}$/, 'user.birth_date_invalid')
  .refine(
    (value) => {
      const date = new Date(`${value}T00:00:00Z`);
      return !Number.isNaN(date.getTime()) && date.toISOString().startsWith(value) && date.getUTCFullYear() >= 1900;
    },
    { error: 'user.birth_date_invalid', abort: true },
  )
  .refine((value) => isAdultOn(value, new Date()), { error: 'user.too_young' });

/** E.164 after dropping spaces, dashes, dots and brackets: +79991234567. */
const ZPhone = z
  .string()
  .transform((value) => value.replace(/[\s\-().]/g, ''))
  .pipe(z.string().regex(/^\+[1-9]\d{6,14}$/, 'user.phone_invalid'));

/** ISO 3166-1 alpha-2, any case in, upper case out. */
export const ZCountry = z
  .string()
  .transform((value) => value.toUpperCase())
  .pipe(z.string().regex(/^[A-Z]{2}$/, 'user.country_invalid'));

const ZFreeText = (max: number) => ZVisibleText(max).refine((value) => !CONTROL.test(value), { error: 'validation.invalid' });

/** POST /api/user/info (form data): every field optional; "" clears a field. */
export const ZUserInfoUpdate = z.object({
  first_name: optionalField(ZName),
  last_name: optionalField(ZName),
  middle_name: optionalField(ZName),
  birth_date: optionalField(ZBirthDate),
  phone: optionalField(ZPhone),
  country: optionalField(ZCountry),
  city: optionalField(ZFreeText(100)),
  address: optionalField(ZFreeText(200)),
});
export type TUserInfoUpdate = z.infer<typeof ZUserInfoUpdate>;
export const USER_INFO_FIELDS = Object.keys(ZUserInfoUpdate.shape) as Array<keyof TUserInfoUpdate>;

/** What GET /api/user/info answers in `info`. */
export const ZUserInfo = z.object({
  account_id: z.number().int(),
  email: z.string(),
  email_confirmed: z.boolean(),
  need_set_password: z.boolean(),
  locale: ZLocale,
  created_at: z.string(),
  first_name: z.string().nullable(),
  last_name: z.string().nullable(),
  middle_name: z.string().nullable(),
  birth_date: z.string().nullable(),
  phone: z.string().nullable(),
  country: z.string().nullable(),
  city: z.string().nullable(),
  address: z.string().nullable(),
  /** 0: e-mail confirmed; 1: identity verified (names, birth date and country then read-only). */
  verification_level: z.number().int(),
});
export type TUserInfo = z.infer<typeof ZUserInfo>;

export const ZUserInfoResponse = z.object({ user: ZUser, info: ZUserInfo, status: z.literal('ok').optional(), message: z.string().optional() });
export type TUserInfoResponse = z.infer<typeof ZUserInfoResponse>;

/** The `user` of every answer to a caller without a valid session. */
export function anonymousUser(locale: TUser['locale']): TUser {
  return { is_authenticated: false, account_id: null, need_set_password: false, locale };
}

// ---- answers ---------------------------------------------------------------------------------

/** Register, passwordless request, reset request, send confirmation: the same for every email. */
export const ZAuthMessage = z.object({ status: z.literal('ok'), message: z.string() });
export type TAuthMessage = z.infer<typeof ZAuthMessage>;

/** check, sign-ins, reset, change, confirm, logout. */
export const ZAuthState = z.object({
  status: z.literal('ok').optional(),
  message: z.string().optional(),
  user: ZUser,
  locale: ZLocale,
  site_settings: ZSiteSettings,
});
export type TAuthState = z.infer<typeof ZAuthState>;

// ---- account ids -----------------------------------------------------------------------------

function luhnCheckDigit(body: string): number {
  let sum = 0;
  for (let i = 0; i < body.length; i++) {
    let digit = Number(body[body.length - 1 - i]);
    if (i % 2 === 0) {
      digit *= 2;
      if (digit > 9) digit -= 9;
    }
    sum += digit;
  }
  return (10 - (sum % 10)) % 10;
}

/** 7 digits (first not 0) + a Luhn check digit. */
export function makeAccountId(sevenDigits: number): number {
  const body = String(sevenDigits);
  return Number(body + luhnCheckDigit(body));
}

/** Transfers and support can reject a mistyped account id before asking the server. */
export function isAccountId(value: unknown): boolean {
  const text = String(value);
  return /^[1-9]\d{7}$/.test(text) && luhnCheckDigit(text.slice(0, 7)) === Number(text[7]);
}

// ---- the session cookie (BFF, and the site's SSR if it talks to core itself) -----------------

/** `remember_token`: HttpOnly, SameSite=Lax, Path=/, Secure over https, as long as the session. */
export function sessionCookie(token: string, secure: boolean): string {
  return `${SESSION_COOKIE}=${token}; Max-Age=${SESSION_TTL_S}; Path=/; HttpOnly; SameSite=Lax${secure ? '; Secure' : ''}`;
}

/** LINK_BINDING_COOKIE: HttpOnly, SameSite=Lax, auth calls only, as long as the longest link it guards. */
export function linkBindingCookie(binding: string, secure: boolean): string {
  return `${LINK_BINDING_COOKIE}=${binding}; Max-Age=${CONFIRM_LINK_TTL_S}; Path=${LINK_BINDING_COOKIE_PATH}; HttpOnly; SameSite=Lax${secure ? '; Secure' : ''}`;
}

export function clearedSessionCookie(secure: boolean): string {
  return `${SESSION_COOKIE}=; Max-Age=0; Expires=Thu, 01 Jan 1970 00:00:00 GMT; Path=/; HttpOnly; SameSite=Lax${secure ? '; Secure' : ''}`;
}

/**
 * The Set-Cookie a core answer's session headers call for (the BFF's proxy and the site's pages
 * alike): a renewed token becomes the cookie; a session the answer declares dead (`x-obmen-session:
 * cleared`, or a page's check answered signed out) clears the cookie the browser sent; otherwise none.
 */
export function sessionCookieOfAnswer(
  headers: Readonly<Record<string, string | string[] | undefined>>,
  { sentCookie, dead, secure }: { sentCookie: boolean; dead: boolean; secure: boolean },
): string | undefined {
  const renewed = headers[SESSION_TOKEN_HEADER];
  if (typeof renewed === 'string' && TOKEN_PATTERN.test(renewed)) return sessionCookie(renewed, secure);
  return sentCookie && dead ? clearedSessionCookie(secure) : undefined;
}
