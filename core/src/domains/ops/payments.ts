import { formatAmount, OPS_PAYMENT_TARGETS_MS, type TOpsBankDeposit, type TOpsBankPayment, type TOpsFailedWebhook, type TOpsRequest } from '@obmen/shared';
import type { Db, Queryable } from '../../db/index.ts';
import { notFoundOf } from '../../errors.ts';
import { withRetry } from '../../money-errors.ts';
import { writeAudit } from '../audit/service.ts';
import { currencies } from '../currencies/service.ts';
import { checkMatch, depositFor, heldPayment, matchHeldPayment } from '../payments/bank-held.ts';
import type { TProviders } from '../payments/providers.ts';
import { replayWebhook } from '../payments/webhooks.ts';
import { replayCallback } from '../cards/callbacks.ts';
import type { TIssuers } from '../cards/issuer.ts';
import { releaseHeldDeposit } from '../payments/payment-events.ts';
import { auditedActor, customerSubject, type TOpsActor } from './customers.ts';
import { requirePermission } from './guard.ts';
import { pendingRequestsFor, proposeRequest } from './requests.ts';
import { operatorActor } from './service.ts';

/*
 * The payments desk: what the money wing could not finish on its own. Failed provider
 * deliveries are replayed through the inbox's own path (webhooks.ts replayWebhook, as
 * `payments:webhook:replay`); a held bank payment is matched to its deposit through the payments
 * domain (bank-held.ts), credited at once when the amounts agree and otherwise proposed as a
 * `payments.match` request for a second operator; chain deposits and card orders that wait are
 * shown against their clocks. Every action is on the audit trail; so is every look at the held
 * payments, which name their payers.
 */

export const bankPaymentSubject = (id: string) => `bank_payment:${id}`;

const clock = (since: Date, now: Date, targetMs: number) => {
  const waiting = Math.max(0, now.getTime() - new Date(since).getTime());
  return { waiting_ms: waiting, overdue: waiting > targetMs };
};

/** The failed deliveries of both inboxes: payment providers' webhooks and card issuers' callbacks. */
async function failedWebhooks(db: Queryable, now: Date): Promise<TOpsFailedWebhook[]> {
  const rows = await db.query<{
    inbox: 'payments' | 'cards';
    id: string;
    provider: string;
    event_id: string | null;
    received_at: Date;
    attempts: number;
    next_attempt_at: Date | null;
    last_error: string | null;
  }>(
    `SELECT * FROM (
       SELECT 'payments' AS inbox, id::text AS id, provider, event_id, received_at, attempts, next_attempt_at, last_error FROM payment_webhooks
        WHERE processed_at IS NULL AND signature_valid AND attempts > 0
       UNION ALL
       SELECT 'cards', id::text, issuer, event_id, received_at, attempts, next_attempt_at, last_error FROM card_issuer_callbacks
        WHERE processed_at IS NULL AND signature_valid AND attempts > 0
     ) failed ORDER BY received_at, inbox, id LIMIT 100`,
  );
  return rows.map((row) => ({
    ...row,
    attempts: Number(row.attempts),
    received_at: new Date(row.received_at).toISOString(),
    next_attempt_at: row.next_attempt_at ? new Date(row.next_attempt_at).toISOString() : null,
    ...clock(row.received_at, now, OPS_PAYMENT_TARGETS_MS.webhooks_failed),
  }));
}

type THeldRow = {
  id: string;
  provider: string;
  reference: string | null;
  payer: string | null;
  currency: string;
  amount: string;
  why: string;
  received_at: Date;
};

/**
 * The held bank payments, oldest first; `q` narrows them by reference or payer (a part of
 * either) or by amount (exactly, in major units). Each with the open deposits it may be for: at
 * its provider, in its currency, quoting its reference or expecting its amount.
 */
async function heldBankPayments(db: Queryable, acting: TOpsActor, q: string | undefined): Promise<TOpsBankPayment[]> {
  const byCode = await currencies(db);
  const search = q?.trim() || null;
  // An amount as typed ("5 000,50"): compared in major units, in numbers, never as text.
  const typed = search?.replace(/\s/g, '').replace(',', '.') ?? '';
  const amount = /^\d{1,30}(\.\d{1,30})?$/.test(typed) ? typed : null;
  const rows = await db.query<THeldRow>(
    `SELECT h.id::text AS id, h.provider, h.reference, h.payer, h.currency, h.amount::text AS amount, h.why, h.received_at
       FROM bank_payments_held h JOIN currencies c ON c.code = h.currency
      WHERE h.state = 'held' AND ($1::text IS NULL OR h.reference ILIKE '%' || $1 || '%' OR h.payer ILIKE '%' || $1 || '%'
            OR h.amount / power(10::numeric, c.precision) = $2::numeric)
      ORDER BY h.received_at, h.id LIMIT 100`,
    [search, amount],
  );
  const candidates = await db.query<TOpsBankDeposit & { held: string }>(
    `SELECT h.id::text AS held, p.public_id::text AS id, u.account_id, p.reference, p.currency, p.amount::text AS amount, p.state, iso_time(p.created_at) AS created_at
       FROM bank_payments_held h
       JOIN payments p ON p.provider = h.provider AND p.direction = 'deposit' AND p.currency = h.currency AND p.state IN ('created', 'pending', 'expired')
            AND (p.reference = upper(trim(h.reference)) OR p.amount = h.amount)
       JOIN users u ON u.id = p.user_id
      WHERE h.id = ANY($1::bigint[])
      ORDER BY h.id, (p.reference = upper(trim(h.reference))) DESC, p.created_at DESC`,
    [rows.map((row) => row.id)],
  );
  const requests = await pendingRequestsFor(
    db,
    'payments.match',
    rows.map((row) => bankPaymentSubject(row.id)),
    acting.operator.id,
  );
  return rows.map((row) => {
    const precision = byCode.get(row.currency)?.precision ?? 0;
    return {
      ...row,
      amount: formatAmount(row.amount, precision),
      received_at: new Date(row.received_at).toISOString(),
      ...clock(row.received_at, acting.now, OPS_PAYMENT_TARGETS_MS.bank_unmatched),
      candidates: candidates
        .filter((c) => c.held === row.id)
        .slice(0, 5)
        .map(({ held: _, ...c }) => ({ ...c, account_id: Number(c.account_id), amount: formatAmount(c.amount, precision) })),
      request: requests.get(bankPaymentSubject(row.id)) ?? null,
    };
  });
}

async function waitingChainDeposits(db: Queryable, now: Date) {
  const rows = await db.query<{
    id: string;
    account_id: number;
    currency: string;
    amount: string;
    address: string | null;
    confirmations: number;
    required_confirmations: number;
    created_at: Date;
    held_at: Date | null;
  }>(
    `SELECT p.public_id::text AS id, u.account_id, p.currency, p.amount::text AS amount, p.address, p.confirmations, p.required_confirmations,
            p.created_at, p.held_at
       FROM payments p JOIN users u ON u.id = p.user_id
      WHERE p.direction = 'deposit' AND p.address IS NOT NULL AND p.state = 'pending' ORDER BY p.held_at NULLS LAST, p.created_at, p.id LIMIT 100`,
  );
  const byCode = await currencies(db);
  return rows.map((row) => ({
    ...row,
    account_id: Number(row.account_id),
    amount: formatAmount(row.amount, byCode.get(row.currency)?.precision ?? 0),
    confirmations: Number(row.confirmations),
    required_confirmations: Number(row.required_confirmations),
    created_at: new Date(row.created_at).toISOString(),
    held_at: row.held_at ? new Date(row.held_at).toISOString() : null,
    // A held one waits for an operator from when it was held, against that queue's target.
    ...(row.held_at ? clock(row.held_at, now, OPS_PAYMENT_TARGETS_MS.chain_held) : clock(row.created_at, now, OPS_PAYMENT_TARGETS_MS.chain_waiting)),
  }));
}

async function waitingCardOrders(db: Queryable, now: Date) {
  const rows = await db.query<{ id: string; account_id: number; issuer: string; kind: string; status: string; since: Date }>(
    `SELECT c.public_id::text AS id, u.account_id, c.issuer, c.kind, c.status, coalesce(c.confirmed_at, c.created_at) AS since
       FROM cards c JOIN users u ON u.id = c.user_id
      WHERE c.status IN ('confirmed', 'issuing') ORDER BY since, c.id LIMIT 100`,
  );
  return rows.map((row) => ({
    ...row,
    account_id: Number(row.account_id),
    since: new Date(row.since).toISOString(),
    ...clock(row.since, now, OPS_PAYMENT_TARGETS_MS.card_orders),
  }));
}

/** The desk's queues. The held payments name their payers: the look is audited. */
export async function paymentsDesk(db: Db, acting: TOpsActor, q: string | undefined) {
  const [webhooks, bank, chain, cards] = await Promise.all([
    failedWebhooks(db, acting.now),
    heldBankPayments(db, acting, q),
    waitingChainDeposits(db, acting.now),
    waitingCardOrders(db, acting.now),
  ]);
  if (bank.length)
    await writeAudit(db, {
      actor: operatorActor(acting.operator),
      action: 'payments.view_held',
      outcome: 'viewed',
      requestId: acting.requestId,
      ip: acting.ip,
      details: { bank_payments: bank.map((row) => row.id), ...(q ? { q } : {}) },
    });
  return { targets: { ...OPS_PAYMENT_TARGETS_MS }, webhooks, bank, chain, cards };
}

/** An inbox as the desk replays it: its table, its audit subject and its own replay. */
export type TReplayInbox = {
  table: 'payment_webhooks' | 'card_issuer_callbacks';
  subject: string;
  replay: (db: Db, id: string, now: Date) => Promise<{ result: unknown; was_processed: boolean }>;
};

export const paymentWebhooks = (providers: TProviders): TReplayInbox => ({
  table: 'payment_webhooks',
  subject: 'payment_webhook',
  replay: (db, id, now) => replayWebhook(db, providers, id, now),
});

export const issuerCallbacks = (issuers: TIssuers): TReplayInbox => ({
  table: 'card_issuer_callbacks',
  subject: 'card_callback',
  replay: (db, id, now) => replayCallback(db, issuers, id, now),
});

/** A failed delivery processed again now, through the inbox's own path (its event id keeps it from moving money twice). */
export async function replayOnDesk(db: Db, inbox: TReplayInbox, acting: TOpsActor, id: string) {
  const [delivery] = await db.query(`SELECT 1 FROM ${inbox.table} WHERE id = $1 AND signature_valid`, [id]);
  if (!delivery) throw notFoundOf('payment');
  const audit = (details: object) =>
    writeAudit(db, {
      actor: operatorActor(acting.operator),
      action: 'payments.webhook_replay',
      subject: `${inbox.subject}:${id}`,
      requestId: acting.requestId,
      ip: acting.ip,
      details,
    });
  try {
    const done = await inbox.replay(db, id, acting.now);
    await audit({ result: done.result, was_processed: done.was_processed });
    return { result: String(done.result), was_processed: done.was_processed };
  } catch (err) {
    await audit({ error: err instanceof Error ? err.message.slice(0, 500) : String(err) });
    throw err;
  }
}

/** The audit subject of a deposit's customer (the desk's money actions name the customer, not the payment). */
async function depositSubject(tx: Queryable, deposit: { user_id: string }): Promise<string> {
  const [owner] = await tx.query<{ account_id: number }>('SELECT account_id FROM users WHERE id = $1', [deposit.user_id]);
  return customerSubject(Number(owner!.account_id));
}

/**
 * Matches a held bank payment to a deposit (its reference or id). The amounts agree: the deposit
 * is credited now, in one transaction with the match and its audit row (a second match of the
 * same pair credits nothing). They differ: a `payments.match` request, which credits what arrived
 * once a second operator approves it.
 */
export async function matchOnDesk(
  db: Db,
  acting: TOpsActor,
  id: string,
  deposit: string,
): Promise<{ state: 'credited' | 'requested'; request: TOpsRequest | null }> {
  // The route's guard checked it already; a command (`payments:bank:match --as`) is checked here.
  await requirePermission(db, acting.operator, 'payments.review', {
    action: 'payments.match',
    requestId: acting.requestId,
    ip: acting.ip,
    subject: bankPaymentSubject(id),
  });
  const held = await heldPayment(db, id);
  const target = await depositFor(db, held.provider, deposit);
  const again = held.state === 'matched' && held.payment_id === target.id;
  if (!again && checkMatch(held, target).otherAmount) {
    const precision = (await currencies(db)).get(held.currency)?.precision ?? 0;
    const params = {
      bank_payment_id: id,
      deposit_id: target.public_id,
      currency: held.currency,
      amount: formatAmount(held.amount, precision),
      expected: formatAmount(target.amount, precision),
    };
    const request = await proposeRequest(db, { action: 'payments.match', params, reason: 'customer_request', text: '' }, acting);
    return { state: 'requested', request };
  }
  await withRetry(() =>
    db.transaction(async (tx) => {
      const done = await matchHeldPayment(tx, {
        heldId: id,
        deposit: target.public_id,
        otherAmount: false,
        by: operatorActor(acting.operator),
        now: acting.now,
      });
      if (done.replayed) return;
      await writeAudit(tx, {
        ...auditedActor(acting),
        action: 'payments.match',
        subject: await depositSubject(tx, done.deposit),
        details: { bank_payment: id, deposit: done.deposit.public_id },
        after: { state: 'credited', currency: done.deposit.currency, amount: done.amount },
      });
    }),
  );
  return { state: 'credited', request: null };
}

/**
 * Releases a chain deposit held above its customer's limits: credited now, in one transaction
 * with its audit row. The money already sits on our address and is the customer's; the operator
 * decides only that it may reach the wallet, as a bank payment of the expected amount is matched
 * by one operator.
 */
export async function releaseOnDesk(db: Db, acting: TOpsActor, id: string): Promise<{ state: 'credited' }> {
  await withRetry(() =>
    db.transaction(async (tx) => {
      const deposit = await releaseHeldDeposit(tx, id, acting.now);
      const precision = (await currencies(tx)).get(deposit.currency)?.precision ?? 0;
      await writeAudit(tx, {
        ...auditedActor(acting),
        action: 'payments.chain_release',
        subject: await depositSubject(tx, deposit),
        details: { deposit: deposit.public_id, held_at: deposit.held_at ? new Date(deposit.held_at).toISOString() : null },
        before: { state: 'held' },
        after: { state: 'credited', currency: deposit.currency, amount: formatAmount(deposit.amount, precision) },
      });
    }),
  );
  return { state: 'credited' };
}
