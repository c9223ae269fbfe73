import { formatAmount, type TI18nKey, type TOpsPayoutTrouble, type TOpsRequest, type TOpsWithdrawalItem, type TWithdrawalRejectReason } from '@obmen/shared';
import type { Db, Queryable } from '../../db/index.ts';
import { AppError, notFoundOf } from '../../errors.ts';
import { withRetry } from '../../money-errors.ts';
import { currencies } from '../currencies/service.ts';
import { limitState, type TLimitState, userLevel } from '../limits/service.ts';
import { approveIn, dispatchWithdrawal, failStuckPayout, rejectIn, retryPayout, type TPayoutDeps } from '../payments/withdrawal-states.ts';
import { isLarge, largeAmounts } from '../payments/withdrawals.ts';
import { claimItem, claimsOf, releaseClaim, type TClaim } from './claims.ts';
import type { TOpsActor } from './customers.ts';
import { pendingRequestsFor, proposeRequest, withdrawalSubject } from './requests.ts';
import { operatorActor, type TOperator } from './service.ts';

/*
 * The withdrawals desk: the payments domain's state machine (withdrawal-states.ts) with the
 * queue's claims, clock and four eyes around it. A decision takes the operator's claim in the
 * decision's own transaction (a colleague's live claim refuses it, 409 `ops_claimed`); a
 * withdrawal at or above its currency's four-eyes amount is not approved but proposed as a
 * `withdrawals.approve_large` request that a second operator approves on /ops/approvals.
 */

export const OPS_WITHDRAWALS_QUEUE = 'withdrawals';

const holder = (claim: TClaim | undefined, operator: TOperator) =>
  claim ? { operator: claim.operatorEmail, mine: claim.operatorId === operator.id, lapses_at: claim.lapsesAt.toISOString() } : null;

type TWaitingRow = {
  id: string;
  user_id: string;
  account_id: number;
  currency: string;
  amount: string;
  fee: string;
  system: string;
  destination: string;
  created_at: Date;
  account_created_at: Date;
  own: number;
  others: number;
  sum_24h: string;
};

/**
 * The requests waiting for an operator, oldest first, with what the decision weighs: the
 * customer's level and limits used, the account's age, earlier withdrawals to the same
 * destination (the same details as stored: address, IBAN, or card holder and last four), and
 * what they withdrew of the currency in the 24 hours before.
 */
async function waitingWithdrawals(db: Queryable, acting: TOpsActor, targetMs: number): Promise<TOpsWithdrawalItem[]> {
  const rows = await db.query<TWaitingRow>(
    `SELECT w.public_id::text AS id, w.user_id::text AS user_id, u.account_id, w.currency, w.amount::text AS amount, w.fee::text AS fee,
            w.system_id AS system, w.details_shown AS destination, w.created_at, u.created_at AS account_created_at,
            (SELECT count(*) FROM withdrawals p WHERE p.user_id = w.user_id AND p.id <> w.id AND p.details = w.details AND p.details_shown = w.details_shown)::int AS own,
            (SELECT count(*) FROM withdrawals p WHERE p.user_id <> w.user_id AND p.details = w.details AND p.details_shown = w.details_shown)::int AS others,
            (SELECT coalesce(sum(p.amount), 0) FROM withdrawals p WHERE p.user_id = w.user_id AND p.currency = w.currency AND p.id <> w.id
                AND p.created_at > w.created_at - interval '24 hours' AND p.created_at <= w.created_at
                AND p.state NOT IN ('rejected', 'cancelled'))::text AS sum_24h
       FROM withdrawals w JOIN users u ON u.id = w.user_id
      WHERE w.state = 'requested' ORDER BY w.created_at, w.id LIMIT 100`,
  );
  const ids = rows.map((row) => row.id);
  const claims = await claimsOf(db, OPS_WITHDRAWALS_QUEUE, ids, acting.now);
  const requests = await pendingRequestsFor(db, 'withdrawals.approve_large', ids.map(withdrawalSubject), acting.operator.id);
  const byCode = await currencies(db);
  const large = await largeAmounts(db);
  // A customer's level and limits once, however many of their requests wait.
  const limitsOf = new Map<string, Promise<TLimitState>>();
  const items: TOpsWithdrawalItem[] = [];
  for (const row of rows) {
    const precision = byCode.get(row.currency)?.precision ?? 0;
    if (!limitsOf.has(row.user_id))
      limitsOf.set(
        row.user_id,
        userLevel(db, row.user_id).then((level) => limitState(db, row.user_id, level, acting.now)),
      );
    const limits = await limitsOf.get(row.user_id)!;
    const level = limits.level;
    const money = (value: bigint) => formatAmount(value, limits.precision);
    const waiting = Math.max(0, acting.now.getTime() - new Date(row.created_at).getTime());
    items.push({
      id: row.id,
      account_id: row.account_id,
      currency: row.currency,
      amount: formatAmount(row.amount, precision),
      fee: formatAmount(row.fee, precision),
      system: row.system,
      destination: row.destination,
      created_at: new Date(row.created_at).toISOString(),
      waiting_ms: waiting,
      overdue: waiting > targetMs,
      level,
      limits: {
        currency: limits.currency,
        used_24h: money(limits.per24h - limits.left24h),
        limit_24h: money(limits.per24h),
        used_30d: money(limits.per30d - limits.left30d),
        limit_30d: money(limits.per30d),
      },
      account_created_at: new Date(row.account_created_at).toISOString(),
      same_destination: { own: row.own, others: row.others },
      sum_24h: formatAmount(row.sum_24h, precision),
      large: isLarge(large, row.currency, BigInt(row.amount)),
      request: requests.get(withdrawalSubject(row.id)) ?? null,
      claim: holder(claims.get(row.id), acting.operator),
    });
  }
  return items;
}

/** Payouts in trouble: stuck past their expected time (approved or at the provider), and those that failed in the last 7 days. */
async function troubledPayouts(db: Queryable, now: Date): Promise<TOpsPayoutTrouble[]> {
  const rows = await db.query<{
    id: string;
    account_id: number;
    currency: string;
    amount: string;
    system: string;
    state: 'approved' | 'processing' | 'failed';
    since: Date;
    expected_at: Date | null;
  }>(
    `SELECT w.public_id::text AS id, u.account_id, w.currency, w.amount::text AS amount, w.system_id AS system, w.state, w.updated_at AS since, w.expected_at
       FROM withdrawals w JOIN users u ON u.id = w.user_id
      WHERE (w.state IN ('approved', 'processing') AND w.expected_at < $1) OR (w.state = 'failed' AND w.finished_at > $1::timestamptz - interval '7 days')
      ORDER BY w.updated_at, w.id LIMIT 200`,
    [now],
  );
  const byCode = await currencies(db);
  return rows.map((row) => ({
    ...row,
    amount: formatAmount(row.amount, byCode.get(row.currency)?.precision ?? 0),
    since: new Date(row.since).toISOString(),
    expected_at: row.expected_at ? new Date(row.expected_at).toISOString() : null,
    stuck: row.state !== 'failed',
  }));
}

/** The desk: the waiting requests and the payouts in trouble. */
export async function withdrawalsDesk(db: Queryable, acting: TOpsActor, targetMs: number) {
  const [waiting, troubled] = await Promise.all([waitingWithdrawals(db, acting, targetMs), troubledPayouts(db, acting.now)]);
  return { target_ms: targetMs, waiting, troubled };
}

/** Takes a waiting withdrawal for the operator (409 when a colleague holds it). */
export async function claimWithdrawal(db: Queryable, acting: TOpsActor, publicId: string) {
  await waitingRow(db, publicId);
  return holder(await claimItem(db, { queue: OPS_WITHDRAWALS_QUEUE, itemId: publicId, operator: acting.operator, now: acting.now }), acting.operator)!;
}

async function waitingRow(db: Queryable, publicId: string): Promise<{ currency: string; amount: string }> {
  const [row] = await db.query<{ currency: string; amount: string; state: string }>(
    'SELECT currency, amount::text AS amount, state FROM withdrawals WHERE public_id = $1',
    [publicId],
  );
  if (!row) throw notFoundOf('withdrawal');
  if (row.state !== 'requested') throw new AppError('withdrawal_state', { vars: { state: row.state } });
  return row;
}

/** A decision in one transaction with the operator's claim, which it then gives back. */
async function underClaim<T>(db: Db, acting: TOpsActor, publicId: string, decide: (tx: Queryable) => Promise<T>): Promise<T> {
  return withRetry(() =>
    db.transaction(async (tx) => {
      const key = { queue: OPS_WITHDRAWALS_QUEUE, itemId: publicId };
      await claimItem(tx, { ...key, operator: acting.operator, now: acting.now });
      const done = await decide(tx);
      await releaseClaim(tx, key);
      return done;
    }),
  );
}

/**
 * Approves a waiting withdrawal, which then goes to its provider; at or above its currency's
 * four-eyes amount it becomes a request instead, for a second operator (the claim stays).
 */
export async function approveOnDesk(deps: TPayoutDeps, acting: TOpsActor, publicId: string): Promise<{ state: string; request: TOpsRequest | null }> {
  const row = await waitingRow(deps.db, publicId);
  if (isLarge(await largeAmounts(deps.db), row.currency, BigInt(row.amount))) {
    await claimWithdrawal(deps.db, acting, publicId);
    const request = await proposeRequest(
      deps.db,
      { action: 'withdrawals.approve_large', params: { withdrawal_id: publicId }, reason: 'customer_request', text: '' },
      acting,
    );
    return { state: 'requested', request };
  }
  const id = await underClaim(deps.db, acting, publicId, (tx) => approveIn(tx, publicId, operatorActor(acting.operator), acting.now));
  return { state: await dispatchWithdrawal(deps, id, acting.now), request: null };
}

/** Rejects a waiting withdrawal with a catalogued reason the customer reads (and the operator's words, if any); the hold is released. */
export async function rejectOnDesk(db: Db, acting: TOpsActor, publicId: string, reason: TWithdrawalRejectReason, text: string) {
  await waitingRow(db, publicId);
  await underClaim(db, acting, publicId, (tx) =>
    rejectIn(tx, publicId, text, operatorActor(acting.operator), acting.now, `withdraw.reject.${reason}` as TI18nKey),
  );
  return { state: 'rejected', request: null };
}

/** A stuck payout handed to its provider again. */
export async function retryOnDesk(deps: TPayoutDeps, acting: TOpsActor, publicId: string) {
  const done = await retryPayout(deps, publicId, operatorActor(acting.operator), acting.now);
  return { state: done.state, request: null };
}

/** A stuck payout given up: failed, its hold released in the same transaction. */
export async function failOnDesk(db: Db, acting: TOpsActor, publicId: string) {
  const done = await failStuckPayout(db, publicId, operatorActor(acting.operator), acting.now);
  return { state: done.state, request: null };
}
