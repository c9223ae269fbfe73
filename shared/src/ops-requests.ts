import { z } from 'zod';
import { ZEmail } from './auth.ts';
import { ZAmountText, ZCurrencyCode } from './money.ts';
import { ZConfigChange } from './ops-config.ts';
import { OPS_ROLES, ZOpsReason, ZOpsReasonGiven } from './ops.ts';

/*
 * Four eyes (/api/ops/requests): what no operator may do alone is proposed, then approved or
 * declined by a second operator who holds the same permission; the database refuses a decision
 * by the proposer. A request lapses 24 hours after it was proposed.
 */

export const OPS_REQUEST_TTL_MS = 24 * 60 * 60_000;

/**
 * Why money is credited to or debited from a customer: a closed catalogue (`ops.adjustment.<code>`
 * in ru and en). Each names the house account on the other side (`adjustment` accounts by
 * reason), so what compensations or refunds cost is read from the ledger per reason.
 */
export const LEDGER_ADJUSTMENT_REASONS = ['compensation', 'refund', 'bank_fee', 'correction', 'promotion', 'other'] as const;
export type TLedgerAdjustmentReason = (typeof LEDGER_ADJUSTMENT_REASONS)[number];

const ZOpsAccountId = z.number().int().min(10000000).max(99999999);
/** What the ledger transaction's memo says (with the reason's code before it). */
const ZLedgerMemo = z.string().trim().min(1, 'validation.required').max(200, 'validation.too_long');
export const ZLedgerTransactionId = z.string().regex(/^[1-9]\d{0,17}$/, 'validation.invalid');

/** What may be proposed, with its parameters. */
export const ZOpsProposal = z.discriminatedUnion('action', [
  z.object({
    action: z.literal('operators.set_roles'),
    params: z.object({ email: ZEmail, roles: z.array(z.enum(OPS_ROLES, 'validation.invalid')).max(OPS_ROLES.length) }),
  }),
  z.object({ action: z.literal('customers.reset_second_factor'), params: z.object({ account_id: ZOpsAccountId }) }),
  /** A credit or debit of a customer's wallet against the adjustment account of its reason. */
  z.object({
    action: z.literal('ledger.adjust'),
    params: z.object({
      account_id: ZOpsAccountId,
      currency: ZCurrencyCode,
      /** Major units as typed; the currency's precision is checked at proposal. */
      amount: ZAmountText,
      direction: z.enum(['credit', 'debit'], 'validation.invalid'),
      reason: z.enum(LEDGER_ADJUSTMENT_REASONS, 'validation.invalid'),
      memo: ZLedgerMemo,
    }),
  }),
  /** The reversal of one ledger transaction that touched this customer's wallets. */
  z.object({
    action: z.literal('ledger.reverse'),
    params: z.object({ account_id: ZOpsAccountId, transaction_id: ZLedgerTransactionId, memo: ZLedgerMemo }),
  }),
  /** A withdrawal at or above its currency's four-eyes amount, approved by a second operator. */
  z.object({ action: z.literal('withdrawals.approve_large'), params: z.object({ withdrawal_id: z.uuid('validation.invalid') }) }),
  /** A held bank payment matched to a deposit expecting another amount: credited with what arrived once a second operator approves. */
  z.object({
    action: z.literal('payments.match'),
    params: z.object({
      bank_payment_id: z.string().regex(/^[1-9]\d{0,17}$/, 'validation.invalid'),
      deposit_id: z.uuid('validation.invalid'),
      /** What arrived and what the deposit expected, as the desk showed them (checked at proposal): what the approver reads. */
      currency: ZCurrencyCode,
      amount: ZAmountText,
      expected: ZAmountText,
    }),
  }),
  /** A sensitive setting (/ops/config) and its new value; approval runs the setting's own service. */
  z.object({ action: z.literal('config.change'), params: ZConfigChange }),
]);
export type TOpsProposal = z.infer<typeof ZOpsProposal>;
export type TOpsRequestAction = TOpsProposal['action'];
export const OPS_REQUEST_ACTIONS = ZOpsProposal.options.map((option) => option.shape.action.value);

/** POST /api/ops/requests */
export const ZOpsProposeBody = z.intersection(ZOpsProposal, ZOpsReasonGiven);

export const ZOpsRequest = z.object({
  id: z.string(),
  action: z.enum(OPS_REQUEST_ACTIONS),
  params: z.record(z.string(), z.unknown()),
  subject: z.string(),
  reason_code: ZOpsReason,
  reason_text: z.string().nullable(),
  proposed_by: z.string(),
  proposed_at: z.string(),
  expires_at: z.string(),
  state: z.enum(['pending', 'approved', 'declined', 'withdrawn', 'lapsed']),
  decided_by: z.string().nullable(),
  decided_at: z.string().nullable(),
  /** Proposed by the operator asking: they may withdraw it, never decide it. */
  mine: z.boolean(),
});
export type TOpsRequest = z.infer<typeof ZOpsRequest>;

/** GET /api/ops/requests: the pending ones, oldest first, then the latest decided. */
/** GET /api/ops/requests?account_id=: only those about one customer (the customer view). */
export const ZOpsRequestsQuery = z.object({ account_id: z.coerce.number().int().min(10000000).max(99999999).optional() });
export type TOpsRequestsQuery = z.infer<typeof ZOpsRequestsQuery>;
export const ZOpsRequestsResponse = z.object({ status: z.literal('ok'), pending: z.array(ZOpsRequest), decided: z.array(ZOpsRequest) });
export const ZOpsRequestResponse = z.object({ status: z.literal('ok'), request: ZOpsRequest });
export const ZOpsRequestParams = z.object({ id: z.string().regex(/^[1-9]\d{0,17}$/, 'validation.invalid') });

/** GET /api/ops/operators */
export const ZOpsOperatorRow = z.object({
  email: z.string(),
  roles: z.array(z.string()),
  enrolled: z.boolean(),
  disabled: z.boolean(),
  created_at: z.string(),
});
export const ZOpsOperatorsResponse = z.object({ status: z.literal('ok'), operators: z.array(ZOpsOperatorRow) });
