import { z } from 'zod';
import { AMOUNT_INPUT_PATTERN, MAX_AMOUNT_TEXT } from './format.ts';
import { ZVisibleText } from './text.ts';
import { ZSecondFactorFields, ZSecondFactorNeed } from './passkeys.ts';

/*
 * Money on the wire. Amounts are integers in minor units everywhere inside (bigint in code,
 * numeric in SQL); they cross the API as decimal strings in major units with the currency's
 * precision ("0.00150000" BTC, "12.50" USD), parsed and printed here with string arithmetic.
 * No amount ever passes through a float.
 */

/** Every money-moving POST carries this header: one fresh value per submitted form. */
export const IDEMPOTENCY_HEADER = 'idempotency-key';
/** Set to "true" on an answer that repeats the stored answer of an earlier request with the same key. */
export const REPLAYED_HEADER = 'idempotent-replayed';
/** A UUID fits; so does any other opaque token of 8 to 128 safe characters. */
export const IDEMPOTENCY_KEY_PATTERN = /^[A-Za-z0-9_\-:.]{8,128}$/;
/** A quote of POST /api/exchange/check can be confirmed once, within this many seconds. */
export const QUOTE_TTL_S = 30;
/** total_balance is shown in this currency until the user picks another. */
export const DEFAULT_DISPLAY_CURRENCY = 'USD';
/** The currency /exchange/all converts into when none is named. */
export const DEFAULT_EXCHANGE_ALL_CURRENCY = 'USDT';
export const HISTORY_PAGE_SIZE = 20;
export const HISTORY_MAX_PAGE_SIZE = 100;
/** A CSV export holds at most this many rows (the newest of the filter). */
export const HISTORY_CSV_MAX_ROWS = 10_000;

/** A malformed amount; `key` is an i18n key, `vars` its placeholders. */
export class MoneyFormatError extends Error {
  readonly key: string;
  readonly vars: Record<string, string | number>;
  constructor(key: string, vars: Record<string, string | number> = {}) {
    super(key);
    this.key = key;
    this.vars = vars;
  }
}

export function pow10(exponent: number): bigint {
  if (!Number.isInteger(exponent) || exponent < 0) throw new RangeError(`pow10: bad exponent ${exponent}`);
  return 10n ** BigInt(exponent);
}

/** Plain digits with an optional fraction; a comma is a decimal point too (Russian keyboards). */
const DECIMAL_TEXT = /^(\d*)(?:[.,](\d*))?$/;

/**
 * "12.5" at precision 2 → 1250n. Trailing zeros beyond the precision are fine ("1.500" USD);
 * a non-zero digit beyond it is refused, never rounded. No sign, no exponent, no spaces inside.
 */
export function parseAmount(text: string, precision: number): bigint {
  const trimmed = text.trim();
  const match = DECIMAL_TEXT.exec(trimmed);
  if (!match || trimmed.length > MAX_AMOUNT_TEXT || (!match[1] && !match[2])) throw new MoneyFormatError('money.amount_invalid');
  const whole = match[1] ?? '';
  const fraction = (match[2] ?? '').replace(/0+$/, '');
  if (fraction.length > precision) throw new MoneyFormatError('money.amount_too_precise', { precision });
  return BigInt(whole || '0') * pow10(precision) + BigInt(fraction.padEnd(precision, '0') || '0');
}

/** parseAmount, or null when the text is not an amount at this precision. */
export function tryParseAmount(text: string, precision: number): bigint | null {
  try {
    return parseAmount(text, precision);
  } catch {
    return null;
  }
}

/** 150000n at precision 8 → "0.00150000": always exactly `precision` decimals. */
export function formatAmount(minor: bigint | string, precision: number): string {
  let value = typeof minor === 'bigint' ? minor : BigInt(minor);
  const negative = value < 0n;
  if (negative) value = -value;
  const digits = value.toString().padStart(precision + 1, '0');
  const whole = digits.slice(0, digits.length - precision);
  const fraction = digits.slice(digits.length - precision);
  return `${negative ? '-' : ''}${whole}${precision > 0 ? `.${fraction}` : ''}`;
}

/** "1.000000" → "1", "0.00150000" → "0.0015": the same amount without trailing zeros, still machine-readable. */
export function stripTrailingZeros(text: string): string {
  return text.includes('.') ? text.replace(/\.?0+$/, '') : text;
}

/** The exact sum of decimal strings (non-negative, any number of decimals): "0.10" + "0.005" → "0.105". */
export function sumAmounts(values: readonly string[]): string {
  const scale = Math.max(0, ...values.map((value) => (value.split('.')[1] ?? '').length));
  let total = 0n;
  for (const value of values) {
    const [whole = '0', fraction = ''] = value.split('.');
    total += BigInt((whole || '0') + fraction.padEnd(scale, '0'));
  }
  return formatAmount(total, scale);
}

/** An exact decimal: value = num / 10^scale. */
export type TDecimal = { num: bigint; scale: number };

const SIGNED_DECIMAL = /^(-)?(\d*)(?:\.(\d*))?$/;

/** "0.0000153846" → {num: 153846n, scale: 10}; for rates, spreads and percentages. */
export function parseDecimal(text: string): TDecimal {
  const match = SIGNED_DECIMAL.exec(text.trim());
  if (!match || (!match[2] && !match[3]) || text.length > 80) throw new MoneyFormatError('money.decimal_invalid');
  const fraction = (match[3] ?? '').replace(/0+$/, '');
  const num = BigInt((match[2] ?? '') + fraction || '0');
  return { num: match[1] ? -num : num, scale: fraction.length };
}

/** The shortest exact text of a decimal: {num: 1250n, scale: 3} → "1.25". */
export function decimalToString(value: TDecimal): string {
  if (value.scale === 0) return value.num.toString();
  return formatAmount(value.num, value.scale).replace(/\.?0+$/, '');
}

/** floor(a / b) for b > 0, also for negative a. */
export function divFloor(a: bigint, b: bigint): bigint {
  if (b <= 0n) throw new RangeError('divFloor: divisor must be positive');
  const q = a / b;
  return a % b !== 0n && a < 0n ? q - 1n : q;
}

/** ceil(a / b) for b > 0, also for negative a. */
export function divCeil(a: bigint, b: bigint): bigint {
  if (b <= 0n) throw new RangeError('divCeil: divisor must be positive');
  const q = a / b;
  return a % b !== 0n && a > 0n ? q + 1n : q;
}

// ---- request schemas (validation messages are i18n keys) -----------------------------------

/** Form fields arrive as strings; an empty one means "not given". */
export const emptyToUndefined = (value: unknown) => (typeof value === 'string' && value.trim() === '' ? undefined : value);

/** An amount as typed: digits with an optional point or comma. The precision is checked by core. */
export const ZAmountText = z
  .string({ error: (issue) => (issue.input === undefined ? 'validation.required' : 'money.amount_invalid') })
  .trim()
  .min(1, 'validation.required')
  .max(MAX_AMOUNT_TEXT, 'money.amount_invalid')
  .regex(AMOUNT_INPUT_PATTERN, 'money.amount_invalid');

export const ZCurrencyCode = z
  .string({ error: (issue) => (issue.input === undefined ? 'validation.required' : 'money.currency_invalid') })
  .trim()
  .toUpperCase()
  .regex(/^[A-Z0-9]{2,10}$/, 'money.currency_invalid');

export const ZIdempotencyKey = z.string().regex(IDEMPOTENCY_KEY_PATTERN, 'money.idempotency_key_invalid');

/** The 8-digit account number people type (users.account_id). */
export const ZAccountIdText = z.preprocess(
  (value) => (typeof value === 'string' ? value.replace(/[\s-]/g, '') : typeof value === 'number' ? String(value) : value),
  z
    .string({ error: (issue) => (issue.input === undefined ? 'validation.required' : 'money.account_id_invalid') })
    .min(1, 'validation.required')
    .regex(/^\d{8}$/, 'money.account_id_invalid')
    .transform(Number),
);

/** GET /api/exchange/list: `search` is "BTC/" (selling BTC), "/USDT" (buying USDT), "BTC/USDT", or "BTC" (either side). */
export const ZExchangeListQuery = z.object({
  search: z.preprocess(emptyToUndefined, z.string().trim().max(23, 'validation.too_long').optional()),
});
export type TExchangeListQuery = z.infer<typeof ZExchangeListQuery>;

/** POST /api/exchange/check and /api/exchange/landing: exactly one of amount (to pay) and amount_receive. */
export const ZExchangeCheckBody = z
  .object({
    src: ZCurrencyCode,
    dst: ZCurrencyCode,
    amount: z.preprocess(emptyToUndefined, ZAmountText.optional()),
    amount_receive: z.preprocess(emptyToUndefined, ZAmountText.optional()),
  })
  .superRefine((body, ctx) => {
    if (body.amount === undefined && body.amount_receive === undefined) ctx.addIssue({ code: 'custom', path: ['amount'], message: 'exchange.amount_required' });
    if (body.amount !== undefined && body.amount_receive !== undefined)
      ctx.addIssue({ code: 'custom', path: ['amount_receive'], message: 'exchange.one_amount_only' });
    if (body.src === body.dst) ctx.addIssue({ code: 'custom', path: ['dst'], message: 'exchange.same_currency' });
  });
export type TExchangeCheckBody = z.infer<typeof ZExchangeCheckBody>;

/** POST /api/exchange/{src}/{dst}: the token of a quote from /api/exchange/check. */
export const ZExchangeBody = z.object({
  quote: z
    .string({ error: 'validation.required' })
    .trim()
    .regex(/^[A-Za-z0-9_-]{16,64}$/, 'exchange.quote_invalid'),
});
export type TExchangeBody = z.infer<typeof ZExchangeBody>;

export const ZPairParams = z.object({ src: ZCurrencyCode, dst: ZCurrencyCode });

/** Form data may repeat a field or list codes separated by commas. */
const ZCurrencyList = z.preprocess((value) => {
  const list = (Array.isArray(value) ? value : typeof value === 'string' ? [value] : value === undefined ? [] : value) as unknown;
  return Array.isArray(list) ? list.flatMap((item) => (typeof item === 'string' ? item.split(',') : [item])).filter((item) => item !== '') : list;
}, z.array(ZCurrencyCode).max(50));

/** POST /api/exchange/all[/{currency}]: `currency` (unless in the path) and optionally which wallets. */
export const ZExchangeAllBody = z.object({
  currency: z.preprocess(emptyToUndefined, ZCurrencyCode.optional()),
  currencies: ZCurrencyList.optional(),
});
export type TExchangeAllBody = z.infer<typeof ZExchangeAllBody>;

/** POST /api/transfer/check and POST /api/transfer. */
export const ZTransferBody = z.object({
  account_id: ZAccountIdText,
  currency: ZCurrencyCode,
  amount: ZAmountText,
  comment: z.preprocess(emptyToUndefined, ZVisibleText(140).optional()),
  // With 2FA on, the transfer itself (not its check) carries the second factor.
  ...ZSecondFactorFields,
});
export type TTransferBody = z.infer<typeof ZTransferBody>;

export const ZDateText = z
  .string()
  .trim()
  .regex(/^\d{4}-\d{2}-\d{2}(?:T[\d:.]+(?:Z|[+-]\d{2}:?\d{2})?)?$/, 'validation.invalid');

/** GET /api/exchange/history and /api/transfer/history. `from`/`to` are days (UTC), inclusive. */
export const ZHistoryQuery = z.object({
  page: z.preprocess(emptyToUndefined, z.coerce.number().int().min(1).max(1_000_000).default(1)),
  per_page: z.preprocess(emptyToUndefined, z.coerce.number().int().min(1).max(HISTORY_MAX_PAGE_SIZE).default(HISTORY_PAGE_SIZE)),
  from: z.preprocess(emptyToUndefined, ZDateText.optional()),
  to: z.preprocess(emptyToUndefined, ZDateText.optional()),
  currency: z.preprocess(emptyToUndefined, ZCurrencyCode.optional()),
  status: z.preprocess(emptyToUndefined, z.enum(['completed', 'failed']).optional()),
  /** transfers only: sent or received */
  direction: z.preprocess(emptyToUndefined, z.enum(['in', 'out']).optional()),
  format: z.preprocess(emptyToUndefined, z.enum(['json', 'csv']).default('json')),
});
export type THistoryQuery = z.infer<typeof ZHistoryQuery>;

/** GET /api/history/statement: a month (YYYY-MM), or a period of UTC days, inclusive. */
export const ZStatementQuery = z.object({
  month: z.preprocess(
    emptyToUndefined,
    z
      .string()
      .regex(/^\d{4}-(0[1-9]|1[0-2])$/, 'validation.invalid')
      .optional(),
  ),
  from: z.preprocess(emptyToUndefined, z.iso.date('validation.invalid').optional()),
  to: z.preprocess(emptyToUndefined, z.iso.date('validation.invalid').optional()),
});
export type TStatementQuery = z.infer<typeof ZStatementQuery>;

/** The statement itself: a PDF file. */
export const STATEMENT_RESPONSE = {
  description: 'The statement: a PDF file',
  content: { 'application/pdf': { schema: z.string().meta({ contentMediaType: 'application/pdf' }) } },
};

/** POST /api/wallets/display_currency */
export const ZDisplayCurrencyBody = z.object({ currency: ZCurrencyCode });

// ---- response shapes ------------------------------------------------------------------------

export const ZCurrencyInfo = z.object({
  code: z.string(),
  kind: z.enum(['fiat', 'crypto']),
  precision: z.number().int(),
  name: z.string(),
  logo: z.string(),
});
export type TCurrencyInfo = z.infer<typeof ZCurrencyInfo>;

/** One pair of GET /api/exchange/list. Amount limits are in `src`; `rate` is dst per 1 src after the spread. */
export const ZExchangePair = z.object({
  src: z.string(),
  dst: z.string(),
  src_logo: z.string(),
  dst_logo: z.string(),
  rate: z.string(),
  rate_inverse: z.string(),
  fee_percent: z.string(),
  fee_fixed: z.string(),
  /** Fee and spread together against the mid-market rate, a fraction ("0.005995"); the fixed fee aside. */
  cost_percent: z.string(),
  min: z.string(),
  max: z.string().nullable(),
});
export type TExchangePair = z.infer<typeof ZExchangePair>;

/** POST /api/exchange/check (with token) and /api/exchange/landing (without). */
export const ZExchangeQuote = z.object({
  src: z.string(),
  dst: z.string(),
  /** What the user pays, in src. */
  amount: z.string(),
  /** What the user receives, in dst: exactly this is credited. */
  amount_receive: z.string(),
  /** Part of `amount` kept as the fee (the pair's fee plus the rounding remainder), in src. */
  fee: z.string(),
  rate: z.string(),
  rate_inverse: z.string(),
  /** What `amount` costs over the mid-market rate (fee and spread together), in src, and as a fraction of `amount`. */
  cost: z.string(),
  cost_percent: z.string(),
  limits: z.object({ min: z.string(), max: z.string().nullable() }),
  expires_at: z.string(),
  expires_in: z.number().int(),
  token: z.string().optional(),
  /** Signed-in only: the src balance and whether it covers `amount`. */
  balance: z.string().optional(),
  sufficient: z.boolean().optional(),
});
export type TExchangeQuote = z.infer<typeof ZExchangeQuote>;

/** What one exchange paid, received, kept as its fee and at which rate: the same four in a record and a leg of "exchange all". */
const exchangeFigures = { amount: z.string(), amount_receive: z.string(), fee: z.string(), rate: z.string() };

export const ZExchangeRecord = z.object({
  id: z.string(),
  batch_id: z.string().nullable(),
  src: z.string(),
  dst: z.string(),
  ...exchangeFigures,
  status: z.enum(['completed', 'failed']),
  error: z.string().nullable(),
  created_at: z.string(),
});
export type TExchangeRecord = z.infer<typeof ZExchangeRecord>;

export const ZExchangeAllLeg = z.object({
  src: z.string(),
  ...exchangeFigures,
  status: z.enum(['completed', 'failed', 'planned', 'unavailable']),
  exchange_id: z.string().nullable(),
  error_code: z.string().nullable(),
  error: z.string().nullable(),
});
export type TExchangeAllLeg = z.infer<typeof ZExchangeAllLeg>;

export const ZExchangeBatch = z.object({
  id: z.string(),
  currency: z.string(),
  status: z.enum(['completed', 'partial', 'failed', 'empty']),
  amount_receive: z.string(),
  legs: z.array(ZExchangeAllLeg),
  created_at: z.string(),
});
export type TExchangeBatch = z.infer<typeof ZExchangeBatch>;

export const ZTransferRecord = z.object({
  id: z.string(),
  direction: z.enum(['in', 'out']),
  /** The other side's account number and masked name. */
  account_id: z.number().int(),
  name: z.string(),
  currency: z.string(),
  amount: z.string(),
  fee: z.string(),
  comment: z.string().nullable(),
  status: z.enum(['completed']),
  created_at: z.string(),
});
export type TTransferRecord = z.infer<typeof ZTransferRecord>;

export const ZTransferCurrency = z.object({
  code: z.string(),
  logo: z.string(),
  precision: z.number().int(),
  min: z.string(),
  max: z.string().nullable(),
  fee_percent: z.string(),
  fee_fixed: z.string(),
  balance: z.string(),
});
export type TTransferCurrency = z.infer<typeof ZTransferCurrency>;

/** POST /api/transfer/check */
export const ZTransferCheck = z.object({
  status: z.literal('ok'),
  recipient: z.object({ account_id: z.number().int(), name: z.string() }),
  currency: z.string(),
  amount: z.string(),
  fee: z.string(),
  /** amount + fee: what leaves the sender's wallet. */
  total: z.string(),
  balance: z.string(),
  /** 2FA is on: the transfer will ask for a code (TOTP on) or a passkey. */
  ...ZSecondFactorNeed,
});
export type TTransferCheck = z.infer<typeof ZTransferCheck>;

export function historyPageSchema<T extends z.ZodType>(item: T) {
  return z.object({ items: z.array(item), page: z.number().int(), per_page: z.number().int(), total: z.number().int(), pages: z.number().int() });
}
