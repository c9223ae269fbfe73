import { z } from 'zod';
import { ZOpsClaim } from './ops-support.ts';
import { ZOpsRequest } from './ops-requests.ts';

/*
 * The withdrawals desk (/ops/withdrawals, /api/ops/withdrawals…): requests waiting for an
 * operator, oldest first, with what helps to decide; the payouts that failed at the provider or
 * are stuck there. Amounts in major units as text, like every answer.
 */

/**
 * Why a withdrawal is rejected: a closed catalogue the customer reads in their language
 * (`withdraw.reject.<code>`), the operator's words added when given.
 */
export const WITHDRAWAL_REJECT_REASONS = ['details_invalid', 'verification_needed', 'suspicious', 'limits', 'customer_request', 'other'] as const;
export type TWithdrawalRejectReason = (typeof WITHDRAWAL_REJECT_REASONS)[number];

export const ZOpsWithdrawalParams = z.object({ id: z.uuid('validation.invalid') });

/** A withdrawal waiting for a decision, with what the desk weighs it by. */
export const ZOpsWithdrawalItem = z.object({
  id: z.string(),
  account_id: z.number().int(),
  currency: z.string(),
  amount: z.string(),
  fee: z.string(),
  system: z.string(),
  /** The destination as the customer sees it (masked card, IBAN, address). */
  destination: z.string(),
  created_at: z.string(),
  waiting_ms: z.number().int(),
  overdue: z.boolean(),
  level: z.number().int(),
  /** The customer's withdrawal limits of their level: used and the limit, in the limits' currency. */
  limits: z.object({ currency: z.string(), used_24h: z.string(), limit_24h: z.string(), used_30d: z.string(), limit_30d: z.string() }),
  account_created_at: z.string(),
  /** Earlier withdrawals to the same destination: this customer's, and other customers'. */
  same_destination: z.object({ own: z.number().int(), others: z.number().int() }),
  /** The customer's withdrawals of this currency in the 24 hours before this one (not cancelled or rejected). */
  sum_24h: z.string(),
  /** At or above the currency's four-eyes amount: approval is a request a second operator confirms. */
  large: z.boolean(),
  /** The open four-eyes request for it, if one was proposed. */
  request: ZOpsRequest.nullable(),
  claim: ZOpsClaim.nullable(),
});
export type TOpsWithdrawalItem = z.infer<typeof ZOpsWithdrawalItem>;

/** A payout that failed at the provider (the hold already released) or is stuck there past its expected time. */
export const ZOpsPayoutTrouble = z.object({
  id: z.string(),
  account_id: z.number().int(),
  currency: z.string(),
  amount: z.string(),
  system: z.string(),
  state: z.enum(['approved', 'processing', 'failed']),
  since: z.string(),
  expected_at: z.string().nullable(),
  /** Retry (hand it to the provider again) and mark failed (the hold released) apply to a stuck payout only. */
  stuck: z.boolean(),
});
export type TOpsPayoutTrouble = z.infer<typeof ZOpsPayoutTrouble>;

/** GET /api/ops/withdrawals */
export const ZOpsWithdrawalsResponse = z.object({
  status: z.literal('ok'),
  target_ms: z.number().int(),
  waiting: z.array(ZOpsWithdrawalItem),
  troubled: z.array(ZOpsPayoutTrouble),
});

/** POST /api/ops/withdrawals/{id}/reject: a catalogued reason (what the customer reads) and optional words. */
export const ZOpsWithdrawalRejectBody = z.object({
  reason: z.enum(WITHDRAWAL_REJECT_REASONS, 'validation.invalid'),
  text: z.string().trim().max(500, 'validation.too_long').default(''),
});
export type TOpsWithdrawalRejectBody = z.infer<typeof ZOpsWithdrawalRejectBody>;

/** A decision's outcome: the withdrawal's state now, and the request a large one became. */
export const ZOpsWithdrawalDecision = z.object({ status: z.literal('ok'), state: z.string(), request: ZOpsRequest.nullable() });
