import { z } from 'zod';
import { divCeil, emptyToUndefined, parseDecimal, pow10, ZAmountText, ZCurrencyCode, ZHistoryQuery } from './money.ts';
import { PAYMENT_FIELDS } from './payment-fields.ts';

/*
 * Payments (spec §7 "Deposit"): the providers, the states of a deposit and the events a
 * provider sends to our webhook. Messages are i18n keys, as in auth.ts.
 */

export const PAYMENT_PROVIDERS = ['sandbox-card', 'sandbox-bank', 'sandbox-chain', 'evm'] as const;
export type TPaymentProvider = (typeof PAYMENT_PROVIDERS)[number];

/** What a payment system is used for: money in, money out, buying a currency by paying another. */
export const PAYMENT_DIRECTIONS = ['deposit', 'withdraw', 'purchase'] as const;
export type TPaymentDirection = (typeof PAYMENT_DIRECTIONS)[number];

/** A system's id: lower-case letters, digits and dashes (it appears in URLs: /deposit/form/{id}/{currency}). */
export const PAYMENT_SYSTEM_ID_PATTERN = /^[a-z0-9][a-z0-9-]{1,39}$/;

/**
 * A payment system as the API lists it, for one currency: its terms in that currency (amounts
 * in major units as exact text; the fee is `fee_percent` percent of the amount, rounded up to the
 * currency's minor unit, plus `fee_fixed`), the verification level it needs, whether the caller
 * is below it (`locked`), and the fields its form asks for (shared/src/payment-fields.ts).
 * For a purchase, `currency` is the one paid with.
 */
export const ZPaymentSystem = z.object({
  id: z.string(),
  provider: z.enum(PAYMENT_PROVIDERS),
  direction: z.enum(PAYMENT_DIRECTIONS),
  name: z.object({ ru: z.string(), en: z.string() }),
  logo: z.string(),
  currency: z.string(),
  fee_percent: z.string(),
  fee_fixed: z.string(),
  min: z.string(),
  max: z.string(),
  level: z.number().int(),
  locked: z.boolean(),
  fields: z.array(z.enum(PAYMENT_FIELDS)),
  /** sandbox-chain: confirmations a transaction needs before it is credited; 0 elsewhere. */
  confirmations: z.number().int(),
});
export type TPaymentSystem = z.infer<typeof ZPaymentSystem>;

/** The terms the fee and limit rules need, in minor units of the system's currency. */
export type TPaymentTerms = { feePercent: string; feeFixed: bigint; min: bigint; max: bigint };

/** The fee of `amount` (minor units): the percentage rounded up to a minor unit, plus the fixed part. */
export function paymentFee(terms: Pick<TPaymentTerms, 'feePercent' | 'feeFixed'>, amount: bigint): bigint {
  const percent = parseDecimal(terms.feePercent);
  return divCeil(amount * percent.num, 100n * pow10(percent.scale)) + terms.feeFixed;
}

export type TPaymentAmountCheck =
  | { ok: true; fee: bigint; receive: bigint }
  | { ok: false; reason: 'too_small' | 'too_large' | 'fee_exceeds_amount'; fee: bigint; receive: bigint };

/**
 * The fee and what is left of `amount` after it (what is credited, paid out or exchanged), and
 * whether the amount is within the system's minimum and maximum and above its fee.
 */
export function checkPaymentAmount(terms: TPaymentTerms, amount: bigint): TPaymentAmountCheck {
  const fee = paymentFee(terms, amount);
  const receive = amount - fee;
  if (amount < terms.min) return { ok: false, reason: 'too_small', fee, receive };
  if (amount > terms.max) return { ok: false, reason: 'too_large', fee, receive };
  if (receive <= 0n) return { ok: false, reason: 'fee_exceeds_amount', fee, receive };
  return { ok: true, fee, receive };
}

/** created → pending → paid → credited, or declined / expired; the last three are final. */
export const DEPOSIT_STATES = ['created', 'pending', 'paid', 'credited', 'declined', 'expired'] as const;
export type TDepositState = (typeof DEPOSIT_STATES)[number];

/** A webhook's timestamp may be this far from our clock, either way. */
export const WEBHOOK_TOLERANCE_SECONDS = 300;

/** The signature header: `t=<unix seconds>,v1=<hex HMAC-SHA256 of "t.rawBody">`. */
export const WEBHOOK_SIGNATURE_HEADER = 'x-obmen-signature';

/**
 * What a provider tells us about a payment. `id` is the provider's event id (exactly-once key);
 * the amount is in major units as text, compared exactly with the payment's.
 */
export const ZPaymentWebhookEvent = z.object({
  id: z.string().min(1).max(200),
  /** payout.*: a withdrawal's payout (payment_id = the withdrawal's id). */
  type: z.enum(['payment.pending', 'payment.paid', 'payment.declined', 'payout.paid', 'payout.failed']),
  payment_id: z.string().min(1).max(200),
  amount: z.string().min(1).max(60),
  currency: z.string().min(1).max(10),
  /** Chain providers: the address paid to (payment_id is then the transaction id) and its confirmations so far. */
  address: z.string().min(1).max(120).optional(),
  confirmations: z.number().int().min(0).max(1_000_000).optional(),
  /** Chain providers: which output (or log entry) of the transaction pays `address` (0 when absent); one transaction may pay several deposits. */
  output: z.number().int().min(0).max(1_000_000).optional(),
  /** Bank providers: the reference the payer quoted (a payment that matches no open deposit by it is held for an operator) and who paid. */
  reference: z.string().max(140).optional(),
  payer: z.string().max(140).optional(),
});
export type TPaymentWebhookEvent = z.infer<typeof ZPaymentWebhookEvent>;

/** The path parameter of a provider's webhook: an unknown provider is a missing route. */
export const ZWebhookParams = z.object({ provider: z.enum(PAYMENT_PROVIDERS) });

/**
 * GET /api/deposit/ps and /api/withdraw/ps: the systems under each currency they take, with the
 * currency's name in the reader's language and its logo.
 */
export const ZPaymentSystemGroup = z.object({ currency: z.string(), name: z.string(), logo: z.string(), systems: z.array(ZPaymentSystem) });
export type TPaymentSystemGroup = z.infer<typeof ZPaymentSystemGroup>;
export type TDepositSystems = { status: 'ok'; currencies: TPaymentSystemGroup[] };

/**
 * POST /api/deposit/integration_json: a deposit of `amount` (major units) through system `ps`.
 * A chain system takes no amount (the payer sends what they send to the address it answers).
 */
export const ZDepositCreateBody = z.object({
  ps: z.string({ message: 'payments.unknown_system' }).regex(PAYMENT_SYSTEM_ID_PATTERN, 'payments.unknown_system'),
  currency: ZCurrencyCode,
  amount: z.preprocess((value) => (value === '' || value === null ? undefined : value), ZAmountText.optional()),
});
export type TDepositCreateBody = z.infer<typeof ZDepositCreateBody>;

/** Bank details a bank-transfer deposit is paid to; `reference` must be quoted with the transfer. */
export const ZBankDetails = z.object({
  bank: z.string(),
  beneficiary: z.string(),
  iban: z.string(),
  bic: z.string(),
  reference: z.string(),
});
export type TBankDetails = z.infer<typeof ZBankDetails>;

/** A payment as the deposit and purchase calls and their check answer it (amounts in major units). */
export const ZDepositPayment = z.object({
  id: z.string(),
  direction: z.enum(PAYMENT_DIRECTIONS),
  ps: z.string(),
  provider: z.enum(PAYMENT_PROVIDERS),
  currency: z.string(),
  amount: z.string(),
  /** The system's fee, and what is left of the amount after it (credited, or exchanged for a purchase). */
  fee: z.string(),
  receive: z.string(),
  state: z.enum(DEPOSIT_STATES),
  /** An i18n key: why it ended declined or expired, or what became of a purchase. */
  reason: z.string().nullable(),
  created_at: z.string(),
  expires_at: z.string(),
  /** Where the payer pays (the card sandbox's hosted page), while the payment is open. */
  pay_url: z.string().nullable(),
  /** The page of this payment on the site (history rows link to it); `check` takes it as `url`. */
  url: z.string(),
  bank: ZBankDetails.nullable(),
  address: z.string().nullable(),
  confirmations: z.number().int(),
  required_confirmations: z.number().int(),
});
export type TDepositPayment = z.infer<typeof ZDepositPayment>;

/** A chain system's answer: the user's deposit address in the currency's format and its QR code. */
export const ZDepositAddress = z.object({
  ps: z.string(),
  currency: z.string(),
  address: z.string(),
  /** The QR code of the address, as an SVG document. */
  qr_svg: z.string(),
  min: z.string(),
  confirmations: z.number().int(),
});
export type TDepositAddress = z.infer<typeof ZDepositAddress>;

/** POST /api/deposit/integration_json/check {url}: the payment's page URL (or its id). */
export const ZPaymentCheckBody = z.object({ url: z.string({ message: 'validation.required' }).trim().min(1, 'validation.required').max(500) });

/** POST /api/purchase/integration_json: buy `buy` paying `amount` of `currency` (major units) through system `ps`. */
export const ZPurchaseBody = z.object({
  ps: z.string({ message: 'payments.unknown_system' }).regex(PAYMENT_SYSTEM_ID_PATTERN, 'payments.unknown_system'),
  currency: ZCurrencyCode,
  buy: ZCurrencyCode,
  amount: ZAmountText,
});
export type TPurchaseBody = z.infer<typeof ZPurchaseBody>;

/**
 * A purchase's locked quote: `receive` of `buy` at `rate` for what is left of the payment after
 * the system's fee, valid until `expires_at`. Paid later, it is re-quoted: within
 * `tolerance_percent` the exchange runs at the new figures (`outcome` requoted), beyond it the
 * user keeps the fiat (`kept_fiat`).
 */
export const ZPurchaseQuote = z.object({
  buy: z.string(),
  receive: z.string(),
  rate: z.string(),
  expires_at: z.string(),
  tolerance_percent: z.string(),
  outcome: z.enum(['exchanged', 'requoted', 'kept_fiat']).nullable(),
  final_receive: z.string().nullable(),
  final_rate: z.string().nullable(),
});
export type TPurchaseQuote = z.infer<typeof ZPurchaseQuote>;

/** GET /api/purchase/ps/{x}: the currency to buy. */
export const ZPurchaseParams = z.object({ x: ZCurrencyCode });

/**
 * POST /api/{x}/check (spec §7): the flows whose form this generic check takes. Withdraw,
 * exchange and transfer have checks of their own (their routes are static, so they win).
 */
export const PAYMENT_CHECK_FLOWS = ['deposit', 'purchase'] as const;
export type TPaymentCheckFlow = (typeof PAYMENT_CHECK_FLOWS)[number];
export const ZPaymentFormCheckParams = z.object({ x: z.enum(PAYMENT_CHECK_FLOWS) });

/** The form of a deposit or a purchase (`buy`: the currency bought; a purchase needs it). */
export const ZPaymentFormCheckBody = z.object({
  ps: z.string({ message: 'payments.unknown_system' }).regex(PAYMENT_SYSTEM_ID_PATTERN, 'payments.unknown_system'),
  currency: ZCurrencyCode,
  amount: ZAmountText,
  buy: z.preprocess((value) => (value === '' || value === null ? undefined : value), ZCurrencyCode.optional()),
});
export type TPaymentFormCheckBody = z.infer<typeof ZPaymentFormCheckBody>;

/**
 * The limits of the caller's verification level for an operation (deposit, withdrawal) in the
 * limits' currency (major units): per rolling 24 hours and 30 days, and what is left of each.
 */
export const ZPaymentLimits = z.object({
  level: z.number().int(),
  currency: z.string(),
  per_24h: z.string(),
  per_30d: z.string(),
  left_24h: z.string(),
  left_30d: z.string(),
});
export type TPaymentLimits = z.infer<typeof ZPaymentLimits>;

/** A purchase's quote as the check answers it: `receive` of `buy` at `rate` (`rate_inverse` the other way), after the pair's `fee` (of the paid currency). */
export const ZPurchaseCheckQuote = z.object({ buy: z.string(), receive: z.string(), rate: z.string(), rate_inverse: z.string(), fee: z.string() });
export type TPurchaseCheckQuote = z.infer<typeof ZPurchaseCheckQuote>;

/**
 * GET /api/deposit/history and /api/payment/history (purchases): a payment as `check` answers
 * it, with the purchase's quote (null for a deposit).
 */
export const ZPaymentRecord = ZDepositPayment.extend({
  /** The system's name in the reader's language. */
  system: z.string(),
  quote: ZPurchaseQuote.nullable(),
});
export type TPaymentRecord = z.infer<typeof ZPaymentRecord>;

/** The history's paging, dates, currency and CSV, filtering by a payment's states. */
export const ZPaymentHistoryQuery = ZHistoryQuery.omit({ direction: true }).extend({
  status: z.preprocess(emptyToUndefined, z.enum(DEPOSIT_STATES).optional()),
});
export type TPaymentHistoryQuery = z.infer<typeof ZPaymentHistoryQuery>;
