import {
  formatAmount,
  parseAmount,
  type TDepositCreateBody,
  type TDepositPayment,
  type TDepositState,
  type TDepositSystems,
  type TPaymentProvider,
  type TPaymentWebhookEvent,
} from '@obmen/shared';
import type { Queryable } from '../../db/index.ts';
import { currencies } from '../currencies/service.ts';
import { assessPayment, groupByCurrency, listPaymentSystems } from './catalogue.ts';

/** How long a created deposit waits for its payment before it may expire. */
export const DEPOSIT_LIFETIME_MS = 30 * 60_000;

export type TDepositRow = {
  id: string;
  public_id: string;
  user_id: string;
  currency: string;
  amount: string;
  fee: string;
  state: string;
  expires_at: Date;
};
const DEPOSIT_COLUMNS = `id::text AS id, public_id::text AS public_id, user_id::text AS user_id, currency, amount::text AS amount, fee::text AS fee, state, expires_at`;

/** A new deposit in state `created`; amount and fee in minor units (the user is credited amount − fee). */
export async function createDeposit(
  db: Queryable,
  input: { userId: string; provider: TPaymentProvider; systemId: string; currency: string; amount: bigint; fee?: bigint; now: Date },
): Promise<TDepositRow> {
  const [row] = await db.query<TDepositRow>(
    `INSERT INTO payments (direction, provider, system_id, user_id, currency, amount, fee, expires_at, created_at, updated_at)
     VALUES ('deposit', $1, $2, $3, $4, $5, $6, $7, $8, $8)
     RETURNING ${DEPOSIT_COLUMNS}`,
    [
      input.provider,
      input.systemId,
      input.userId,
      input.currency,
      input.amount.toString(),
      (input.fee ?? 0n).toString(),
      new Date(input.now.getTime() + DEPOSIT_LIFETIME_MS),
      input.now,
    ],
  );
  return row!;
}

export type TEventResult = 'credited' | 'pending' | 'declined' | 'unknown_payment' | 'amount_mismatch' | 'currency_mismatch' | 'wrong_state';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * Applies one provider event to its deposit, inside the caller's transaction (the one that
 * recorded the event id). The payment row is locked first, then the ledger accounts (in
 * ledger_post's id order). Anything that does not match the payment exactly moves nothing.
 */
export async function applyDepositEvent(
  tx: Queryable,
  provider: TPaymentProvider,
  event: TPaymentWebhookEvent,
  now: Date,
): Promise<{ result: TEventResult; paymentId: string | null }> {
  if (!UUID.test(event.payment_id)) return { result: 'unknown_payment', paymentId: null };
  const [payment] = await tx.query<TDepositRow>(
    `SELECT ${DEPOSIT_COLUMNS}
     FROM payments WHERE public_id = $1 AND provider = $2 AND direction = 'deposit' FOR UPDATE`,
    [event.payment_id, provider],
  );
  if (!payment) return { result: 'unknown_payment', paymentId: null };
  const settle = (result: TEventResult) => ({ result, paymentId: payment.id });
  const open = payment.state === 'created' || payment.state === 'pending';

  if (event.type === 'payment.pending') {
    if (payment.state === 'pending') return settle('pending');
    if (!open) return settle('wrong_state');
    await tx.query(`UPDATE payments SET state = 'pending', updated_at = $2 WHERE id = $1`, [payment.id, now]);
    return settle('pending');
  }
  if (!open) return settle('wrong_state');
  if (event.type === 'payment.declined') {
    await tx.query(`UPDATE payments SET state = 'declined', reason = 'payments.declined_by_provider', updated_at = $2 WHERE id = $1`, [payment.id, now]);
    return settle('declined');
  }

  if (event.currency !== payment.currency) return settle('currency_mismatch');
  const precision = (await currencies(tx)).get(payment.currency)?.precision;
  let amount: bigint;
  try {
    amount = parseAmount(event.amount, precision ?? 0);
  } catch {
    return settle('amount_mismatch');
  }
  if (amount !== BigInt(payment.amount)) return settle('amount_mismatch');

  // Paid and credited in one step: a deposit has nothing to wait for once the provider has the
  // money. The provider owes us the whole amount; the user gets it less the system's fee.
  const fee = BigInt(payment.fee);
  const [posted] =
    fee === 0n
      ? await tx.query<{ tx: string }>(
          `SELECT ledger_post('deposit', ARRAY[ledger_user_account($1, $2), ledger_system_account('clearing', $2, $3)],
             ARRAY[$4::numeric, -$4::numeric], $5, $6)::text AS tx`,
          [payment.user_id, payment.currency, provider, payment.amount, `deposit ${payment.public_id}`, `provider:${provider}`],
        )
      : await tx.query<{ tx: string }>(
          `SELECT ledger_post('deposit',
             ARRAY[ledger_user_account($1, $2), ledger_house_account('fees', $2, $1), ledger_system_account('clearing', $2, $3)],
             ARRAY[$4::numeric - $7::numeric, $7::numeric, -$4::numeric], $5, $6)::text AS tx`,
          [payment.user_id, payment.currency, provider, payment.amount, `deposit ${payment.public_id}`, `provider:${provider}`, fee.toString()],
        );
  await tx.query(`UPDATE payments SET state = 'credited', ledger_transaction_id = $2, paid_at = $3, credited_at = $3, updated_at = $3 WHERE id = $1`, [
    payment.id,
    posted!.tx,
    now,
  ]);
  return settle('credited');
}

/** The verification level of a user (0 until identity is approved). */
export async function userLevel(db: Queryable, userId: string): Promise<number> {
  const [row] = await db.query<{ level: number }>('SELECT verification_level AS level FROM users WHERE id = $1', [userId]);
  return Number(row?.level ?? 0);
}

/** GET /api/deposit/ps: per enabled currency, the systems that take deposits in it, with their terms. */
export async function listDepositSystems(db: Queryable, userId: string): Promise<TDepositSystems> {
  const entries = await listPaymentSystems(db, { direction: 'deposit', userLevel: await userLevel(db, userId) });
  return { status: 'ok', currencies: await groupByCurrency(db, entries) };
}

/**
 * POST /api/deposit/integration_json: a new deposit in state `created`. No money moves until
 * the provider's signed `payment.paid` arrives, so a repeated form only leaves another unpaid
 * deposit that expires.
 */
export async function openDeposit(db: Queryable, userId: string, body: TDepositCreateBody, now: Date): Promise<{ status: 'ok'; payment: TDepositPayment }> {
  const assessed = await assessPayment(db, {
    direction: 'deposit',
    ps: body.ps,
    currency: body.currency,
    amount: body.amount,
    userLevel: await userLevel(db, userId),
  });
  const { system, currency } = assessed.entry;
  const row = await createDeposit(db, {
    userId,
    provider: system.provider,
    systemId: system.id,
    currency: currency.code,
    amount: assessed.amount,
    fee: assessed.fee,
    now,
  });
  return {
    status: 'ok',
    payment: {
      id: row.public_id,
      ps: system.id,
      currency: row.currency,
      amount: formatAmount(row.amount, currency.precision),
      fee: formatAmount(row.fee, currency.precision),
      receive: formatAmount(BigInt(row.amount) - BigInt(row.fee), currency.precision),
      state: row.state as TDepositState,
      expires_at: row.expires_at.toISOString(),
    },
  };
}

/**
 * Ends the deposits nobody started paying in time (`created` past expires_at). A `pending`
 * one is left for the provider's final word: its payer may be paying right now. The row lock
 * of UPDATE and the webhook's FOR UPDATE serialise the two: whichever comes second sees the
 * other's state (a paid event after expiry moves nothing and is kept in the inbox).
 */
export async function expireDeposits(db: Queryable, now: Date): Promise<number> {
  const rows = await db.query(
    `UPDATE payments SET state = 'expired', reason = 'payments.expired', updated_at = $1
     WHERE direction = 'deposit' AND state = 'created' AND expires_at <= $1 RETURNING id`,
    [now],
  );
  return rows.length;
}
