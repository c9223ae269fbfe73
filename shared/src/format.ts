import type { TLocale } from './constants.ts';

/*
 * Numbers for people, in the reader's language, from the exact decimal strings of the API
 * (never through a float): ru "12 345,67" (narrow no-break space, comma), en "12,345.67".
 * One formatter for server pages, islands, the layout script and core's messages; CSV and the
 * API keep the machine form (point, no grouping). Dependency-free: the layout script uses it.
 */

const NARROW_NBSP = '\u202f';
const MINUS = '\u2212';
/** An exact decimal as the API writes it: optional minus, digits, optional point and digits. */
export const DECIMAL_PATTERN = /^-?\d+(?:\.\d+)?$/;
/**
 * An amount as a person types it: digits with an optional point or comma (Russian keyboards).
 * The one copy of this rule: the shared schema (ZAmountText) and every form check use it.
 */
export const AMOUNT_INPUT_PATTERN = /^(?:\d+(?:[.,]\d*)?|[.,]\d+)$/;
/** Longest amount accepted as text: 38 digits of numeric(38,0) plus a point. */
export const MAX_AMOUNT_TEXT = 40;

/** Does this typed text look like an amount (the precision is checked by core)? */
export function isAmountText(text: string): boolean {
  const trimmed = text.trim();
  return trimmed.length <= MAX_AMOUNT_TEXT && AMOUNT_INPUT_PATTERN.test(trimmed);
}

type TParts = { negative: boolean; whole: string; fraction: string };

function splitDecimal(text: string): TParts {
  const trimmed = text.trim();
  if (!DECIMAL_PATTERN.test(trimmed)) throw new RangeError(`not an exact decimal: ${text}`);
  const negative = trimmed.startsWith('-');
  const [whole = '0', fraction = ''] = (negative ? trimmed.slice(1) : trimmed).split('.');
  return { negative, whole: whole.replace(/^0+(?=\d)/, ''), fraction };
}

/**
 * Digits grouped and the decimal mark as each language writes them. ru leaves four-digit
 * numbers ungrouped ("5000", "50 000"), as Russian typography does; en groups from 1,000.
 */
function joinParts({ negative, whole, fraction }: TParts, locale: TLocale): string {
  const ru = locale === 'ru';
  const group = whole.length > 4 || (!ru && whole.length > 3);
  const grouped = group ? whole.replace(/\B(?=(\d{3})+(?!\d))/g, ru ? NARROW_NBSP : ',') : whole;
  const zero = !/[1-9]/.test(whole + fraction);
  return `${negative && !zero ? MINUS : ''}${grouped}${fraction ? (ru ? ',' : '.') + fraction : ''}`;
}

/**
 * An amount: trailing zeros dropped down to `minDecimals` (two by default, as far as the text has
 * them: "12.50" → "12,50", "0.00150000" → "0,0015", "1.000000" → "1,00", "7" → "7"); digits are
 * never cut or rounded, the amount stays exact.
 */
export function displayAmount(text: string, locale: TLocale, minDecimals = 2): string {
  const parts = splitDecimal(text);
  const kept = parts.fraction.replace(/0+$/, '');
  const fraction = kept.padEnd(Math.min(minDecimals, parts.fraction.length), '0');
  return joinParts({ ...parts, fraction }, locale);
}

/** An amount followed by its currency code, joined by a no-break space so it never wraps apart. */
export function displayMoney(text: string, currency: string, locale: TLocale, minDecimals = 2): string {
  return `${displayAmount(text, locale, minDecimals)}\u00a0${currency}`;
}

/** Rounds a non-negative digit string at `keep` fraction digits, half up; returns [whole, fraction]. */
function roundAt(whole: string, fraction: string, keep: number): [string, string] {
  const digits = whole + fraction.padEnd(keep + 1, '0');
  const cut = whole.length + keep;
  let kept = BigInt(digits.slice(0, cut) || '0');
  if (Number(digits[cut] ?? '0') >= 5) kept += 1n;
  const text = kept.toString().padStart(keep + 1, '0');
  return keep > 0 ? [text.slice(0, -keep), text.slice(-keep)] : [text, ''];
}

/**
 * A rate, rounded (it is shown with "≈") to digits that suit its size, the same number of
 * decimals for rates of one size so columns line up: from 100 two decimals ("3 184,00",
 * "3 216,08"), from 1 four ("91,2844"), below 1 four significant digits ("0,00001531").
 */
export function displayRate(text: string, locale: TLocale): string {
  const { negative, whole, fraction } = splitDecimal(text);
  let decimals: number;
  if (whole.length >= 3) decimals = 2;
  else if (whole !== '0') decimals = 4;
  else {
    const zeros = /^0*/.exec(fraction)?.[0].length ?? 0;
    decimals = zeros === fraction.length ? 2 : zeros + 4;
  }
  const [roundedWhole, roundedFraction] = roundAt(whole, fraction, decimals);
  return joinParts({ negative, whole: roundedWhole, fraction: roundedFraction }, locale);
}

/**
 * A fraction as a percentage: "0.001" → "0,1" (ru) / "0.1" (en); "0.0125" → "1.25". Exact, or
 * rounded half up to `maxDecimals` places of the percentage ("0.005995" → "0.6" at 2).
 */
export function displayPercent(fraction: string, locale: TLocale, maxDecimals?: number): string {
  const { negative, whole, fraction: part } = splitDecimal(fraction);
  const digits = whole + part.padEnd(2, '0');
  let integer = digits.slice(0, whole.length + 2).replace(/^0+(?=\d)/, '');
  let rest = digits.slice(whole.length + 2);
  if (maxDecimals !== undefined && rest.length > maxDecimals) [integer, rest] = roundAt(integer, rest, maxDecimals);
  return joinParts({ negative, whole: integer, fraction: rest.replace(/0+$/, '') }, locale);
}

/** Is this decimal text zero ("0", "0.000")? */
export function isZeroAmount(text: string): boolean {
  return !/[1-9]/.test(text);
}

/**
 * Message placeholders that are exact decimals (amounts in core's messages and refusals) read
 * in the message's language; other values pass unchanged. translate() applies it.
 */
export function localizeVars(vars: Record<string, string | number>, locale: TLocale): Record<string, string | number> {
  const out: Record<string, string | number> = {};
  for (const [name, value] of Object.entries(vars)) out[name] = typeof value === 'string' && /^-?\d+\.\d+$/.test(value) ? displayAmount(value, locale) : value;
  return out;
}

/** Is a rate (dst per 1 src) at least 1, so "1 src = rate dst" names the dearer currency first? */
export function isRateUpright(rate: string): boolean {
  return splitDecimal(rate).whole !== '0';
}

/**
 * "1 BTC ≈ 65 326,63 USDT": a pair's rate quoted from the side that makes the number at least 1
 * (`rate` is dst per 1 src, `rate_inverse` src per 1 dst).
 */
export function displayPairRate(pair: { src: string; dst: string; rate: string; rate_inverse: string }, locale: TLocale): string {
  return isRateUpright(pair.rate)
    ? `1\u00a0${pair.src} ≈ ${displayRate(pair.rate, locale)}\u00a0${pair.dst}`
    : `1\u00a0${pair.dst} ≈ ${displayRate(pair.rate_inverse, locale)}\u00a0${pair.src}`;
}

/** 1 / rate to twelve significant digits, rounded down (a rate read from its other side). */
export function invertRate(text: string): string {
  const { negative, whole, fraction } = splitDecimal(text);
  const num = BigInt(whole + fraction);
  if (negative || num === 0n) throw new RangeError(`not a positive rate: ${text}`);
  // 1 / (num / 10^scale) = 10^scale / num, scaled by 10^digits until twelve digits show.
  const scale = BigInt(fraction.length);
  let digits = 0n;
  while (digits < 60n && 10n ** (scale + digits) / num < 10n ** 11n) digits++;
  const quotient = (10n ** (scale + digits) / num).toString().padStart(Number(digits) + 1, '0');
  const cut = quotient.length - Number(digits);
  const tail = quotient.slice(cut).replace(/0+$/, '');
  return tail ? `${quotient.slice(0, cut)}.${tail}` : quotient.slice(0, cut);
}

/**
 * "1 BTC = 65 326,63 USDT": a rate (dst per 1 src) said with the dearer currency first, whichever
 * way the operation went (USDT → BTC at 0.0000153076 reads the same). For what was agreed: "=".
 */
export function displayUprightRate(src: string, dst: string, rate: string, locale: TLocale): string {
  return isRateUpright(rate)
    ? `1\u00a0${src} = ${displayRate(rate, locale)}\u00a0${dst}`
    : `1\u00a0${dst} = ${displayRate(invertRate(rate), locale)}\u00a0${src}`;
}

/**
 * An amount for an input field (what the other side of a form fills in): no grouping, the
 * reader's decimal mark ("0,00153" in ru), trailing zeros dropped; the forms accept it back.
 */
export function inputAmount(text: string, locale: TLocale): string {
  const { negative, whole, fraction } = splitDecimal(text);
  const kept = fraction.replace(/0+$/, '');
  return `${negative ? '-' : ''}${whole}${kept ? (locale === 'ru' ? ',' : '.') + kept : ''}`;
}

/** The cookie in which the browser tells the server its time zone (IANA name), for SSR times. */
export const TIME_ZONE_COOKIE = 'tz';
/** Where the reader's zone is not known yet (a first visit): times say UTC. */
export const DEFAULT_TIME_ZONE = 'UTC';

/** An IANA time zone this runtime knows, or null: the cookie is the visitor's to forge. */
export function validTimeZone(value: string | undefined | null): string | null {
  if (!value || value.length > 64) return null;
  try {
    return new Intl.DateTimeFormat('en-GB', { timeZone: value }).resolvedOptions().timeZone;
  } catch {
    return null;
  }
}

export type TDateStyle = 'datetime' | 'short' | 'time' | 'date';

const DATE_PARTS: Record<TDateStyle, Intl.DateTimeFormatOptions> = {
  datetime: { year: 'numeric', month: '2-digit', day: '2-digit', hour: '2-digit', minute: '2-digit' },
  short: { month: '2-digit', day: '2-digit', hour: '2-digit', minute: '2-digit' },
  time: { hour: '2-digit', minute: '2-digit' },
  date: { year: 'numeric', month: '2-digit', day: '2-digit' },
};
const dateFormats = new Map<string, Intl.DateTimeFormat>();

/**
 * An instant of the API as people read it, in the reader's zone: the server renders with the
 * zone the browser told it (TIME_ZONE_COOKIE) and islands hydrate with the same zone as a prop,
 * so both sides print the same text (numeric parts only: ICU versions differ on month names).
 * In UTC the text says so.
 */
export function displayDateTime(iso: string, locale: TLocale, timeZone: string, style: TDateStyle = 'datetime'): string {
  const date = new Date(iso);
  if (Number.isNaN(date.getTime())) return iso;
  const key = `${locale} ${timeZone} ${style}`;
  let format = dateFormats.get(key);
  if (!format) {
    format = new Intl.DateTimeFormat(locale === 'ru' ? 'ru-RU' : 'en-GB', { ...DATE_PARTS[style], timeZone });
    dateFormats.set(key, format);
  }
  const text = format.format(date);
  return timeZone === DEFAULT_TIME_ZONE ? `${text} UTC` : text;
}

const axisFormats = new Map<string, Intl.DateTimeFormat>();

/** A chart axis's tick in the reader's zone, short: "14:05" within a day, "27.11" across days (no zone suffix). */
export function displayAxisTime(iso: string, locale: TLocale, timeZone: string, kind: 'time' | 'date'): string {
  const key = `${locale} ${timeZone} ${kind}`;
  let format = axisFormats.get(key);
  if (!format) {
    const parts: Intl.DateTimeFormatOptions = kind === 'time' ? { hour: '2-digit', minute: '2-digit' } : { day: '2-digit', month: '2-digit' };
    format = new Intl.DateTimeFormat(locale === 'ru' ? 'ru-RU' : 'en-GB', { ...parts, timeZone });
    axisFormats.set(key, format);
  }
  return format.format(new Date(iso));
}

/** A change as a signed percentage of two decimals at most: "+1,25%" (ru), "−0.4%" (en), "0%". */
export function displayChange(fraction: string, locale: TLocale): string {
  const text = displayPercent(fraction, locale, 2);
  const sign = /[1-9]/.test(text) && !text.startsWith(MINUS) ? '+' : '';
  return `${sign}${text}%`;
}
