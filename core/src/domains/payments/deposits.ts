import { parseAmount, type TPaymentProvider, type TPaymentWebhookEvent } from '@obmen/shared';
import type { Queryable } from '../../db/index.ts';
import { currencies } from '../currencies/service.ts';

/** How long a created deposit waits for its payment before it may expire. */
export const DEPOSIT_LIFETIME_MS = 30 * 60_000;

export type TDepositRow = { id: string; public_id: string; user_id: string; currency: string; amount: string; state: string };

/** A new deposit in state `created`, amount in minor units. */
export async function createDeposit(
  db: Queryable,
  input: { userId: string; provider: TPaymentProvider; currency: string; amount: bigint; now: Date },
): Promise<TDepositRow> {
  const [row] = await db.query<TDepositRow>(
    `INSERT INTO payments (direction, provider, user_id, currency, amount, expires_at, created_at, updated_at)
     VALUES ('deposit', $1, $2, $3, $4, $5, $6, $6)
     RETURNING id::text AS id, public_id::text AS public_id, user_id::text AS user_id, currency, amount::text AS amount, state`,
    [input.provider, input.userId, input.currency, input.amount.toString(), new Date(input.now.getTime() + DEPOSIT_LIFETIME_MS), input.now],
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
    `SELECT id::text AS id, public_id::text AS public_id, user_id::text AS user_id, currency, amount::text AS amount, state
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

  // Paid and credited in one step: a deposit has nothing to wait for once the provider has the money.
  const [posted] = await tx.query<{ tx: string }>(
    `SELECT ledger_post('deposit', ARRAY[ledger_user_account($1, $2), ledger_system_account('clearing', $2, $3)],
       ARRAY[$4::numeric, -$4::numeric], $5, $6)::text AS tx`,
    [payment.user_id, payment.currency, provider, payment.amount, `deposit ${payment.public_id}`, `provider:${provider}`],
  );
  await tx.query(
    `UPDATE payments SET state = 'credited', ledger_transaction_id = $2, paid_at = $3, credited_at = $3, updated_at = $3 WHERE id = $1`,
    [payment.id, posted!.tx, now],
  );
  return settle('credited');
}
