import { formatAmount, type TClearingDay, type TOpsSuspenseAdjustBody, type TSuspenseItem } from '@obmen/shared';
import type { Db, Queryable } from '../../db/index.ts';
import { AppError, notFoundOf } from '../../errors.ts';
import { writeAudit } from '../audit/service.ts';
import { currencies, precisionLookup } from '../currencies/service.ts';
import { registeredPaymentProviders } from '../payments/providers.ts';
import { reconcile } from '../payments/reconcile.ts';
import type { TOpsActor } from './customers.ts';
import { lapseOpsRequests, proposeRequest } from './requests.ts';
import { operatorActor } from './service.ts';

/*
 * Reconciliation shown (/ops/reconciliation) and on the command line (`payments:reconcile`): the
 * payments domain's report, each difference kept once in the suspense list (its key: provider,
 * kind, currency and the provider's record or our transaction's reference), where an operator
 * explains it or proposes the adjustment that settles it. The adjustment is the four-eyes
 * `ledger.adjust` request itself: the item is resolved exactly when a second operator approves
 * it, and open again when it is declined or lapses.
 */

export type TReconciliationPeriod = { from: string; to: string; provider?: string };

const DAY_MS = 86_400_000;

type TRow = Omit<TSuspenseItem, 'request'> & { request_id: string | null; request_state: string | null };

const SELECT = `SELECT s.id::text, s.kind, s.provider, s.currency, s.reference, s.provider_amount::text, s.ledger_amount::text,
    iso_time(s.found_at) AS found_at,
    CASE WHEN s.explanation IS NOT NULL OR r.state = 'approved' THEN 'resolved' WHEN r.state = 'pending' THEN 'proposed' ELSE 'open' END AS state,
    s.explanation, r.id::text AS request_id, r.state AS request_state,
    coalesce(o.email, d.email) AS resolved_by,
    iso_time(coalesce(s.resolved_at, CASE WHEN r.state = 'approved' THEN r.decided_at END)) AS resolved_at
  FROM reconciliation_suspense s
  LEFT JOIN ops_requests r ON r.id = s.request_id
  LEFT JOIN operators o ON o.id = s.resolved_by
  LEFT JOIN operators d ON d.id = r.decided_by AND r.state = 'approved'`;

const UNRESOLVED = `s.explanation IS NULL AND r.state IS DISTINCT FROM 'approved'`;

/** The `suspense` queue's waiting items: found, neither explained nor settled by an approved adjustment. */
export const SUSPENSE_WAITING = `SELECT s.found_at AS since FROM reconciliation_suspense s LEFT JOIN ops_requests r ON r.id = s.request_id WHERE ${UNRESOLVED}`;

async function majorOf(db: Queryable): Promise<(minor: string | null, currency: string) => string | null> {
  const precision = precisionLookup(await currencies(db));
  return (minor, currency) => (minor === null ? null : formatAmount(BigInt(minor), precision(currency) ?? 0));
}

async function shown(db: Queryable, rows: TRow[]): Promise<TSuspenseItem[]> {
  const major = await majorOf(db);
  return rows.map(({ request_id, request_state, ...row }) => ({
    ...row,
    provider_amount: major(row.provider_amount, row.currency),
    ledger_amount: major(row.ledger_amount, row.currency),
    request: request_id ? { id: request_id, state: request_state ?? '' } : null,
  }));
}

/** The providers this process runs with. */
export const reconciledProviders = (): string[] => [...registeredPaymentProviders()].map((provider) => provider.id).sort();

/**
 * A period's reconciliation (UTC days, `to` inclusive): the report, its differences recorded in
 * the suspense list (once: a second run finds the same rows), the daily summary per clearing
 * account, and the suspense list itself.
 */
export async function reconciliationReport(db: Db, period: TReconciliationPeriod, now: Date, actor?: TOpsActor) {
  const from = new Date(`${period.from}T00:00:00Z`);
  const to = new Date(new Date(`${period.to}T00:00:00Z`).getTime() + DAY_MS);
  const report = await reconcile(db, from, to, period.provider);
  await lapseOpsRequests(db, now);
  const keys: string[] = [];
  for (const difference of report.differences) {
    // A clearing mismatch has no record of its own: its amount names it, so a new one is a new item.
    const reference =
      difference.kind === 'clearing_mismatch'
        ? `clearing:${BigInt(difference.ledger_amount ?? '0') - BigInt(difference.provider_amount ?? '0')}`
        : difference.reference;
    const [row] = await db.query<{ id: string }>(
      `INSERT INTO reconciliation_suspense (kind, provider, currency, reference, provider_amount, ledger_amount, found_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7)
       ON CONFLICT (provider, kind, currency, reference) DO UPDATE SET kind = EXCLUDED.kind
       RETURNING id::text`,
      [difference.kind, difference.provider, difference.currency, reference, difference.provider_amount, difference.ledger_amount, now],
    );
    keys.push(row!.id);
  }
  const about = period.provider === undefined ? '' : ' AND s.provider = $1';
  const params = period.provider === undefined ? [] : [period.provider];
  const [found, open, resolved] = await Promise.all([
    keys.length ? db.query<TRow>(`${SELECT} WHERE s.id = ANY($1::bigint[]) ORDER BY s.id`, [keys]) : Promise.resolve([]),
    db.query<TRow>(`${SELECT} WHERE ${UNRESOLVED}${about} ORDER BY s.found_at, s.id`, params),
    db.query<TRow>(`${SELECT} WHERE NOT (${UNRESOLVED})${about} ORDER BY s.id DESC LIMIT 50`, params),
  ]);
  if (actor) {
    await writeAudit(db, {
      actor: operatorActor(actor.operator),
      action: 'reconciliation.run',
      outcome: 'viewed',
      requestId: actor.requestId,
      ip: actor.ip,
      details: { from: period.from, to: period.to, provider: period.provider ?? null, differences: keys.length },
    });
  }
  const major = await majorOf(db);
  const daily: TClearingDay[] = report.daily.map((day) => ({
    ...day,
    increase: major(day.increase, day.currency)!,
    decrease: major(day.decrease, day.currency)!,
    net: major(day.net, day.currency)!,
  }));
  return {
    from: period.from,
    to: period.to,
    provider: period.provider ?? null,
    providers: reconciledProviders(),
    ok: report.ok,
    differences: await shown(db, found),
    daily,
    suspense: await shown(db, [...open, ...resolved]),
  };
}

export type TReconciliationReport = Awaited<ReturnType<typeof reconciliationReport>>;

const CSV_COLUMNS = ['id', 'kind', 'provider', 'currency', 'reference', 'provider_amount', 'ledger_amount', 'found_at', 'state'] as const;

const csvCell = (value: string | null) => {
  const text = value ?? '';
  // A cell a spreadsheet would run as a formula is quoted with a leading apostrophe.
  const safe = /^[=+\-@\t\r]/.test(text) && !/^-\d/.test(text) ? `'${text}` : text;
  return /[",\r\n]/.test(safe) ? `"${safe.replace(/"/g, '""')}"` : safe;
};

/** The period's differences as CSV, one row per difference, in the order found. */
export function reconciliationCsv(report: TReconciliationReport): string {
  const lines = [CSV_COLUMNS.join(','), ...report.differences.map((item) => CSV_COLUMNS.map((column) => csvCell(item[column])).join(','))];
  return `${lines.join('\r\n')}\r\n`;
}

async function itemById(db: Queryable, id: string, lock = false): Promise<TSuspenseItem> {
  const [row] = await db.query<TRow>(`${SELECT} WHERE s.id = $1${lock ? ' FOR UPDATE OF s' : ''}`, [id]);
  if (!row) throw notFoundOf('suspense');
  return (await shown(db, [row]))[0]!;
}

const suspenseSubject = (id: string) => `suspense:${id}`;

/** An operator's explanation: the item is resolved, in words, on the audit trail. */
export async function explainSuspense(db: Db, id: string, text: string, actor: TOpsActor): Promise<TSuspenseItem> {
  return db.transaction(async (tx) => {
    await lapseOpsRequests(tx, actor.now);
    const before = await itemById(tx, id, true);
    if (before.state !== 'open') throw new AppError('suspense_resolved');
    await tx.query('UPDATE reconciliation_suspense SET explanation = $2, resolved_by = $3, resolved_at = $4 WHERE id = $1', [
      id,
      text,
      actor.operator.id,
      actor.now,
    ]);
    await writeAudit(tx, {
      actor: operatorActor(actor.operator),
      action: 'reconciliation.explain',
      subject: suspenseSubject(id),
      reasonCode: 'explained',
      reasonText: text,
      requestId: actor.requestId,
      ip: actor.ip,
      details: { kind: before.kind, provider: before.provider, currency: before.currency, reference: before.reference },
    });
    return itemById(tx, id);
  });
}

/**
 * The adjustment that settles an item: a `ledger.adjust` proposal (the four-eyes request every
 * operator's money movement is), linked to the item. Nothing moves until a second operator approves it.
 */
export async function proposeSuspenseAdjustment(db: Db, id: string, params: TOpsSuspenseAdjustBody, actor: TOpsActor): Promise<TSuspenseItem> {
  await lapseOpsRequests(db, actor.now);
  const before = await itemById(db, id);
  if (before.state !== 'open') throw new AppError('suspense_resolved');
  const request = await proposeRequest(db, { action: 'ledger.adjust', params, reason: 'other', text: `reconciliation ${suspenseSubject(id)}` }, actor);
  return db.transaction(async (tx) => {
    // Linked only while still open: a colleague's explanation meanwhile leaves the proposal to be declined.
    const [linked] = await tx.query(
      `UPDATE reconciliation_suspense s SET request_id = $2 WHERE s.id = $1 AND s.explanation IS NULL
         AND NOT EXISTS (SELECT 1 FROM ops_requests r WHERE r.id = s.request_id AND r.state IN ('pending', 'approved')) RETURNING s.id`,
      [id, request.id],
    );
    if (!linked) throw new AppError('suspense_resolved');
    await writeAudit(tx, {
      actor: operatorActor(actor.operator),
      action: 'reconciliation.propose_adjustment',
      subject: suspenseSubject(id),
      requestId: actor.requestId,
      ip: actor.ip,
      details: { request: request.id, kind: before.kind, provider: before.provider, reference: before.reference },
    });
    return itemById(tx, id);
  });
}
