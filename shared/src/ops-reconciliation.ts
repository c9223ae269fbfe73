import { z } from 'zod';
import { ZAmountText, ZCurrencyCode, emptyToUndefined } from './money.ts';
import { ZOpsQueue } from './ops-support.ts';
import { LEDGER_ADJUSTMENT_REASONS } from './ops-requests.ts';

/*
 * Reconciliation (/ops/reconciliation, /api/ops/reconciliation…): for a period and a provider,
 * the provider's records of payments and payouts against the ledger's clearing accounts (the same
 * report as `ops payments:reconcile`). Every difference found is kept once in the suspense list
 * until an operator explains it or a second operator approves the adjustment proposed for it.
 * And the back office's home (/api/ops/dashboard): queues, today's volumes, the parts' health.
 * Amounts in major units as text, like every answer.
 */

export const RECONCILIATION_KINDS = [
  'payout_missing_in_ledger',
  'payout_unknown_to_provider',
  'payout_failed_not_released',
  'deposit_not_credited',
  'deposit_unreported',
  'amount_mismatch',
  'currency_mismatch',
  'clearing_mismatch',
] as const;
export type TReconciliationKind = (typeof RECONCILIATION_KINDS)[number];

/** A suspense item waits for someone (open), for a second operator's approval (proposed), or is done (resolved). */
export const SUSPENSE_STATES = ['open', 'proposed', 'resolved'] as const;

/** The longest a suspense item should wait for an operator (the `suspense` queue's target). */
export const SUSPENSE_TARGET_MS = 24 * 60 * 60_000;

/** GET /api/ops/reconciliation: UTC days, `to` inclusive; no provider: all of them. */
export const ZOpsReconciliationQuery = z
  .object({
    provider: z.preprocess(
      emptyToUndefined,
      z
        .string()
        .regex(/^[a-z0-9-]{1,40}$/, 'validation.invalid')
        .optional(),
    ),
    from: z.iso.date('validation.invalid'),
    to: z.iso.date('validation.invalid'),
    format: z.preprocess(emptyToUndefined, z.enum(['json', 'csv']).default('json')),
  })
  .refine((query) => query.from <= query.to, { path: ['to'], message: 'validation.invalid' });
export type TOpsReconciliationQuery = z.infer<typeof ZOpsReconciliationQuery>;

export const ZSuspenseItem = z.object({
  id: z.string(),
  kind: z.enum(RECONCILIATION_KINDS),
  provider: z.string(),
  currency: z.string(),
  /** Our withdrawal's or payment's id as the provider names it; for a clearing mismatch, the difference. */
  reference: z.string(),
  provider_amount: z.string().nullable(),
  ledger_amount: z.string().nullable(),
  found_at: z.string(),
  state: z.enum(SUSPENSE_STATES),
  /** The operator's explanation, when explained. */
  explanation: z.string().nullable(),
  /** The adjustment proposed for it (a four-eyes `ledger.adjust` request) and its state. */
  request: z.object({ id: z.string(), state: z.string() }).nullable(),
  resolved_by: z.string().nullable(),
  resolved_at: z.string().nullable(),
});
export type TSuspenseItem = z.infer<typeof ZSuspenseItem>;

/** Per UTC day and clearing account: its postings that raised and lowered it (a payout raises it, a deposit lowers it). */
export const ZClearingDay = z.object({
  day: z.string(),
  provider: z.string(),
  currency: z.string(),
  transactions: z.number().int(),
  increase: z.string(),
  decrease: z.string(),
  net: z.string(),
});
export type TClearingDay = z.infer<typeof ZClearingDay>;

export const ZOpsReconciliationResponse = z.object({
  status: z.literal('ok'),
  from: z.string(),
  to: z.string(),
  provider: z.string().nullable(),
  /** The providers this core runs with (the period's choice of provider). */
  providers: z.array(z.string()),
  ok: z.boolean(),
  /** This run's differences, each with its suspense item. */
  differences: z.array(ZSuspenseItem),
  daily: z.array(ZClearingDay),
  /** Every unresolved item (whatever period found it), then the latest resolved. */
  suspense: z.array(ZSuspenseItem),
});
export type TOpsReconciliationResponse = z.infer<typeof ZOpsReconciliationResponse>;

export const ZOpsSuspenseParams = z.object({ id: z.string().regex(/^[1-9]\d{0,17}$/, 'validation.invalid') });
/** POST /api/ops/reconciliation/suspense/{id}/explain */
export const ZOpsSuspenseExplainBody = z.object({ text: z.string().trim().min(1, 'validation.required').max(500, 'validation.too_long') });
/** POST /api/ops/reconciliation/suspense/{id}/adjust: the `ledger.adjust` proposal's parameters. */
export const ZOpsSuspenseAdjustBody = z.object({
  account_id: z.coerce.number().int().min(10000000, 'validation.invalid').max(99999999, 'validation.invalid'),
  currency: ZCurrencyCode,
  amount: ZAmountText,
  direction: z.enum(['credit', 'debit'], 'validation.invalid'),
  reason: z.enum(LEDGER_ADJUSTMENT_REASONS, 'validation.invalid'),
  memo: z.string().trim().min(1, 'validation.required').max(200, 'validation.too_long'),
});
export type TOpsSuspenseAdjustBody = z.infer<typeof ZOpsSuspenseAdjustBody>;
export const ZOpsSuspenseResponse = z.object({ status: z.literal('ok'), item: ZSuspenseItem });

/** Today's (UTC) money movements by kind and currency. */
export const VOLUME_KINDS = ['deposits', 'withdrawals', 'exchanges'] as const;
export const ZVolume = z.object({ kind: z.enum(VOLUME_KINDS), currency: z.string(), count: z.number().int(), amount: z.string() });
export type TVolume = z.infer<typeof ZVolume>;

export const HEALTH_PARTS = ['database', 'webhooks', 'payouts', 'realtime'] as const;
export const ZHealthPart = z.object({
  part: z.enum(HEALTH_PARTS),
  state: z.enum(['ok', 'warn', 'down', 'unknown']),
  /** The webhooks waiting to be processed; the database's answer time in ms. */
  value: z.number().int().nullable(),
  /** A job's last run. */
  at: z.string().nullable(),
});
export type THealthPart = z.infer<typeof ZHealthPart>;

/** GET /api/ops/dashboard: the queues this operator works (overdue first), today's volumes, the parts' health. */
export const ZOpsDashboardResponse = z.object({
  status: z.literal('ok'),
  day: z.string(),
  queues: z.array(ZOpsQueue),
  volumes: z.array(ZVolume),
  health: z.array(ZHealthPart),
});
export type TOpsDashboardResponse = z.infer<typeof ZOpsDashboardResponse>;
