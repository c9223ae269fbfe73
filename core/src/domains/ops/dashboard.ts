import { Gauge, Registry } from 'prom-client';
import { formatAmount, type THealthPart, type TOpsPermission, type TOpsQueue, type TVolume } from '@obmen/shared';
import type { Queryable } from '../../db/index.ts';
import { currencies, precisionLookup } from '../currencies/service.ts';
import { queueFigures, type TQueueTargets } from './queues.ts';

/*
 * The back office's home (/ops, GET /api/ops/dashboard): the queues this operator works, overdue
 * first; today's volumes by currency; the health of the parts money depends on. Every figure is
 * read from the tables (and the jobs' runs) at each call, by the same functions /metrics reads.
 */

const DAY_MS = 86_400_000;

/** A timed job's last run as the scheduler reports it (app.jobs.status(), /api/internal/health). */
export type TJobStatus = { name: string; enabled: boolean; every_ms: number; last_run_at: string | null; duration_ms: number | null; error: string | null };

/** Which queue an operator works, by the permission its desk needs. */
const QUEUE_PERMISSION: Record<TOpsQueue['name'], TOpsPermission> = {
  support: 'support.reply',
  chat_reports: 'chat.reports',
  kyc: 'kyc.review',
  withdrawals: 'withdrawals.review',
  webhooks_failed: 'payments.review',
  bank_unmatched: 'payments.review',
  chain_waiting: 'payments.review',
  chain_held: 'payments.review',
  card_orders: 'payments.review',
  suspense: 'reconciliation.resolve',
};

/** The UTC day `now` falls in, as [start, end). */
export function utcDay(now: Date): { day: string; from: Date; to: Date } {
  const from = new Date(Math.floor(now.getTime() / DAY_MS) * DAY_MS);
  return { day: from.toISOString().slice(0, 10), from, to: new Date(from.getTime() + DAY_MS) };
}

/**
 * Today's (UTC) money movements by kind and currency, in major units: deposits credited (card,
 * bank and chain deposits and purchases), withdrawals paid out (what the customer asked for,
 * fee included), exchanges completed (what was sold, by the sold currency).
 */
export async function todayVolumes(db: Queryable, now: Date): Promise<TVolume[]> {
  const { from, to } = utcDay(now);
  const rows = await db.query<{ kind: TVolume['kind']; currency: string; count: number; amount: string }>(
    `SELECT 'deposits' AS kind, currency, count(*)::int AS count, sum(amount)::text AS amount FROM payments
      WHERE ledger_transaction_id IS NOT NULL AND credited_at >= $1 AND credited_at < $2 GROUP BY currency
     UNION ALL
     SELECT 'withdrawals', currency, count(*)::int, sum(amount)::text FROM withdrawals
      WHERE state = 'paid' AND finished_at >= $1 AND finished_at < $2 GROUP BY currency
     UNION ALL
     SELECT 'exchanges', src, count(*)::int, sum(pay)::text FROM exchanges
      WHERE status = 'completed' AND created_at >= $1 AND created_at < $2 GROUP BY src
     ORDER BY 1, 2`,
    [from, to],
  );
  const precision = precisionLookup(await currencies(db));
  return rows.map((row) => ({ ...row, amount: formatAmount(BigInt(row.amount), precision(row.currency) ?? 0) }));
}

/** A job's health from its last run: unknown when it does not run here, down when it failed, late past three periods. */
function jobHealth(part: THealthPart['part'], job: TJobStatus | undefined, now: Date): THealthPart {
  if (!job?.enabled || !job.last_run_at) return { part, state: 'unknown', value: null, at: job?.last_run_at ?? null };
  const late = now.getTime() - new Date(job.last_run_at).getTime() > 3 * job.every_ms + 60_000;
  return { part, state: job.error ? 'down' : late ? 'warn' : 'ok', value: job.duration_ms, at: job.last_run_at };
}

/** A signed event is waiting when unprocessed; one waiting longer than this is a backlog. */
const WEBHOOK_LATE_MS = 5 * 60_000;

/** The parts' health: the database's answer time, the unprocessed webhooks, the payouts job, this core's realtime check. */
export async function partsHealth(db: Queryable, jobs: () => Promise<TJobStatus[]>, now: Date): Promise<THealthPart[]> {
  const started = performance.now();
  let database: THealthPart;
  let webhooks: THealthPart;
  try {
    const [row] = await db.query<{ waiting: number; late: number }>(
      `SELECT count(*)::int AS waiting, count(*) FILTER (WHERE received_at < $1)::int AS late FROM payment_webhooks WHERE processed_at IS NULL`,
      [new Date(now.getTime() - WEBHOOK_LATE_MS)],
    );
    database = { part: 'database', state: 'ok', value: Math.round(performance.now() - started), at: null };
    webhooks = { part: 'webhooks', state: row!.late > 0 ? 'warn' : 'ok', value: row!.waiting, at: null };
  } catch {
    database = { part: 'database', state: 'down', value: null, at: null };
    webhooks = { part: 'webhooks', state: 'unknown', value: null, at: null };
  }
  const runs = await jobs().catch(() => [] as TJobStatus[]);
  const job = (name: string) => runs.find((run) => run.name === name);
  return [database, webhooks, jobHealth('payouts', job('payouts'), now), jobHealth('realtime', job('realtime-check'), now)];
}

export type TDashboardDeps = { db: Queryable; targets: TQueueTargets; jobs: () => Promise<TJobStatus[]> };

/** The home of an operator holding these permissions. */
export async function dashboard(deps: TDashboardDeps, permissions: readonly string[], now: Date) {
  const [queues, volumes, health] = await Promise.all([
    queueFigures(deps.db, deps.targets, now),
    todayVolumes(deps.db, now),
    partsHealth(deps.db, deps.jobs, now),
  ]);
  const mine = queues
    .filter((queue) => permissions.includes(QUEUE_PERMISSION[queue.name]))
    .sort((a, b) => b.overdue - a.overdue || (b.oldest_ms ?? -1) - (a.oldest_ms ?? -1));
  return { day: utcDay(now).day, queues: mine, volumes, health };
}

const STATE_VALUE: Record<THealthPart['state'], number> = { ok: 1, warn: 0.5, down: 0, unknown: -1 };

/**
 * The volumes and the health in Prometheus' text format: obmen_volume_today{kind,currency} (major
 * units) and obmen_volume_today_count, obmen_health{part} (1 ok, 0.5 late, 0 down, -1 unknown),
 * obmen_webhooks_backlog; read at each scrape.
 */
export function dashboardMetrics(read: () => Promise<{ volumes: TVolume[]; health: THealthPart[] }>) {
  const registry = new Registry();
  const amount = new Gauge({
    name: 'obmen_volume_today',
    help: "Today's (UTC) volume by kind and currency, major units",
    labelNames: ['kind', 'currency'],
    registers: [registry],
  });
  const count = new Gauge({
    name: 'obmen_volume_today_count',
    help: "Today's (UTC) number of movements by kind and currency",
    labelNames: ['kind', 'currency'],
    registers: [registry],
  });
  const health = new Gauge({ name: 'obmen_health', help: 'A part: 1 ok, 0.5 late, 0 down, -1 unknown', labelNames: ['part'], registers: [registry] });
  const backlog = new Gauge({ name: 'obmen_webhooks_backlog', help: 'Provider events received and not yet processed', registers: [registry] });
  return {
    async text(): Promise<string> {
      const figures = await read();
      amount.reset();
      count.reset();
      for (const volume of figures.volumes) {
        amount.set({ kind: volume.kind, currency: volume.currency }, Number(volume.amount));
        count.set({ kind: volume.kind, currency: volume.currency }, volume.count);
      }
      for (const part of figures.health) {
        health.set({ part: part.part }, STATE_VALUE[part.state]);
        if (part.part === 'webhooks') backlog.set(part.value ?? 0);
      }
      return registry.metrics();
    },
  };
}
