import { z } from 'zod';
import { ZOpsRequest } from './ops-requests.ts';

/*
 * The payments desk (/ops/payments, /api/ops/payments…): five queues, each against its target —
 * provider deliveries (payments' webhooks and card issuers' callbacks) whose processing failed,
 * bank payments that matched no deposit, chain deposits still waiting for confirmations, chain
 * deposits held above the customer's limits, card orders waiting on the issuer. Amounts in major
 * units as text, like every answer.
 */

/** How long an item of each queue may wait before it is overdue. */
export const OPS_PAYMENT_TARGETS_MS = {
  webhooks_failed: 60 * 60_000,
  bank_unmatched: 4 * 60 * 60_000,
  chain_waiting: 2 * 60 * 60_000,
  chain_held: 24 * 60 * 60_000,
  card_orders: 24 * 60 * 60_000,
} as const;

/** An item's clock against its queue's target. */
const ZClock = { waiting_ms: z.number().int(), overdue: z.boolean() };

/** A provider delivery whose processing failed: retried with backoff, replayable now. */
export const ZOpsFailedWebhook = z.object({
  /** Which inbox holds it (its id is that inbox's): a payment provider's webhooks or a card issuer's callbacks. */
  inbox: z.enum(['payments', 'cards']),
  id: z.string(),
  /** The payment provider or the card issuer that sent it. */
  provider: z.string(),
  event_id: z.string().nullable(),
  received_at: z.string(),
  attempts: z.number().int(),
  next_attempt_at: z.string().nullable(),
  last_error: z.string().nullable(),
  ...ZClock,
});
export type TOpsFailedWebhook = z.infer<typeof ZOpsFailedWebhook>;

/** An open bank deposit a held payment may be matched to. */
export const ZOpsBankDeposit = z.object({
  id: z.string(),
  account_id: z.number().int(),
  reference: z.string().nullable(),
  currency: z.string(),
  amount: z.string(),
  state: z.string(),
  created_at: z.string(),
});
export type TOpsBankDeposit = z.infer<typeof ZOpsBankDeposit>;

/** A bank payment that arrived and matched no open deposit (an unknown reference, another amount, a deposit expired). */
export const ZOpsBankPayment = z.object({
  id: z.string(),
  provider: z.string(),
  reference: z.string().nullable(),
  payer: z.string().nullable(),
  currency: z.string(),
  amount: z.string(),
  /** Why it was held: the inbox's result (unknown_payment, amount_mismatch, currency_mismatch, wrong_state). */
  why: z.string(),
  received_at: z.string(),
  ...ZClock,
  /** Open deposits of its currency at its provider quoting its reference or expecting its amount. */
  candidates: z.array(ZOpsBankDeposit),
  /** The open four-eyes request to match it, if one was proposed. */
  request: ZOpsRequest.nullable(),
});
export type TOpsBankPayment = z.infer<typeof ZOpsBankPayment>;

/**
 * A chain deposit seen, waiting for its confirmations; or, with `held_at`, confirmed but above
 * what its customer's verification level may bring in, held until an operator releases it.
 */
export const ZOpsChainDeposit = z.object({
  id: z.string(),
  account_id: z.number().int(),
  currency: z.string(),
  amount: z.string(),
  address: z.string().nullable(),
  confirmations: z.number().int(),
  required_confirmations: z.number().int(),
  created_at: z.string(),
  held_at: z.string().nullable(),
  ...ZClock,
});

/** A card order confirmed and paid, waiting on its issuer to accept or issue it. */
export const ZOpsCardOrder = z.object({
  id: z.string(),
  account_id: z.number().int(),
  issuer: z.string(),
  kind: z.string(),
  status: z.string(),
  since: z.string(),
  ...ZClock,
});

/** GET /api/ops/payments?q=: q narrows the bank payments (reference, payer, or amount). */
export const ZOpsPaymentsQuery = z.object({ q: z.string().trim().max(100, 'validation.too_long').optional() });
export type TOpsPaymentsQuery = z.infer<typeof ZOpsPaymentsQuery>;
export const ZOpsPaymentsResponse = z.object({
  status: z.literal('ok'),
  targets: z.object({
    webhooks_failed: z.number().int(),
    bank_unmatched: z.number().int(),
    chain_waiting: z.number().int(),
    chain_held: z.number().int(),
    card_orders: z.number().int(),
  }),
  webhooks: z.array(ZOpsFailedWebhook),
  bank: z.array(ZOpsBankPayment),
  chain: z.array(ZOpsChainDeposit),
  cards: z.array(ZOpsCardOrder),
});

export const ZOpsWebhookParams = z.object({ id: z.string().regex(/^[1-9]\d{0,17}$/, 'validation.invalid') });
export const ZOpsBankPaymentParams = ZOpsWebhookParams;
export const ZOpsChainDepositParams = z.object({ id: z.uuid({ message: 'validation.invalid' }) });

/** POST /api/ops/payments/webhooks/{id}/replay, POST /api/ops/payments/callbacks/{id}/replay */
export const ZOpsWebhookReplayResponse = z.object({ status: z.literal('ok'), result: z.string(), was_processed: z.boolean() });

/** POST /api/ops/payments/bank/{id}/match: the deposit (its reference or id) the payment was for. */
export const ZOpsBankMatchBody = z.object({ deposit: z.string().trim().min(1, 'validation.required').max(60, 'validation.invalid') });
export type TOpsBankMatchBody = z.infer<typeof ZOpsBankMatchBody>;
/** credited: the deposit is credited now; requested: another amount, a second operator approves the match. */
export const ZOpsBankMatchResponse = z.object({ status: z.literal('ok'), state: z.enum(['credited', 'requested']), request: ZOpsRequest.nullable() });

/** POST /api/ops/payments/chain/{id}/release: the held deposit credited to its customer. */
export const ZOpsChainReleaseResponse = z.object({ status: z.literal('ok'), state: z.literal('credited') });
