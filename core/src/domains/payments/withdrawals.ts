import { randomUUID } from 'node:crypto';
import {
  HISTORY_CSV_MAX_ROWS,
  formatAmount,
  parseAmount,
  translate,
  type TI18nKey,
  type TLocale,
  type TPaymentProvider,
  type TPaymentWebhookEvent,
  type TWithdrawal,
  type TWithdrawalState,
  type TWithdrawCheckBody,
  type TWithdrawFormBody,
  type TWithdrawHistoryQuery,
  type TWithdrawLimits,
} from '@obmen/shared';
import type { Db, Queryable } from '../../db/index.ts';
import { AppError, notFoundOf } from '../../errors.ts';
import { withRetry } from '../../money-errors.ts';
import { currencies, operatorCurrency, parseOperatorAmount } from '../currencies/service.ts';
import { captureHold, placeHold, releaseHold } from '../ledger/holds.ts';
import { requestHash, runIdempotent } from '../idempotency/service.ts';
import { recordEvent } from '../events/service.ts';
import { dateBounds } from '../history/service.ts';
import { refuseWhileWithdrawalsBlocked, verifySecondFactor } from '../security/second-factor.ts';
import type { TDocumentCipher } from '../verification/cipher.ts';
import { assessPayment, type TPaymentAssessment } from './catalogue.ts';
import { paymentProvider } from './providers.ts';

/*
 * Withdrawals (issue 14 point 5). The state machine, each step one database transaction that
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

const OPEN_STATES: readonly TWithdrawalState[] = ['requested', 'approved', 'processing'];

type TRow = {
  id: string;
  public_id: string;
  user_id: string;
  system_id: string;
  provider: TPaymentProvider;
  currency: string;
  amount: string;
  fee: string;
  receive: string;
  /** The form without the card number, which is only in card_number_sealed. */
  details: Record<string, string>;
  card_number_sealed: Buffer | null;
  details_shown: string;
  state: TWithdrawalState;
  reason: string | null;
  reason_text: string | null;
  hold_id: string;
  provider_ref: string | null;
  created_at: Date;
  expected_at: Date | null;
  finished_at: Date | null;
};

const COLUMNS = `id::text AS id, public_id::text AS public_id, user_id::text AS user_id, system_id, provider, currency,
  amount::text AS amount, fee::text AS fee, receive::text AS receive, details, card_number_sealed, details_shown, state, reason, reason_text,
  hold_id::text AS hold_id, provider_ref, created_at, expected_at, finished_at`;

// ---- limits -------------------------------------------------------------------------------

type TLimitState = { level: number; currency: string; precision: number; per24h: bigint; per30d: bigint; left24h: bigint; left30d: bigint };

/** What a verification limit counts: money coming in (deposits and purchases) or going out. */
export type TLimitOperation = 'deposit' | 'withdrawal';

/**
 * The limits of the user's verification level for `operation` and what is left of them at
 * `now`. Withdrawals store their value in the limits' currency; deposits and purchases are
 * valued per currency at today's mid rate (rounded up). Ended ones (rejected, failed,
 * cancelled; declined, expired) do not count.
 */
export async function limitState(db: Queryable, userId: string, level: number, now: Date, operation: TLimitOperation = 'withdrawal'): Promise<TLimitState> {
  const [limit] = await db.query<{ currency: string; per_24h: string; per_30d: string }>(
    `SELECT currency, per_24h::text AS per_24h, per_30d::text AS per_30d FROM verification_limits WHERE level = $1 AND operation = $2`,
    [level, operation],
  );
  const currency = limit?.currency ?? 'USD';
  const used =
    operation === 'withdrawal'
      ? await db.query<{ currency: string; d: string; m: string }>(
          `SELECT $3::text AS currency, coalesce(sum(limit_value) FILTER (WHERE created_at > $2::timestamptz - interval '24 hours'), 0)::text AS d,
                  coalesce(sum(limit_value), 0)::text AS m
           FROM withdrawals WHERE user_id = $1 AND limit_currency = $3 AND created_at > $2::timestamptz - interval '30 days'
             AND state NOT IN ('rejected', 'failed', 'cancelled')`,
          [userId, now, currency],
        )
      : await db.query<{ currency: string; d: string; m: string }>(
          `SELECT currency, coalesce(sum(amount) FILTER (WHERE created_at > $2::timestamptz - interval '24 hours'), 0)::text AS d,
                  sum(amount)::text AS m
           FROM payments WHERE user_id = $1 AND direction IN ('deposit', 'purchase') AND created_at > $2::timestamptz - interval '30 days'
             AND state NOT IN ('declined', 'expired')
           GROUP BY currency`,
          [userId, now],
        );
  let usedDay = 0n;
  let usedMonth = 0n;
  for (const row of used) {
    usedDay += await limitValue(db, row.currency, BigInt(row.d), currency);
    usedMonth += await limitValue(db, row.currency, BigInt(row.m), currency);
  }
  const per24h = BigInt(limit?.per_24h ?? '0');
  const per30d = BigInt(limit?.per_30d ?? '0');
  const clamp = (value: bigint) => (value > 0n ? value : 0n);
  const precision = (await currencies(db)).get(currency)?.precision ?? 2;
  return { level, currency, precision, per24h, per30d, left24h: clamp(per24h - usedDay), left30d: clamp(per30d - usedMonth) };
}

export function showLimits(state: TLimitState): TWithdrawLimits {
  const shown = (value: bigint) => formatAmount(value, state.precision);
  return {
    level: state.level,
    currency: state.currency,
    per_24h: shown(state.per24h),
    per_30d: shown(state.per30d),
    left_24h: shown(state.left24h),
    left_30d: shown(state.left30d),
  };
}

/** `amount` of `currency` in the limits' currency at mid rates, rounded up (minor units). */
export async function limitValue(db: Queryable, currency: string, amount: bigint, limitCurrency: string): Promise<bigint> {
  if (currency === limitCurrency || amount === 0n) return amount;
  const [row] = await db.query<{ value: string | null }>(
    `SELECT ceil($3::numeric * coalesce(
        (SELECT r.rate FROM rates r WHERE r.src = $1 AND r.dst = $2),
        1 / nullif((SELECT r.rate FROM rates r WHERE r.src = $2 AND r.dst = $1), 0))
      * power(10::numeric, (SELECT precision FROM currencies WHERE code = $2) - (SELECT precision FROM currencies WHERE code = $1)))::text AS value`,
    [currency, limitCurrency, amount.toString()],
  );
  if (row?.value == null) throw new AppError('rates_unavailable');
  return BigInt(row.value);
}

/** The refusal of a request worth `value` (limits' currency) beyond what is left of `operation`'s limits. */
export function limitError(state: TLimitState, value: bigint, operation: TLimitOperation = 'withdrawal'): AppError | null {
  const code = operation === 'deposit' ? 'deposit_limit_exceeded' : 'withdrawal_limit_exceeded';
  const shown = (amount: bigint) => formatAmount(amount, state.precision).replace(/\.?0+$/, '') || '0';
  if (value > state.left24h) {
    return new AppError(code, {
      key: 'withdraw.limit_exceeded_24h',
      vars: { left: shown(state.left24h), limit: shown(state.per24h), currency: state.currency },
    });
  }
  if (value > state.left30d) {
    return new AppError(code, {
      key: 'withdraw.limit_exceeded_30d',
      vars: { left: shown(state.left30d), limit: shown(state.per30d), currency: state.currency },
    });
  }
  return null;
}

async function userLevelOf(db: Queryable, userId: string, lock = false): Promise<number> {
  const [row] = await db.query<{ level: number }>(`SELECT verification_level AS level FROM users WHERE id = $1${lock ? ' FOR UPDATE' : ''}`, [userId]);
  return Number(row?.level ?? 0);
}

function formOf(body: Omit<TWithdrawFormBody, 'code'>): Record<string, string> {
  const form: Record<string, string> = {};
  for (const name of ['card_number', 'card_holder', 'iban', 'account_holder', 'address', 'memo'] as const) {
    const value = body[name];
    if (value !== undefined) form[name] = value;
  }
  return form;
}

// ---- check --------------------------------------------------------------------------------

export type TWithdrawCheck = {
  ok: boolean;
  currency: string;
  fee: string | null;
  receive: string | null;
  limits: TWithdrawLimits;
  fields: Record<string, string>;
  message: string | null;
};

/**
 * POST /api/withdraw/check: what the form would give (fee, amount received), the limits left,
 * and every refusal as a localized field message, without moving anything. Always 200.
 */
export async function checkWithdrawal(db: Queryable, userId: string, body: TWithdrawCheckBody, locale: TLocale, now: Date): Promise<TWithdrawCheck> {
  const level = await userLevelOf(db, userId);
  const limits = await limitState(db, userId, level, now);
  const answer: TWithdrawCheck = { ok: false, currency: body.currency, fee: null, receive: null, limits: showLimits(limits), fields: {}, message: null };
  const fail = (err: unknown) => {
    Object.assign(answer, describeRefusal(locale, err));
    return answer;
  };
  let assessed: TPaymentAssessment;
  try {
    assessed = await assessPayment(db, {
      direction: 'withdraw',
      ps: body.ps,
      currency: body.currency,
      amount: body.amount,
      form: formOf(body),
      userLevel: level,
    });
  } catch (err) {
    return fail(err);
  }
  const precision = assessed.entry.currency.precision;
  answer.fee = formatAmount(assessed.fee, precision);
  answer.receive = formatAmount(assessed.receive, precision);
  try {
    const refusal = limitError(limits, await limitValue(db, assessed.entry.currency.code, assessed.amount, limits.currency));
    if (refusal) throw refusal;
    const [balance] = await db.query<{ balance: string }>(
      'SELECT coalesce((SELECT balance FROM ledger_accounts WHERE user_id = $1 AND currency = $2), 0)::text AS balance',
      [userId, assessed.entry.currency.code],
    );
    if (BigInt(balance!.balance) < assessed.amount) {
      throw new AppError('insufficient_funds', {
        vars: {
          currency: assessed.entry.currency.code,
          balance: formatAmount(balance!.balance, precision).replace(/\.?0+$/, '') || '0',
          needed: formatAmount(assessed.amount, precision).replace(/\.?0+$/, '') || '0',
        },
      });
    }
  } catch (err) {
    return fail(err);
  }
  answer.ok = true;
  return answer;
}

/**
 * A refusal as a check answers it (always 200): the localized message, and each field it names
 * with a message (`_` for the whole form). Anything but an AppError is rethrown.
 */
export function describeRefusal(locale: TLocale, err: unknown): { message: string; fields: Record<string, string> } {
  if (!(err instanceof AppError)) throw err;
  const message = translate(locale, err.messageKey, err.vars);
  const fields: Record<string, string> = {};
  for (const [field, key] of Object.entries(err.fields ?? { _: err.messageKey })) {
    // A refusal marks its field with the whole message and its values ("The minimum is 100
    // RUB"); a validation names each field's own message.
    fields[field] = err.code === 'validation' ? localizeKey(locale, key, err.vars) : message;
  }
  return { message, fields };
}

function localizeKey(locale: TLocale, key: string, vars: Record<string, string | number>): string {
  return key.includes('.') ? translate(locale, key as TI18nKey, vars) : key;
}

// ---- request ------------------------------------------------------------------------------

function mask(form: Record<string, string>): string {
  const parts: string[] = [];
  if (form.card_number) parts.push(`•••• ${form.card_number.slice(-4)}`);
  if (form.iban) parts.push(`${form.iban.slice(0, 4)} •••• ${form.iban.slice(-4)}`);
  if (form.address) parts.push(form.address.length > 16 ? `${form.address.slice(0, 8)}…${form.address.slice(-6)}` : form.address);
  if (form.memo) parts.push(`memo ${form.memo}`);
  return parts.join(', ');
}

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
  const { code, ...form } = body;
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
  await verifySecondFactor(db, userId, code, deps.now().getTime());

  const now = deps.now();
  const { result, replayed } = await runIdempotent(db, { userId, key, scope, payload }, async (tx) => {
    // The user's row serialises their requests, so two at once cannot both fit one limit.
    const level = await userLevelOf(tx, userId, true);
    const assessed = await assessPayment(tx, {
      direction: 'withdraw',
      ps: systemId,
      currency: body.currency,
      amount: body.amount,
      form: formOf(form),
      userLevel: level,
    });
    const limits = await limitState(tx, userId, level, now);
    const value = await limitValue(tx, assessed.entry.currency.code, assessed.amount, limits.currency);
    const refusal = limitError(limits, value);
    if (refusal) throw refusal;

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
        limits.currency,
        value.toString(),
        JSON.stringify(details),
        mask(assessed.form as Record<string, string>),
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

// ---- transitions --------------------------------------------------------------------------

async function lockWithdrawal(tx: Queryable, where: { publicId: string; userId?: string } | { id: string }): Promise<TRow | undefined> {
  if ('id' in where) {
    const [row] = await tx.query<TRow>(`SELECT ${COLUMNS} FROM withdrawals WHERE id = $1 FOR UPDATE`, [where.id]);
    return row;
  }
  if (!/^[0-9a-f-]{36}$/i.test(where.publicId)) return undefined;
  const [row] = await tx.query<TRow>(`SELECT ${COLUMNS} FROM withdrawals WHERE public_id = $1 AND ($2::bigint IS NULL OR user_id = $2) FOR UPDATE`, [
    where.publicId,
    where.userId ?? null,
  ]);
  return row;
}

function stateError(row: TRow): AppError {
  return new AppError('withdrawal_state', { vars: { state: row.state } });
}

/** Ends a request without paying it: the state and the hold's release in one transaction. */
async function endUnpaid(
  tx: Queryable,
  row: TRow,
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

/** Every operator decision is kept in the append-only operator_audit, in the decision's transaction. */
async function audit(tx: Queryable, actor: string, action: string, subject: string, details: Record<string, string>): Promise<void> {
  await tx.query('INSERT INTO operator_audit (operator, action, subject, details) VALUES ($1, $2, $3, $4::jsonb)', [
    actor,
    action,
    subject,
    JSON.stringify(details),
  ]);
}

/** An operator approves a request waiting for review; the payout is then handed to its provider. */
export async function approveWithdrawal(deps: TPayoutDeps, publicId: string, actor: string, now: Date): Promise<{ id: string; state: TWithdrawalState }> {
  const { db } = deps;
  const id = await withRetry(() =>
    db.transaction(async (tx) => {
      const row = await lockWithdrawal(tx, { publicId });
      if (!row) throw notFoundOf('withdrawal');
      if (row.state !== 'requested') throw stateError(row);
      const expected = new Date(now.getTime() + paymentProvider(row.provider).payoutEtaMs);
      await tx.query(`UPDATE withdrawals SET state = 'approved', approved_at = $2, updated_at = $2, expected_at = $3, reason_text = NULL WHERE id = $1`, [
        row.id,
        now,
        expected,
      ]);
      await audit(tx, actor, 'withdraw:approve', publicId, {});
      await recordEvent(tx, row.user_id, 'withdrawal', { id: row.public_id, state: 'approved' });
      return row.id;
    }),
  );
  return { id: publicId, state: await dispatchWithdrawal(deps, id, now) };
}

/** An operator rejects a request (requested or approved, not yet with the provider), with a reason. */
export async function rejectWithdrawal(db: Db, publicId: string, reason: string, actor: string, now: Date): Promise<{ id: string; state: TWithdrawalState }> {
  const text = reason.trim();
  if (!text) throw new AppError('validation', { fields: { reason: 'validation.required' } });
  await withRetry(() =>
    db.transaction(async (tx) => {
      const row = await lockWithdrawal(tx, { publicId });
      if (!row) throw notFoundOf('withdrawal');
      if (row.state !== 'requested' && row.state !== 'approved') throw stateError(row);
      await endUnpaid(tx, row, 'rejected', 'withdraw.reason_rejected', text.slice(0, 500), actor, now);
      await audit(tx, actor, 'withdraw:reject', publicId, { reason: text.slice(0, 500) });
    }),
  );
  return { id: publicId, state: 'rejected' };
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

/**
 * Seals the card numbers that withdrawals written before card_number_sealed kept in `details`
 * (migration 091), and removes them from there. Run at every start, after the migrations: it
 * finds nothing once done, and two cores starting together seal each row once (the row's
 * number is taken only while still there). Returns how many rows it sealed.
 */
export async function sealPayoutCardNumbers(db: Db, cipher: TDocumentCipher): Promise<number> {
  let sealed = 0;
  for (;;) {
    const rows = await db.query<{ id: string; card_number: string }>(
      `SELECT id::text AS id, details ->> 'card_number' AS card_number FROM withdrawals WHERE jsonb_typeof(details -> 'card_number') = 'string' ORDER BY id LIMIT 500`,
    );
    for (const row of rows) {
      const updated = await db.query(
        `UPDATE withdrawals SET card_number_sealed = $2, details = details - 'card_number' WHERE id = $1 AND details ->> 'card_number' = $3 RETURNING 1`,
        [row.id, await cipher.encrypt(row.card_number), row.card_number],
      );
      sealed += updated.length;
    }
    if (rows.length < 500) return sealed;
  }
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
  return settle('paid');
}

// ---- reading ------------------------------------------------------------------------------

function reasonOf(row: Pick<TRow, 'reason' | 'reason_text'>, locale: TLocale): string | null {
  if (!row.reason) return null;
  const text = translate(locale, row.reason as TI18nKey);
  return row.reason_text ? `${text}: ${row.reason_text}` : text;
}

export function formatWithdrawal(row: TRow, precision: number, locale: TLocale): TWithdrawal {
  return {
    id: row.public_id,
    ps: row.system_id,
    provider: row.provider,
    currency: row.currency,
    amount: formatAmount(row.amount, precision),
    fee: formatAmount(row.fee, precision),
    receive: formatAmount(row.receive, precision),
    details: row.details_shown,
    state: row.state,
    reason: reasonOf(row, locale),
    created_at: new Date(row.created_at).toISOString(),
    expected_at: row.expected_at ? new Date(row.expected_at).toISOString() : null,
    finished_at: row.finished_at ? new Date(row.finished_at).toISOString() : null,
    cancellable: row.state === 'requested',
  };
}

/** One of the user's withdrawals; another user's answers exactly like a missing one. */
export async function withdrawalStatus(db: Queryable, userId: string, publicId: string, locale: TLocale): Promise<TWithdrawal> {
  if (!/^[0-9a-f-]{36}$/i.test(publicId)) throw notFoundOf('withdrawal');
  const [row] = await db.query<TRow>(`SELECT ${COLUMNS} FROM withdrawals WHERE public_id = $1 AND user_id = $2`, [publicId, userId]);
  if (!row) throw notFoundOf('withdrawal');
  return formatWithdrawal(row, (await currencies(db)).get(row.currency)?.precision ?? 0, locale);
}

/** The user's requests still under way, newest first (the /withdraw page). */
export async function openWithdrawals(db: Queryable, userId: string, locale: TLocale): Promise<TWithdrawal[]> {
  const rows = await db.query<TRow>(`SELECT ${COLUMNS} FROM withdrawals WHERE user_id = $1 AND state = ANY ($2::text[]) ORDER BY id DESC LIMIT 20`, [
    userId,
    OPEN_STATES,
  ]);
  const byCode = await currencies(db);
  return rows.map((row) => formatWithdrawal(row, byCode.get(row.currency)?.precision ?? 0, locale));
}

/** The withdraw page's view of the caller: their limits now. */
export async function withdrawLimits(db: Queryable, userId: string, now: Date): Promise<TWithdrawLimits> {
  return showLimits(await limitState(db, userId, await userLevelOf(db, userId), now));
}

/** Operators: requests in a state (default: those waiting for a decision), oldest first. */
export async function listWithdrawals(db: Queryable, filter: { state?: string; limit: number }) {
  return db.query<{ id: string; account_id: number; system_id: string; currency: string; amount: string; state: string; created_at: Date }>(
    `SELECT w.public_id::text AS id, u.account_id, w.system_id, w.currency, w.amount::text AS amount, w.state, w.created_at
     FROM withdrawals w JOIN users u ON u.id = w.user_id WHERE w.state = $1 ORDER BY w.id LIMIT $2`,
    [filter.state ?? 'requested', filter.limit],
  );
}

/** GET /api/withdraw/history: the user's withdrawals, newest first, filtered and paged (or CSV rows). */
export async function withdrawHistory(
  db: Queryable,
  userId: string,
  query: TWithdrawHistoryQuery,
  locale: TLocale,
): Promise<{ items: TWithdrawal[]; page: number; per_page: number; total: number; pages: number }> {
  const { from, to } = dateBounds(query);
  const where = `user_id = $1 AND ($2::timestamptz IS NULL OR created_at >= $2) AND ($3::timestamptz IS NULL OR created_at < $3)
    AND ($4::text IS NULL OR currency = $4) AND ($5::text IS NULL OR state = $5)`;
  const params = [userId, from, to, query.currency ?? null, query.status ?? null];
  const csv = query.format === 'csv';
  const limit = csv ? HISTORY_CSV_MAX_ROWS : query.per_page;
  const offset = csv ? 0 : (query.page - 1) * query.per_page;
  const [count] = await db.query<{ total: number }>(`SELECT count(*)::int AS total FROM withdrawals WHERE ${where}`, params);
  const rows = await db.query<TRow>(
    `SELECT ${COLUMNS} FROM withdrawals WHERE ${where} ORDER BY created_at DESC, id DESC LIMIT ${limit} OFFSET ${offset}`,
    params,
  );
  const byCode = await currencies(db);
  const total = count!.total;
  return {
    items: rows.map((row) => formatWithdrawal(row, byCode.get(row.currency)?.precision ?? 0, locale)),
    page: query.page,
    per_page: query.per_page,
    total,
    pages: Math.max(1, Math.ceil(total / query.per_page)),
  };
}

export const WITHDRAW_CSV_COLUMNS: Array<keyof TWithdrawal & string> = [
  'id',
  'created_at',
  'ps',
  'currency',
  'amount',
  'fee',
  'receive',
  'details',
  'state',
  'reason',
  'finished_at',
];

/** Operators: requests of `currency` up to `amount` (major units) are approved without review. */
export async function setAutoApproval(db: Queryable, code: string, amount: string): Promise<{ currency: string; max_amount: string }> {
  const currency = await operatorCurrency(db, code);
  const value = BigInt(parseOperatorAmount('amount', amount, currency));
  await db.query(
    `INSERT INTO withdraw_auto_approval (currency, max_amount) VALUES ($1, $2)
     ON CONFLICT (currency) DO UPDATE SET max_amount = EXCLUDED.max_amount`,
    [currency.code, value.toString()],
  );
  return { currency: currency.code, max_amount: formatAmount(value, currency.precision) };
}

/** The auto-approval amounts a fresh database starts with (major units), on an empty table only. */
const SEED_AUTO_APPROVAL: Record<string, string> = {
  RUB: '10000',
  USD: '100',
  EUR: '100',
  KZT: '50000',
  UAH: '4000',
  BTC: '0.001',
  ETH: '0.03',
  USDT: '100',
  USDC: '100',
  TON: '20',
  LTC: '1',
  TRX: '500',
};

export async function seedWithdrawAutoApproval(tx: Queryable): Promise<boolean> {
  const [existing] = await tx.query('SELECT 1 FROM withdraw_auto_approval LIMIT 1');
  if (existing) return false;
  await tx.query(
    `INSERT INTO withdraw_auto_approval (currency, max_amount)
     SELECT c.code, t.amount::numeric * power(10::numeric, c.precision) FROM unnest($1::text[], $2::text[]) AS t (code, amount) JOIN currencies c ON c.code = t.code`,
    [Object.keys(SEED_AUTO_APPROVAL), Object.values(SEED_AUTO_APPROVAL)],
  );
  return true;
}
