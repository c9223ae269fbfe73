import { Gauge, Registry } from 'prom-client';
import { OPS_PAYMENT_TARGETS_MS, SUSPENSE_TARGET_MS, type TOpsQueue } from '@obmen/shared';
import type { Queryable } from '../../db/index.ts';
import { SUSPENSE_WAITING } from './reconciliation.ts';

/*
 * The back office's queues, one registry: each says how to count its items, how old its oldest
 * is and how many are past the target, from the tables themselves (nothing kept in memory, so
 * every core answers the same). GET /api/ops/queues and /metrics read the same figures.
 */

export type TQueueTargets = { supportMs: number; kycMs: number; withdrawalsMs: number };

/** The configured targets (the others are fixed: reported chats, suspense). */
export const queueTargetsOf = (config: {
  SUPPORT_FIRST_RESPONSE_MS: number;
  KYC_REVIEW_TARGET_MS: number;
  WITHDRAWAL_REVIEW_TARGET_MS: number;
}): TQueueTargets => ({
  supportMs: config.SUPPORT_FIRST_RESPONSE_MS,
  kycMs: config.KYC_REVIEW_TARGET_MS,
  withdrawalsMs: config.WITHDRAWAL_REVIEW_TARGET_MS,
});

/** Reported chats have no configurable target: a day, like a document check. */
export const CHAT_REPORT_TARGET_MS = 24 * 60 * 60_000;

type TQueueDef = { name: TOpsQueue['name']; target: (targets: TQueueTargets) => number; since: string };

/** Per queue, the timestamps of its waiting items (one SELECT of one column, named `since`). */
const QUEUES: TQueueDef[] = [
  {
    name: 'support',
    target: (targets) => targets.supportMs,
    since: `SELECT waiting_since AS since FROM conversations WHERE kind = 'support' AND status = 'open' AND waiting_since IS NOT NULL`,
  },
  { name: 'chat_reports', target: () => CHAT_REPORT_TARGET_MS, since: 'SELECT created_at AS since FROM chat_reports WHERE reviewed_at IS NULL' },
  // Submitted, not yet decided.
  { name: 'kyc', target: (targets) => targets.kycMs, since: `SELECT submitted_at AS since FROM verifications WHERE status = 'submitted'` },
  // Requested, waiting for an operator (auto-approved ones never wait here).
  { name: 'withdrawals', target: (targets) => targets.withdrawalsMs, since: `SELECT created_at AS since FROM withdrawals WHERE state = 'requested'` },
  // The payments desk (ops/payments.ts): deliveries of either inbox whose processing failed and are not done yet.
  {
    name: 'webhooks_failed',
    target: () => OPS_PAYMENT_TARGETS_MS.webhooks_failed,
    since: `SELECT received_at AS since FROM payment_webhooks WHERE processed_at IS NULL AND signature_valid AND attempts > 0
            UNION ALL SELECT received_at FROM card_issuer_callbacks WHERE processed_at IS NULL AND signature_valid AND attempts > 0`,
  },
  {
    name: 'bank_unmatched',
    target: () => OPS_PAYMENT_TARGETS_MS.bank_unmatched,
    since: `SELECT received_at AS since FROM bank_payments_held WHERE state = 'held'`,
  },
  {
    name: 'chain_waiting',
    target: () => OPS_PAYMENT_TARGETS_MS.chain_waiting,
    since: `SELECT created_at AS since FROM payments WHERE direction = 'deposit' AND address IS NOT NULL AND state = 'pending' AND held_at IS NULL`,
  },
  // Confirmed, but above the customer's limits: waiting for an operator's release since held.
  {
    name: 'chain_held',
    target: () => OPS_PAYMENT_TARGETS_MS.chain_held,
    since: `SELECT held_at AS since FROM payments WHERE held_at IS NOT NULL AND state = 'pending'`,
  },
  {
    name: 'card_orders',
    target: () => OPS_PAYMENT_TARGETS_MS.card_orders,
    since: `SELECT coalesce(confirmed_at, created_at) AS since FROM cards WHERE status IN ('confirmed', 'issuing')`,
  },
  // Reconciliation's differences, neither explained nor settled by an approved adjustment.
  { name: 'suspense', target: () => SUSPENSE_TARGET_MS, since: SUSPENSE_WAITING },
];

export async function queueFigures(db: Queryable, targets: TQueueTargets, now: Date): Promise<TOpsQueue[]> {
  const out: TOpsQueue[] = [];
  for (const queue of QUEUES) {
    const target = queue.target(targets);
    const [row] = await db.query<{ count: number; oldest: string | null; overdue: number }>(
      `SELECT count(*)::int AS count, min(since)::text AS oldest,
              count(*) FILTER (WHERE since < $1::timestamptz - make_interval(secs => $2))::int AS overdue
         FROM (${queue.since}) items`,
      [now.toISOString(), target / 1000],
    );
    const oldest = row?.oldest ? Math.max(0, now.getTime() - new Date(row.oldest).getTime()) : null;
    out.push({ name: queue.name, target_ms: target, count: row?.count ?? 0, oldest_ms: oldest, overdue: row?.overdue ?? 0 });
  }
  return out;
}

/**
 * The same figures in Prometheus' text format: obmen_queue_items, obmen_queue_oldest_seconds,
 * obmen_queue_overdue and obmen_queue_target_seconds, labelled by queue; read at each scrape.
 */
export function queueMetrics(read: () => Promise<TOpsQueue[]>) {
  const registry = new Registry();
  const gauge = (name: string, help: string) => new Gauge({ name, help, labelNames: ['queue'], registers: [registry] });
  const items = gauge('obmen_queue_items', 'Items waiting in a back-office queue');
  const oldest = gauge('obmen_queue_oldest_seconds', 'Age of the oldest waiting item (0 when empty)');
  const overdue = gauge('obmen_queue_overdue', 'Items waiting longer than the queue target');
  const target = gauge('obmen_queue_target_seconds', 'The queue target');
  return {
    contentType: registry.contentType,
    async text(): Promise<string> {
      for (const queue of await read()) {
        const labels = { queue: queue.name };
        items.set(labels, queue.count);
        oldest.set(labels, (queue.oldest_ms ?? 0) / 1000);
        overdue.set(labels, queue.overdue);
        target.set(labels, queue.target_ms / 1000);
      }
      return registry.metrics();
    },
  };
}
