import { randomUUID } from 'node:crypto';
import {
  parseAmount,
  type TI18nKey,
  type TLocale,
  type TPaymentProvider,
  type TPaymentWebhookEvent,
  type TWithdrawal,
  type TWithdrawalState,
  type TWithdrawFormBody,
} from '@obmen/shared';
import type { Db, Queryable } from '../../db/index.ts';
import { AppError, notFoundOf } from '../../errors.ts';
import { oweMoneyMail } from '../../mail/money.ts';
import { withRetry } from '../../money-errors.ts';
import { currencies } from '../currencies/service.ts';
import { recordEvent } from '../events/service.ts';
import { requestHash, runIdempotent } from '../idempotency/service.ts';
import { captureHold, placeHold, releaseHold } from '../ledger/holds.ts';
import { refuseOverLimits, userLevel } from '../limits/service.ts';
import { refuseWhileWithdrawalsBlocked, verifySecondFactor } from '../security/second-factor.ts';
import type { TDocumentCipher } from '../verification/cipher.ts';
import { assessPayment } from './catalogue.ts';
import { maskDestination, refuseUnusableDestination } from './destinations.ts';
import { paymentProvider } from './providers.ts';
import { formOf, WITHDRAWAL_COLUMNS, withdrawalStatus, type TWithdrawalRow } from './withdrawals.ts';
import { writeAudit } from '../audit/service.ts';

/*
 * The withdrawal state machine: every step of a request, each one database transaction that
 * locks the withdrawal row first, then its hold, then the ledger accounts (ascending id):
 *
 *   requested ──approve──► approved ──dispatch──► processing ──payout.paid──► paid     (hold captured)
 *       │                     │                        └──────payout.failed──► failed   (hold released)
 *       ├──reject─────────────┴──────────────────────────────────────────────► rejected (hold released)
 *       └──cancel (the user) ────────────────────────────────────────────────► cancelled (hold released)
 *
 * A request places its hold (available → held) in the transaction that creates it; one up to
 * the currency's auto-approval amount is approved in that same transaction. The payout is
 * handed to the provider after commit (dispatch), and the provider's signed webhook ends it.
 */

/** An operator decides within this time (what the user is told while a request waits). */
export const REVIEW_ETA_MS = 24 * 3_600_000;

export type TWithdrawDeps = { db: Db; now: () => Date; cipher: TDocumentCipher };
/** What handing a payout to its provider needs: the card number is unsealed for it. */
export type TPayoutDeps = Pick<TWithdrawDeps, 'db' | 'cipher'>;

/**
 * POST /api/withdraw/form/{id}: places the request and holds its amount, in one transaction
 * under the Idempotency-Key (the same key replays the first answer, before any code is asked
 * again). Refused while withdrawals are blocked after a security change, with a wrong or
 * missing second-factor code when 2FA is on, over the level's limits, over the balance.
 */
export async function requestWithdrawal(
  deps: TWithdrawDeps,
  userId: string,
  key: string,
  systemId: string,
  body: TWithdrawFormBody,
  locale: TLocale,
): Promise<{ withdrawal: TWithdrawal; replayed: boolean }> {
  const { db } = deps;
  const { code, passkey, ...form } = body;
  const scope = `POST /api/withdraw/form/${systemId}`;
  const payload = { ...form };
  // A retry of an answered request replays it: its code was spent by the first attempt.
  const [stored] = await db.query<{ response: { withdrawal_id: string } | null; request_hash: string }>(
    'SELECT response, request_hash FROM idempotency_keys WHERE user_id = $1 AND key = $2',
    [userId, key],
  );
  if (stored?.response && stored.request_hash === requestHash(scope, payload)) {
    return { withdrawal: await withdrawalStatus(db, userId, stored.response.withdrawal_id, locale), replayed: true };
  }
  await refuseWhileWithdrawalsBlocked(db, userId);
  await verifySecondFactor(db, userId, { code, passkey }, deps.now().getTime());

  const now = deps.now();
  const { result, replayed } = await runIdempotent(db, { userId, key, scope, payload }, async (tx) => {
    const level = await userLevel(tx, userId);
    const assessed = await assessPayment(tx, {
      direction: 'withdraw',
      ps: systemId,
      currency: body.currency,
      amount: body.amount,
      form: formOf(form),
      userLevel: level,
    });
    await refuseUnusableDestination(tx, deps.cipher, {
      userId,
      systemId: assessed.entry.system.id,
      currency: assessed.entry.currency.code,
      form: assessed.form as Record<string, string>,
      now,
      locale,
    });
    // The user's row (locked here) serialises their requests, so two at once cannot both fit one limit.
    const limit = await refuseOverLimits(tx, {
      userId,
      level,
      now,
      operation: 'withdrawal',
      currency: assessed.entry.currency.code,
      amount: assessed.amount,
    });

    const publicId = randomUUID();
    const hold = await placeHold(tx, { userId, currency: assessed.entry.currency.code, amount: assessed.amount, purpose: `withdrawal:${publicId}` });
    const [threshold] = await tx.query<{ max: string }>('SELECT max_amount::text AS max FROM withdraw_auto_approval WHERE currency = $1', [
      assessed.entry.currency.code,
    ]);
    const auto = threshold !== undefined && assessed.amount <= BigInt(threshold.max);
    const provider = assessed.entry.system.provider;
    const expected = new Date(now.getTime() + paymentProvider(provider).payoutEtaMs + (auto ? 0 : REVIEW_ETA_MS));
    const { card_number: cardNumber, ...details } = assessed.form as Record<string, string>;
    const cardSealed = cardNumber ? await deps.cipher.encrypt(cardNumber) : null;
    const [row] = await tx.query<{ id: string }>(
      `INSERT INTO withdrawals (public_id, user_id, system_id, provider, currency, amount, fee, receive, limit_currency, limit_value, details,
         details_shown, state, auto_approved, approved_at, hold_id, idempotency_key, created_at, updated_at, expected_at, card_number_sealed)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $18, $19, $20) RETURNING id::text AS id`,
      [
        publicId,
        userId,
        assessed.entry.system.id,
        provider,
        assessed.entry.currency.code,
        assessed.amount.toString(),
        assessed.fee.toString(),
        assessed.receive.toString(),
        limit.currency,
        limit.value.toString(),
        JSON.stringify(details),
        maskDestination(assessed.form as Record<string, string>),
        auto ? 'approved' : 'requested',
        auto,
        auto ? now : null,
        hold.id,
        key,
        now,
        expected,
        cardSealed,
      ],
    );
    await announce(tx, userId, publicId, auto ? 'approved' : 'requested');
    await oweMoneyMail(tx, userId, 'withdrawal_requested', {
      currency: assessed.entry.currency.code,
      amount: assessed.amount.toString(),
      fee: assessed.fee.toString(),
      id: publicId,
    });
    return { withdrawal_id: publicId, id: row!.id, auto };
  });
  if (!replayed && result.auto) await dispatchWithdrawal(deps, result.id, now).catch(() => undefined);
  return { withdrawal: await withdrawalStatus(db, userId, result.withdrawal_id, locale), replayed };
}

/** The wallets changed and the request moved: the live stores follow (realtime events). */
async function announce(tx: Queryable, userId: string, publicId: string, state: TWithdrawalState): Promise<void> {
  await recordEvent(tx, userId, 'wallets', null);
  await recordEvent(tx, userId, 'withdrawal', { id: publicId, state });
}

async function lockWithdrawal(tx: Queryable, where: { publicId: string; userId?: string } | { id: string }): Promise<TWithdrawalRow | undefined> {
  if ('id' in where) {
    const [row] = await tx.query<TWithdrawalRow>(`SELECT ${WITHDRAWAL_COLUMNS} FROM withdrawals WHERE id = $1 FOR UPDATE`, [where.id]);
    return row;
  }
  if (!/^[0-9a-f-]{36}$/i.test(where.publicId)) return undefined;
  const [row] = await tx.query<TWithdrawalRow>(
    `SELECT ${WITHDRAWAL_COLUMNS} FROM withdrawals WHERE public_id = $1 AND ($2::bigint IS NULL OR user_id = $2) FOR UPDATE`,
    [where.publicId, where.userId ?? null],
  );
  return row;
}

function stateError(row: TWithdrawalRow): AppError {
  return new AppError('withdrawal_state', { vars: { state: row.state } });
}

/** Ends a request without paying it: the state and the hold's release in one transaction. */
async function endUnpaid(
  tx: Queryable,
  row: TWithdrawalRow,
  state: 'rejected' | 'failed' | 'cancelled',
  reason: TI18nKey,
  reasonText: string | null,
  actor: string,
  now: Date,
): Promise<void> {
  await releaseHold(tx, row.hold_id, { memo: `withdrawal ${row.public_id} ${state}`, actor });
  await tx.query(`UPDATE withdrawals SET state = $2, reason = $3, reason_text = $4, finished_at = $5, updated_at = $5, expected_at = NULL WHERE id = $1`, [
    row.id,
    state,
    reason,
    reasonText,
    now,
  ]);
  await announce(tx, row.user_id, row.public_id, state);
  // The customer cancelled it themselves: nothing to tell them.
  if (state !== 'cancelled')
    await oweMoneyMail(tx, row.user_id, 'withdrawal_failed', { currency: row.currency, amount: row.amount, id: row.public_id, reason });
}

/** The user cancels their own request while it is still `requested`. */
export async function cancelWithdrawal(deps: TWithdrawDeps, userId: string, publicId: string, locale: TLocale): Promise<TWithdrawal> {
  const now = deps.now();
  await withRetry(() =>
    deps.db.transaction(async (tx) => {
      const row = await lockWithdrawal(tx, { publicId, userId });
      if (!row) throw notFoundOf('withdrawal');
      if (row.state === 'cancelled') return; // a repeated cancel answers the same
      if (row.state !== 'requested') throw stateError(row);
      await endUnpaid(tx, row, 'cancelled', 'withdraw.reason_cancelled', null, `user:${userId}`, now);
    }),
  );
  return withdrawalStatus(deps.db, userId, publicId, locale);
}

/** An operator approves a request waiting for review; the payout is then handed to its provider. */
export async function approveWithdrawal(deps: TPayoutDeps, publicId: string, actor: string, now: Date): Promise<{ id: string; state: TWithdrawalState }> {
  const id = await withRetry(() => deps.db.transaction((tx) => approveIn(tx, publicId, actor, now)));
  return { id: publicId, state: await dispatchWithdrawal(deps, id, now) };
}

/**
 * requested → approved in the caller's transaction (a four-eyes approval's); the payouts job or
 * approveWithdrawal hands it to the provider after the commit. Answers the row's id.
 */
export async function approveIn(tx: Queryable, publicId: string, actor: string, now: Date): Promise<string> {
  const row = await lockWithdrawal(tx, { publicId });
  if (!row) throw notFoundOf('withdrawal');
  if (row.state !== 'requested') throw stateError(row);
  const expected = new Date(now.getTime() + paymentProvider(row.provider).payoutEtaMs);
  await tx.query(`UPDATE withdrawals SET state = 'approved', approved_at = $2, updated_at = $2, expected_at = $3, reason_text = NULL WHERE id = $1`, [
    row.id,
    now,
    expected,
  ]);
  await writeAudit(tx, { actor, action: 'withdraw:approve', subject: publicId });
  await recordEvent(tx, row.user_id, 'withdrawal', { id: row.public_id, state: 'approved' });
  return row.id;
}

/**
 * An operator rejects a request (requested or approved, not yet with the provider): the reason
 * the customer reads (`key`, in their language) and the operator's words, at least one of them.
 */
export async function rejectWithdrawal(
  db: Db,
  publicId: string,
  reason: string,
  actor: string,
  now: Date,
  key: TI18nKey = 'withdraw.reason_rejected',
): Promise<{ id: string; state: TWithdrawalState }> {
  if (!reason.trim() && key === 'withdraw.reason_rejected') throw new AppError('validation', { fields: { reason: 'validation.required' } });
  await withRetry(() => db.transaction((tx) => rejectIn(tx, publicId, reason, actor, now, key)));
  return { id: publicId, state: 'rejected' };
}

/** rejectWithdrawal in the caller's transaction (the desk's, with the operator's claim). */
export async function rejectIn(tx: Queryable, publicId: string, reason: string, actor: string, now: Date, key: TI18nKey): Promise<void> {
  const text = reason.trim().slice(0, 500);
  const row = await lockWithdrawal(tx, { publicId });
  if (!row) throw notFoundOf('withdrawal');
  if (row.state !== 'requested' && row.state !== 'approved') throw stateError(row);
  await endUnpaid(tx, row, 'rejected', key, text || null, actor, now);
  await writeAudit(tx, { actor, action: 'withdraw:reject', subject: publicId, details: { reason: key, text } });
}

/**
 * A payout stuck at its provider (or approved and never handed over) is given up: failed, the
 * hold released, in one transaction. Whoever does it answers for it on the audit trail.
 */
export async function failStuckPayout(db: Db, publicId: string, actor: string, now: Date): Promise<{ id: string; state: TWithdrawalState }> {
  await withRetry(() =>
    db.transaction(async (tx) => {
      const row = await lockWithdrawal(tx, { publicId });
      if (!row) throw notFoundOf('withdrawal');
      if (row.state !== 'processing' && row.state !== 'approved') throw stateError(row);
      await endUnpaid(tx, row, 'failed', 'withdraw.reason_failed', null, actor, now);
      await writeAudit(tx, { actor, action: 'withdraw:fail', subject: publicId, details: { was: row.state } });
    }),
  );
  return { id: publicId, state: 'failed' };
}

/**
 * Hands a stuck payout to its provider again: an approved one for the first time, a processing
 * one once more under the same reference (the provider pays a reference once). Answers the state.
 */
export async function retryPayout(deps: TPayoutDeps, publicId: string, actor: string, now: Date): Promise<{ id: string; state: TWithdrawalState }> {
  const id = await withRetry(() =>
    deps.db.transaction(async (tx) => {
      const row = await lockWithdrawal(tx, { publicId });
      if (!row) throw notFoundOf('withdrawal');
      if (row.state !== 'processing' && row.state !== 'approved') throw stateError(row);
      // Back to approved: dispatch hands it over as the first time, with a new expected time.
      const expected = new Date(now.getTime() + paymentProvider(row.provider).payoutEtaMs);
      await tx.query(`UPDATE withdrawals SET state = 'approved', updated_at = $2, expected_at = $3 WHERE id = $1`, [row.id, now, expected]);
      await writeAudit(tx, { actor, action: 'withdraw:retry', subject: publicId, details: { was: row.state } });
      return row.id;
    }),
  );
  return { id: publicId, state: await dispatchWithdrawal(deps, id, now) };
}

/**
 * approved → processing: hands the payout to its provider (its adapter's sendPayout), the card
 * number unsealed for it, in the transaction of the step; handing it twice (a retry after a
 * crash) gives the same payout. Answers the state after the step.
 */
export async function dispatchWithdrawal({ db, cipher }: TPayoutDeps, id: string, now: Date): Promise<TWithdrawalState> {
  return withRetry(() =>
    db.transaction(async (tx) => {
      const row = await lockWithdrawal(tx, { id });
      if (!row || row.state !== 'approved') return row?.state ?? 'requested';
      const cardNumber = row.card_number_sealed ? await cipher.decrypt(row.card_number_sealed) : null;
      const providerRef = await paymentProvider(row.provider).sendPayout(
        tx,
        { reference: row.public_id, currency: row.currency, amount: BigInt(row.receive), destination: row.details_shown, cardNumber },
        now,
      );
      await tx.query(`UPDATE withdrawals SET state = 'processing', provider_ref = $2, processing_at = $3, updated_at = $3 WHERE id = $1`, [
        row.id,
        providerRef,
        now,
      ]);
      await recordEvent(tx, row.user_id, 'withdrawal', { id: row.public_id, state: 'processing' });
      return 'processing';
    }),
  );
}

/** Approved requests not yet with their provider (a crash between approval and dispatch). */
export async function dispatchApproved(deps: TPayoutDeps, now: Date): Promise<number> {
  const rows = await deps.db.query<{ id: string }>(`SELECT id::text AS id FROM withdrawals WHERE state = 'approved' ORDER BY id LIMIT 100`);
  for (const row of rows) await dispatchWithdrawal(deps, row.id, now);
  return rows.length;
}

export type TPayoutResult = 'paid' | 'failed' | 'unknown_payment' | 'amount_mismatch' | 'currency_mismatch' | 'wrong_state';

/**
 * A provider's `payout.paid` / `payout.failed` for a withdrawal in `processing`, inside the
 * webhook's transaction (the one that recorded the event id: exactly once). Paid captures the
 * hold (what was paid out to the provider's clearing account, the fee to the house's fee
 * account); failed releases it. Anything that does not match exactly moves nothing.
 */
export async function applyPayoutEvent(
  tx: Queryable,
  provider: TPaymentProvider,
  event: TPaymentWebhookEvent,
  now: Date,
): Promise<{ result: TPayoutResult; paymentId: string | null }> {
  const row = await lockWithdrawal(tx, { publicId: event.payment_id });
  if (!row || row.provider !== provider) return { result: 'unknown_payment', paymentId: null };
  const settle = (result: TPayoutResult) => ({ result, paymentId: null });
  if (row.state !== 'processing') return settle('wrong_state');
  if (event.currency !== row.currency) return settle('currency_mismatch');
  const precision = (await currencies(tx)).get(row.currency)?.precision ?? 0;
  let amount: bigint;
  try {
    amount = parseAmount(event.amount, precision);
  } catch {
    return settle('amount_mismatch');
  }
  if (amount !== BigInt(row.receive)) return settle('amount_mismatch');
  if (event.type === 'payout.failed') {
    await endUnpaid(tx, row, 'failed', 'withdraw.reason_failed', null, `provider:${provider}`, now);
    return settle('failed');
  }
  await captureHold(tx, row.hold_id, {
    kind: 'withdrawal',
    destinations: [
      { kind: 'clearing', name: provider, amount: BigInt(row.receive) },
      { kind: 'fees', amount: BigInt(row.fee) },
    ],
    memo: `withdrawal ${row.public_id}`,
    actor: `provider:${provider}`,
  });
  await tx.query(`UPDATE withdrawals SET state = 'paid', finished_at = $2, updated_at = $2, expected_at = NULL WHERE id = $1`, [row.id, now]);
  await announce(tx, row.user_id, row.public_id, 'paid');
  await oweMoneyMail(tx, row.user_id, 'withdrawal_sent', { currency: row.currency, amount: row.receive, id: row.public_id });
  return settle('paid');
}
