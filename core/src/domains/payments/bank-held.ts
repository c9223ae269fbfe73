import { parseAmount, paymentFee, type TPaymentProvider, type TPaymentWebhookEvent } from '@obmen/shared';
import type { Queryable } from '../../db/index.ts';
import { AppError, notFoundOf } from '../../errors.ts';
import { currencies } from '../currencies/service.ts';
import { creditDeposits, DEPOSIT_COLUMNS, type TDepositRow } from './deposits.ts';

/*
 * Bank payments held: a transfer the bank reports that credited nothing (its reference matched
 * no open deposit, the deposit expected another amount or currency, or had expired). The money
 * is at our bank all the same, so it is kept (table bank_payments_held) until an operator
 * matches it to the customer's deposit: the deposit is then credited with what arrived, through
 * the same deposit_credit as a webhook's, in the transaction that marks the payment matched.
 */

/**
 * Inside the inbox's transaction (the event id just claimed, so once per event): the transfer
 * is held. One in a currency we do not keep, or with an amount that does not read, cannot be
 * credited to anyone and stays only in the inbox.
 */
export async function holdBankPayment(
  tx: Queryable,
  input: { provider: TPaymentProvider; event: TPaymentWebhookEvent; why: string; now: Date },
): Promise<void> {
  const { event } = input;
  const currency = (await currencies(tx)).get(event.currency);
  if (!currency) return;
  let amount: bigint;
  try {
    amount = parseAmount(event.amount, currency.precision);
  } catch {
    return;
  }
  if (amount <= 0n) return;
  await tx.query(
    `INSERT INTO bank_payments_held (provider, event_id, transfer_id, reference, payer, currency, amount, why, received_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9) ON CONFLICT (provider, event_id) DO NOTHING`,
    [
      input.provider,
      event.id,
      event.payment_id,
      event.reference?.trim() || null,
      event.payer?.trim() || null,
      currency.code,
      amount.toString(),
      input.why,
      input.now,
    ],
  );
}

export type THeldPayment = {
  id: string;
  provider: TPaymentProvider;
  currency: string;
  amount: string;
  state: 'held' | 'matched';
  payment_id: string | null;
};

const HELD_COLUMNS = 'id::text AS id, provider, currency, amount::text AS amount, state, payment_id::text AS payment_id';

/** A held payment (404 like a missing payment). */
export async function heldPayment(db: Queryable, id: string, lock = false): Promise<THeldPayment> {
  const [row] = await db.query<THeldPayment>(`SELECT ${HELD_COLUMNS} FROM bank_payments_held WHERE id = $1${lock ? ' FOR UPDATE' : ''}`, [id]);
  if (!row) throw notFoundOf('payment');
  return row;
}

/** A deposit at the held payment's provider, named by its id or the reference its payer was to quote (404 when none). */
export async function depositFor(db: Queryable, provider: TPaymentProvider, deposit: string, lock = false): Promise<TDepositRow> {
  const byId = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(deposit);
  const [row] = await db.query<TDepositRow>(
    `SELECT ${DEPOSIT_COLUMNS} FROM payments WHERE direction = 'deposit' AND provider = $1 AND ${byId ? 'public_id = $2::uuid' : 'reference = upper($2)'}${
      lock ? ' FOR UPDATE' : ''
    }`,
    [provider, deposit.trim()],
  );
  if (!row) throw notFoundOf('payment');
  return row;
}

/** A deposit the payment can still be matched to: not credited, declined or matched yet (an expired one: its payer paid late). */
const MATCHABLE = new Set(['created', 'pending', 'expired']);

/** Whether a match would credit another amount than the deposit expected (then it takes a second operator). */
export function checkMatch(held: THeldPayment, deposit: TDepositRow): { otherAmount: boolean } {
  if (held.state === 'matched') throw new AppError('bank_payment_matched');
  if (held.currency !== deposit.currency) throw new AppError('bank_match_currency');
  if (!MATCHABLE.has(deposit.state)) throw new AppError('bank_match_deposit_state');
  return { otherAmount: BigInt(held.amount) !== BigInt(deposit.amount) };
}

/**
 * Matches a held payment to a deposit and credits the deposit with what arrived, in the caller's
 * transaction: the held row locked, then the deposit's (the webhook locks deposits and only
 * inserts held rows, so no cycle). Another amount is taken only when `otherAmount` allows it
 * (the four-eyes approval): the deposit's amount becomes what arrived, its fee recomputed on the
 * system's terms. A payment matched already to this deposit answers `replayed` and credits
 * nothing again; to another deposit it is refused.
 */
export async function matchHeldPayment(
  tx: Queryable,
  input: { heldId: string; deposit: string; otherAmount: boolean; by: string; now: Date },
): Promise<{ deposit: TDepositRow; amount: string; replayed: boolean }> {
  const held = await heldPayment(tx, input.heldId, true);
  const deposit = await depositFor(tx, held.provider, input.deposit, true);
  if (held.state === 'matched' && held.payment_id === deposit.id) return { deposit, amount: held.amount, replayed: true };
  const { otherAmount } = checkMatch(held, deposit);
  if (otherAmount && !input.otherAmount) throw new AppError('ops_four_eyes');
  if (otherAmount || deposit.state === 'expired') {
    const [terms] = await tx.query<{ fee_percent: string; fee_fixed: string }>(
      `SELECT fee_percent::text AS fee_percent, fee_fixed::text AS fee_fixed FROM payment_system_currencies
       WHERE direction = 'deposit' AND system_id = $1 AND currency = $2`,
      [deposit.system_id, deposit.currency],
    );
    const amount = BigInt(held.amount);
    const fee = otherAmount ? (terms ? paymentFee({ feePercent: terms.fee_percent, feeFixed: BigInt(terms.fee_fixed) }, amount) : 0n) : BigInt(deposit.fee);
    await tx.query(`UPDATE payments SET amount = $2, fee = $3, state = 'pending', reason = NULL, updated_at = $4 WHERE id = $1`, [
      deposit.id,
      amount.toString(),
      (fee < amount ? fee : 0n).toString(),
      input.now,
    ]);
  }
  await creditDeposits(tx, [deposit.id], input.now);
  await tx.query(`UPDATE bank_payments_held SET state = 'matched', payment_id = $2, matched_by = $3, matched_at = $4 WHERE id = $1`, [
    held.id,
    deposit.id,
    input.by,
    input.now,
  ]);
  return { deposit, amount: held.amount, replayed: false };
}
