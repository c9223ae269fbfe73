import { z } from 'zod';
import { emptyToUndefined, ZAmountText, ZCurrencyCode, ZDateText, HISTORY_MAX_PAGE_SIZE, HISTORY_PAGE_SIZE } from './money.ts';
import { PAYMENT_SYSTEM_ID_PATTERN, ZPaymentLimits } from './payments.ts';
import { ZPasskeyAnswerText } from './passkeys.ts';

/*
 * Withdraw (spec §7 "Withdraw"): the request, its states and the answers. Amounts on the wire
 * are major units as exact text; messages are i18n keys.
 */

/**
 * requested → approved → processing → paid; requested → rejected | cancelled (by the user);
 * approved → rejected; processing → failed. The last four are final; rejected, failed and
 * cancelled give the held amount back.
 */
export const WITHDRAWAL_STATES = ['requested', 'approved', 'processing', 'paid', 'rejected', 'failed', 'cancelled'] as const;
export type TWithdrawalState = (typeof WITHDRAWAL_STATES)[number];
export const WITHDRAWAL_FINAL_STATES: readonly TWithdrawalState[] = ['paid', 'rejected', 'failed', 'cancelled'];

const optionalText = (max: number) => z.preprocess(emptyToUndefined, z.string().max(max).optional());

/** The form of a withdrawal: amount (what leaves the wallet, fee included) and the system's fields. */
export const ZWithdrawForm = z.object({
  currency: ZCurrencyCode,
  amount: ZAmountText,
  card_number: optionalText(40),
  card_holder: optionalText(60),
  iban: optionalText(50),
  account_holder: optionalText(100),
  address: optionalText(200),
  memo: optionalText(120),
});

/** POST /api/withdraw/check: the form and the system (`ps`). */
export const ZWithdrawCheckBody = ZWithdrawForm.extend({
  ps: z.string({ message: 'payments.unknown_system' }).regex(PAYMENT_SYSTEM_ID_PATTERN, 'payments.unknown_system'),
});
export type TWithdrawCheckBody = z.infer<typeof ZWithdrawCheckBody>;

/** POST /api/withdraw/form/{id}: the form, and the code of the second factor when it is on. */
export const ZWithdrawFormBody = ZWithdrawForm.extend({ code: optionalText(40), passkey: ZPasskeyAnswerText });
export type TWithdrawFormBody = z.infer<typeof ZWithdrawFormBody>;

export const ZWithdrawSystemParams = z.object({ id: z.string().regex(PAYMENT_SYSTEM_ID_PATTERN) });
export const ZWithdrawalParams = z.object({ id: z.uuid() });

/** The limits of the caller's verification level for withdrawals, in their currency (major units). */
export const ZWithdrawLimits = ZPaymentLimits;
export type TWithdrawLimits = z.infer<typeof ZWithdrawLimits>;

export const ZWithdrawal = z.object({
  id: z.string(),
  ps: z.string(),
  /** The system's name in the reader's language (`ps` is its id). */
  system: z.string(),
  provider: z.string(),
  currency: z.string(),
  amount: z.string(),
  fee: z.string(),
  receive: z.string(),
  details: z.string(),
  state: z.enum(WITHDRAWAL_STATES),
  /** Why it ended (localized), with an operator's words when they gave some. */
  reason: z.string().nullable(),
  created_at: z.string(),
  expected_at: z.string().nullable(),
  finished_at: z.string().nullable(),
  cancellable: z.boolean(),
});
export type TWithdrawal = z.infer<typeof ZWithdrawal>;

/** GET /api/withdraw/history: the history's paging and filters; status is a withdrawal state. */
export const ZWithdrawHistoryQuery = z.object({
  page: z.preprocess(emptyToUndefined, z.coerce.number().int().min(1).max(1_000_000).default(1)),
  per_page: z.preprocess(emptyToUndefined, z.coerce.number().int().min(1).max(HISTORY_MAX_PAGE_SIZE).default(HISTORY_PAGE_SIZE)),
  from: z.preprocess(emptyToUndefined, ZDateText.optional()),
  to: z.preprocess(emptyToUndefined, ZDateText.optional()),
  currency: z.preprocess(emptyToUndefined, ZCurrencyCode.optional()),
  status: z.preprocess(emptyToUndefined, z.enum(WITHDRAWAL_STATES).optional()),
  format: z.preprocess(emptyToUndefined, z.enum(['json', 'csv']).default('json')),
});
export type TWithdrawHistoryQuery = z.infer<typeof ZWithdrawHistoryQuery>;

// ---- the address book ------------------------------------------------------------------------

/** A saved destination: waiting for its e-mail confirmation, confirmed but before usable_from, or usable. */
export const ZWithdrawDestination = z.object({
  id: z.uuid(),
  ps: z.string(),
  currency: z.string(),
  label: z.string(),
  /** The destination masked: "•••• 1111", "bc1qar0s…zwf5mdq", "DE89 •••• 3000". */
  shown: z.string(),
  state: z.enum(['unconfirmed', 'waiting', 'usable']),
  created_at: z.string(),
  usable_from: z.string(),
});
export type TWithdrawDestination = z.infer<typeof ZWithdrawDestination>;

/** "Allow-list only": on, and (after the user turned it off) when it goes off. */
export const ZWithdrawAllowlist = z.object({ on: z.boolean(), off_at: z.string().nullable() });

/** GET /api/withdraw/book */
export const ZWithdrawBook = z.object({ status: z.literal('ok'), destinations: z.array(ZWithdrawDestination), allowlist: ZWithdrawAllowlist });
export type TWithdrawBook = z.infer<typeof ZWithdrawBook>;

/** POST /api/withdraw/book: a destination of a system's form (its fields), a label, and the second factor's code when 2FA is on. */
export const ZWithdrawDestinationBody = ZWithdrawForm.omit({ amount: true }).extend({
  ps: ZWithdrawCheckBody.shape.ps,
  label: z.string().trim().min(1, 'validation.required').max(60, 'validation.too_long'),
  code: optionalText(40),
  passkey: ZPasskeyAnswerText,
});
export type TWithdrawDestinationBody = z.infer<typeof ZWithdrawDestinationBody>;

/** POST /api/withdraw/book/allowlist: on at once; off 24 hours later, with the second factor. */
export const ZWithdrawAllowlistBody = z.object({ on: z.boolean(), code: optionalText(40), passkey: ZPasskeyAnswerText });
export type TWithdrawAllowlistBody = z.infer<typeof ZWithdrawAllowlistBody>;

export const ZWithdrawBookAnswer = ZWithdrawBook.extend({ message: z.string() });
