import {
  parseAmount,
  paymentFee,
  type TDepositState,
  type TPaymentDirection,
  type TPaymentProvider,
  type TPaymentWebhookEvent,
  type TStatusEvent,
} from '@obmen/shared';
import type { Queryable } from '../../db/index.ts';
import { notFoundOf } from '../../errors.ts';
import { currencies } from '../currencies/service.ts';
import { depositOverLimits } from '../limits/service.ts';
import { recordEvent } from '../events/service.ts';
import { holdBankPayment } from './bank-held.ts';
import { createDeposit, creditDeposits, DEPOSIT_COLUMNS, type TDepositRow } from './deposits.ts';
import { settlePurchase } from './purchase.ts';

/*
 * A provider's events for deposits and purchases (payment.*), applied inside the inbox's
 * transaction. A payment paid is settled by its direction: a deposit is credited (all of a
 * gathering together), a purchase settles as the callback of the deposit it rides on
 * (SETTLE_PAID below), so deposits.ts and purchase.ts need not know each other.
 */

/**
 * What a paid payment of a direction other than a plain deposit does instead of being
 * credited, inside the event's transaction with the payment's row locked: it moves its money
 * and sets the payment `credited` itself.
 */
const SETTLE_PAID: Partial<Record<TPaymentDirection, (tx: Queryable, payment: TDepositRow, now: Date) => Promise<void>>> = {
  purchase: settlePurchase,
};

export type TEventResult = 'credited' | 'pending' | 'held' | 'declined' | 'unknown_payment' | 'amount_mismatch' | 'currency_mismatch' | 'wrong_state';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** A provider's event for a deposit or a purchase, as webhooks.ts hands it over. */
export type TDepositEventItem = { provider: TPaymentProvider; event: TPaymentWebhookEvent };

/**
 * Applies provider events to their payments, in order, inside the caller's transaction (the one
 * that recorded the events' ids). The payments named by id are locked first, all in one
 * statement (ascending id); anything that does not match its payment exactly moves nothing. The
 * deposits paid are credited together at the end (deposit_credit: their ledger accounts locked
 * in one statement too), so a gathering of webhooks costs a few statements, not a few per event.
 * A later event of the same payment sees what an earlier one did to it (the row kept here
 * follows every change). A chain event (it names the address) finds or opens the deposit of its
 * transaction and is applied on its own.
 */
export async function applyDepositEvents(
  tx: Queryable,
  items: TDepositEventItem[],
  now: Date,
): Promise<Array<{ result: TEventResult; paymentId: string | null }>> {
  const byId = items.filter(({ event }) => event.address === undefined && UUID.test(event.payment_id));
  const rows = byId.length
    ? await tx.query<TLockedDeposit>(
        `SELECT ${DEPOSIT_COLUMNS}, (SELECT c.precision::int FROM currencies c WHERE c.code = payments.currency) AS precision FROM payments
         WHERE public_id = ANY ($1::uuid[]) AND (public_id, provider) IN (SELECT * FROM unnest($1::uuid[], $2::text[])) ORDER BY id FOR UPDATE`,
        [byId.map(({ event }) => event.payment_id), byId.map(({ provider }) => provider)],
      )
    : [];
  const payments = new Map(rows.map((row) => [`${row.provider}/${row.public_id}`, row]));
  const credits: string[] = [];
  const outcomes: Array<{ result: TEventResult; paymentId: string | null }> = [];
  for (const { provider, event } of items) {
    if (event.address !== undefined) {
      outcomes.push(await applyChainEvent(tx, provider, event, now));
      continue;
    }
    const payment = payments.get(`${provider}/${event.payment_id.toLowerCase()}`);
    const outcome: { result: TEventResult; paymentId: string | null } = payment
      ? { result: await applyToPayment(tx, payment, event, now, credits), paymentId: payment.id }
      : { result: 'unknown_payment', paymentId: null };
    // A bank transfer that credits nothing is money at our bank all the same: held for an operator.
    if (event.reference !== undefined && event.type === 'payment.paid' && outcome.result !== 'credited')
      await holdBankPayment(tx, { provider, event, why: outcome.result, now });
    outcomes.push(outcome);
  }
  await creditDeposits(tx, credits, now);
  return outcomes;
}

/** A payment locked for its event, with its currency's precision (the event's amount is read in it). */
type TLockedDeposit = TDepositRow & { precision: number };

/** `credits` gathers the ids of the deposits to credit; the payment's row follows its new state. */
async function applyToPayment(tx: Queryable, payment: TLockedDeposit, event: TPaymentWebhookEvent, now: Date, credits: string[]): Promise<TEventResult> {
  const open = payment.state === 'created' || payment.state === 'pending';
  if (event.type === 'payment.pending') {
    if (payment.state === 'pending') return 'pending';
    if (!open) return 'wrong_state';
    await tx.query(`UPDATE payments SET state = 'pending', updated_at = $2 WHERE id = $1`, [payment.id, now]);
    payment.state = 'pending';
    await announcePayment(tx, payment, 'pending');
    return 'pending';
  }
  if (!open) return 'wrong_state';
  if (event.type === 'payment.declined') {
    await tx.query(`UPDATE payments SET state = 'declined', reason = 'payments.declined_by_provider', updated_at = $2 WHERE id = $1`, [payment.id, now]);
    payment.state = 'declined';
    await announcePayment(tx, payment, 'declined');
    return 'declined';
  }
  const mismatch = matchesPayment(payment, event, payment.precision);
  if (mismatch) return mismatch;
  const settle = SETTLE_PAID[payment.direction];
  if (settle) {
    await settle(tx, payment, now);
    payment.state = 'credited';
    await announcePayment(tx, payment, 'credited');
    return 'credited';
  }
  credits.push(payment.id);
  payment.state = 'credited';
  return 'credited';
}

/**
 * The payment moved (credited: the wallets too): a status page or history open in the browser
 * follows live (realtime events, in the transaction of the change).
 */
async function announcePayment(tx: Queryable, payment: Pick<TDepositRow, 'user_id' | 'public_id'>, state: TDepositState): Promise<void> {
  if (state === 'credited') await recordEvent(tx, payment.user_id, 'wallets', null);
  await recordEvent(tx, payment.user_id, 'payment', { id: payment.public_id, state } satisfies TStatusEvent);
}

function matchesPayment(payment: TDepositRow, event: TPaymentWebhookEvent, precision: number): TEventResult | null {
  if (event.currency !== payment.currency) return 'currency_mismatch';
  let amount: bigint;
  try {
    amount = parseAmount(event.amount, precision);
  } catch {
    return 'amount_mismatch';
  }
  return amount === BigInt(payment.amount) ? null : 'amount_mismatch';
}

/**
 * A chain provider's event: a transaction (payment_id) to one of our deposit addresses. The
 * first one seen opens the deposit (pending, with the system's fee and required confirmations
 * of that moment); each later one sets its confirmations (a reorganisation may lower them); it
 * is credited once they reach the required number, never before.
 */
async function applyChainEvent(
  tx: Queryable,
  provider: TPaymentProvider,
  event: TPaymentWebhookEvent,
  now: Date,
): Promise<{ result: TEventResult; paymentId: string | null }> {
  // One deposit per output: a transaction paying two of our addresses (two users, or one twice) is two deposits.
  const externalId = `${event.payment_id}:${event.output ?? 0}`;
  let [payment] = await tx.query<TDepositRow>(`SELECT ${DEPOSIT_COLUMNS} FROM payments WHERE provider = $1 AND external_id = $2 FOR UPDATE`, [
    provider,
    externalId,
  ]);
  const firstSeen = !payment;
  if (!payment) {
    const [owner] = await tx.query<{ user_id: string; currency: string; system_id: string }>(
      // One address may take several currencies of its chain (Ether and its tokens): the event's own first.
      'SELECT user_id::text AS user_id, currency, system_id FROM deposit_addresses WHERE address = $1 AND provider = $2 ORDER BY currency = $3 DESC LIMIT 1',
      [event.address, provider, event.currency],
    );
    if (!owner) return { result: 'unknown_payment', paymentId: null };
    if (owner.currency !== event.currency) return { result: 'currency_mismatch', paymentId: null };
    const byCode = await currencies(tx);
    const precision = byCode.get(owner.currency)?.precision ?? 0;
    let amount: bigint;
    try {
      amount = parseAmount(event.amount, precision);
    } catch {
      return { result: 'amount_mismatch', paymentId: null };
    }
    if (amount <= 0n) return { result: 'amount_mismatch', paymentId: null };
    // The terms of the moment it was seen; a system disabled since still credits what was sent.
    const [terms] = await tx.query<{ fee_percent: string; fee_fixed: string; confirmations: number }>(
      `SELECT fee_percent::text AS fee_percent, fee_fixed::text AS fee_fixed, confirmations FROM payment_system_currencies
       WHERE direction = 'deposit' AND system_id = $1 AND currency = $2`,
      [owner.system_id, owner.currency],
    );
    const fee = terms ? paymentFee({ feePercent: terms.fee_percent, feeFixed: BigInt(terms.fee_fixed) }, amount) : 0n;
    // Inserted under the unique (provider, external_id): a concurrent first sighting waits, then conflicts and retries.
    payment = await createDeposit(tx, {
      userId: owner.user_id,
      provider,
      systemId: owner.system_id,
      currency: owner.currency,
      amount,
      fee: fee < amount ? fee : 0n,
      now,
      state: 'pending',
      address: event.address,
      externalId,
      requiredConfirmations: Number(terms?.confirmations ?? 0),
    });
  }
  // The provider's latest count: a reorganisation lowers it (back to 0 when the block is gone).
  const confirmations = event.confirmations ?? Number(payment.confirmations);
  if (confirmations !== Number(payment.confirmations)) {
    await tx.query('UPDATE payments SET confirmations = $2, updated_at = $3 WHERE id = $1', [payment.id, confirmations, now]);
  }
  const settle = (result: TEventResult) => ({ result, paymentId: payment.id });
  if (payment.state !== 'pending' && payment.state !== 'created') return settle('wrong_state');
  const precision = (await currencies(tx)).get(payment.currency)?.precision ?? 0;
  if (event.type === 'payment.declined') return settle(await applyToPayment(tx, { ...payment, precision }, event, now, []));
  const mismatch = matchesPayment(payment, event, precision);
  if (mismatch) return settle(mismatch);
  if (confirmations < Number(payment.required_confirmations)) {
    // A deposit first seen, or a confirmation more, is news for its page too.
    if (firstSeen || confirmations !== Number(payment.confirmations)) await announcePayment(tx, payment, 'pending');
    return settle('pending');
  }
  // Held already: only an operator's release credits it.
  if (payment.held_at) return settle('held');
  if (await depositOverLimits(tx, payment, now)) {
    await tx.query(`UPDATE payments SET held_at = $2, reason = 'payments.held_over_limits', updated_at = $2 WHERE id = $1`, [payment.id, now]);
    await announcePayment(tx, payment, 'pending');
    return settle('held');
  }
  await creditDeposits(tx, [payment.id], now);
  return settle('credited');
}

/**
 * An operator's release of a chain deposit held above its customer's limits, in the caller's
 * transaction: the payment's row locked, credited through the same deposit_credit as the chain's
 * own events. Anything but a held, fully confirmed, open deposit is not found.
 */
export async function releaseHeldDeposit(tx: Queryable, publicId: string, now: Date): Promise<TDepositRow> {
  const [payment] = await tx.query<TDepositRow>(
    `SELECT ${DEPOSIT_COLUMNS} FROM payments WHERE public_id = $1 AND direction = 'deposit' AND state = 'pending' AND held_at IS NOT NULL
        AND confirmations >= required_confirmations FOR UPDATE`,
    [publicId],
  );
  if (!payment) throw notFoundOf('payment');
  await tx.query('UPDATE payments SET reason = NULL WHERE id = $1', [payment.id]);
  await creditDeposits(tx, [payment.id], now);
  return payment;
}
