import {
  formatAmount,
  parseAmount,
  paymentFee,
  type TPurchaseQuote,
  type TDepositAddress,
  type TDepositCreateBody,
  type TDepositPayment,
  type TDepositState,
  type TDepositSystems,
  type TLocale,
  type TPaymentDirection,
  type TPaymentProvider,
  type TPaymentWebhookEvent,
  type TStatusEvent,
} from '@obmen/shared';
import type { Db, Queryable } from '../../db/index.ts';
import { AppError, notFoundOf } from '../../errors.ts';
import { consumeRateLimit } from '../../rate-limit.ts';
import { currencies } from '../currencies/service.ts';
import { assessPayment, findPaymentSystem, groupByCurrency, listPaymentSystems } from './catalogue.ts';
import { SANDBOX_BANK, sandboxDepositAddress } from './sandbox.ts';
import { qrSvg } from './qr.ts';
import { purchaseQuote, settlePurchase } from './purchase.ts';
import { recordEvent } from '../events/service.ts';
import { limitError, limitState, limitValue } from './withdrawals.ts';

/** How long a created card deposit waits for its payment before it may expire. */
export const DEPOSIT_LIFETIME_MS = 30 * 60_000;
/** A bank transfer takes days: the reference stays valid this long. */
export const BANK_DEPOSIT_LIFETIME_MS = 3 * 24 * 60 * 60_000;

export type TDepositRow = {
  id: string;
  public_id: string;
  direction: TPaymentDirection;
  provider: TPaymentProvider;
  system_id: string;
  user_id: string;
  currency: string;
  amount: string;
  fee: string;
  state: TDepositState;
  reason: string | null;
  reference: string | null;
  address: string | null;
  confirmations: number;
  required_confirmations: number;
  created_at: Date;
  expires_at: Date;
};
export const DEPOSIT_COLUMNS = `id::text AS id, public_id::text AS public_id, direction, provider, system_id, user_id::text AS user_id, currency,
  amount::text AS amount, fee::text AS fee, state, reason, reference, address, confirmations, required_confirmations, created_at, expires_at`;

/** A new deposit; amount and fee in minor units (the user is credited amount − fee). */
export async function createDeposit(
  db: Queryable,
  input: {
    userId: string;
    provider: TPaymentProvider;
    systemId: string;
    currency: string;
    amount: bigint;
    fee?: bigint;
    now: Date;
    lifetimeMs?: number;
    state?: 'created' | 'pending';
    reference?: string;
    address?: string;
    externalId?: string;
    requiredConfirmations?: number;
  },
): Promise<TDepositRow> {
  const [row] = await db.query<TDepositRow>(
    `INSERT INTO payments (direction, provider, system_id, user_id, currency, amount, fee, expires_at, created_at, updated_at,
       state, reference, address, external_id, required_confirmations)
     VALUES ('deposit', $1, $2, $3, $4, $5, $6, $7, $8, $8, $9, $10, $11, $12, $13)
     RETURNING ${DEPOSIT_COLUMNS}`,
    [
      input.provider,
      input.systemId,
      input.userId,
      input.currency,
      input.amount.toString(),
      (input.fee ?? 0n).toString(),
      new Date(input.now.getTime() + (input.lifetimeMs ?? DEPOSIT_LIFETIME_MS)),
      input.now,
      input.state ?? 'created',
      input.reference ?? null,
      input.address ?? null,
      input.externalId ?? null,
      input.requiredConfirmations ?? 0,
    ],
  );
  return row!;
}

export type TEventResult = 'credited' | 'pending' | 'declined' | 'unknown_payment' | 'amount_mismatch' | 'currency_mismatch' | 'wrong_state';

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
    outcomes.push(
      payment ? { result: await applyToPayment(tx, payment, event, now, credits), paymentId: payment.id } : { result: 'unknown_payment', paymentId: null },
    );
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
  if (payment.direction === 'purchase') {
    await settlePurchase(tx, payment, now);
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
 * Paid and credited in one step: a deposit has nothing to wait for once the provider has the
 * money. The provider owes us the whole amount (its clearing account goes down by it); the user
 * gets it less the system's fee, which goes to the house's fee account. All of them in one
 * statement (deposit_credit), which also announces them.
 */
async function creditDeposits(tx: Queryable, paymentIds: string[], now: Date): Promise<void> {
  if (!paymentIds.length) return;
  const credited = await tx.query<{ user_id: string }>('SELECT credited_user::text AS user_id FROM deposit_credit($1::bigint[], $2)', [paymentIds, now]);
  tx.announce?.(credited.map((row) => row.user_id));
}

/**
 * A chain provider's event: a transaction (payment_id) to one of our deposit addresses. The
 * first one seen opens the deposit (pending, with the system's fee and required confirmations
 * of that moment); each later one raises its confirmations; it is credited once they reach the
 * required number (or the provider says paid), never before.
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
      'SELECT user_id::text AS user_id, currency, system_id FROM deposit_addresses WHERE address = $1 AND provider = $2',
      [event.address, provider],
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
  const confirmations = Math.max(Number(payment.confirmations), event.confirmations ?? 0);
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
  await creditDeposits(tx, [payment.id], now);
  return settle('credited');
}

/** The verification level of a user (0 until identity is approved). */
export async function userLevel(db: Queryable, userId: string): Promise<number> {
  const [row] = await db.query<{ level: number }>('SELECT verification_level AS level FROM users WHERE id = $1', [userId]);
  return Number(row?.level ?? 0);
}

/** GET /api/deposit/ps: per enabled currency (named in the reader's language), the systems that take deposits in it, with their terms. */
export async function listDepositSystems(db: Queryable, userId: string, locale: TLocale): Promise<TDepositSystems> {
  const entries = await listPaymentSystems(db, { direction: 'deposit', userLevel: await userLevel(db, userId) });
  return { status: 'ok', currencies: await groupByCurrency(db, entries, locale) };
}

/** The site's page of a payment: the form it came from, showing this payment. */
export function paymentPageUrl(row: Pick<TDepositRow, 'direction' | 'system_id' | 'currency' | 'public_id'>, buying?: string): string {
  const section = row.direction === 'purchase' ? 'purchase' : 'deposit';
  return `/${section}/form/${row.system_id}/${buying ?? row.currency}?payment=${row.public_id}`;
}

/** The hosted page of the card sandbox (served by core, reached through the BFF's /api proxy). */
export function cardPageUrl(publicId: string): string {
  return `/api/payments/sandbox-card/pay/${publicId}`;
}

/** A payment as the API shows it. */
export async function paymentView(db: Queryable, row: TDepositRow, buying?: string): Promise<TDepositPayment> {
  const precision = (await currencies(db)).get(row.currency)?.precision ?? 0;
  const open = row.state === 'created' || row.state === 'pending';
  return {
    id: row.public_id,
    direction: row.direction,
    ps: row.system_id,
    provider: row.provider,
    currency: row.currency,
    amount: formatAmount(row.amount, precision),
    fee: formatAmount(row.fee, precision),
    receive: formatAmount(BigInt(row.amount) - BigInt(row.fee), precision),
    state: row.state,
    reason: row.reason,
    created_at: row.created_at.toISOString(),
    expires_at: row.expires_at.toISOString(),
    pay_url: open && row.provider === 'sandbox-card' ? cardPageUrl(row.public_id) : null,
    url: paymentPageUrl(row, buying),
    bank: row.reference ? { ...SANDBOX_BANK, reference: row.reference } : null,
    address: row.address,
    confirmations: Number(row.confirmations),
    required_confirmations: Number(row.required_confirmations),
  };
}

/** A reference the payer can type: OBM- and 8 characters without look-alikes. */
function bankReference(): string {
  const alphabet = 'ABCDEFGHJKLMNPQRSTUVWXYZ23456789';
  const bytes = crypto.getRandomValues(new Uint8Array(8));
  return `OBM-${Array.from(bytes, (byte) => alphabet[byte % alphabet.length]).join('')}`;
}

/**
 * POST /api/deposit/integration_json. Card and bank: a new deposit in state `created`, with
 * where to pay (the hosted page, or the bank details and the reference to quote). Chain: the
 * user's deposit address for the currency and its QR code (a deposit opens when a transaction
 * to it is seen). No money moves until the provider's signed event arrives, so a repeated form
 * only leaves another unpaid deposit that expires (30 new ones per user per hour).
 */
export async function openDeposit(
  db: Db,
  userId: string,
  body: TDepositCreateBody,
  now: Date,
): Promise<{ status: 'ok'; payment: TDepositPayment | null; address: TDepositAddress | null }> {
  const level = await userLevel(db, userId);
  const chain = await findPaymentSystem(db, { direction: 'deposit', id: body.ps, currency: body.currency, userLevel: level });
  if (chain?.system.provider === 'sandbox-chain') {
    if (chain.system.locked) throw new AppError('payment_level_required', { vars: { level: chain.system.level } });
    const address = await sandboxDepositAddress(db, { userId, currency: chain.currency.code, systemId: chain.system.id, now });
    return {
      status: 'ok',
      payment: null,
      address: {
        ps: chain.system.id,
        currency: chain.currency.code,
        address,
        qr_svg: qrSvg(address),
        min: chain.system.min,
        confirmations: chain.system.confirmations,
      },
    };
  }
  if (body.amount === undefined) throw new AppError('validation', { fields: { amount: 'validation.required' } });
  const assessed = await assessPayment(db, { direction: 'deposit', ps: body.ps, currency: body.currency, amount: body.amount, userLevel: level });
  // Only a new payment counts: the chain address above is the same one each time it is asked for.
  await consumeRateLimit(db, 'deposit_create_user', userId);
  const { system, currency } = assessed.entry;
  const bank = system.provider === 'sandbox-bank';
  const row = await db.transaction(async (tx) => {
    await refuseOverDepositLimits(tx, userId, level, now, currency.code, assessed.amount);
    return createDeposit(tx, {
      userId,
      provider: system.provider,
      systemId: system.id,
      currency: currency.code,
      amount: assessed.amount,
      fee: assessed.fee,
      now,
      ...(bank ? { lifetimeMs: BANK_DEPOSIT_LIFETIME_MS, reference: bankReference() } : {}),
    });
  });
  return { status: 'ok', payment: await paymentView(db, row), address: null };
}

/**
 * Over the deposit limits of the user's level (deposits and purchases count): refused. Takes the
 * user's row lock, so two payments opened at once cannot both fit; call it in the transaction
 * that inserts the payment.
 */
export async function refuseOverDepositLimits(tx: Queryable, userId: string, level: number, now: Date, currency: string, amount: bigint): Promise<void> {
  await tx.query('SELECT 1 FROM users WHERE id = $1 FOR UPDATE', [userId]);
  const limits = await limitState(tx, userId, level, now, 'deposit');
  const refusal = limitError(limits, await limitValue(tx, currency, amount, limits.currency), 'deposit');
  if (refusal) throw refusal;
}

/** The payment id in what `check` is given: the payment's page URL (…?payment=<id>), or the id itself. */
export function paymentIdOf(url: string): string | null {
  const match = /(?:^|[?&]payment=)([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})(?:$|&)/i.exec(url.trim());
  return match ? match[1]!.toLowerCase() : null;
}

/**
 * POST /api/deposit/integration_json/check {url}: the state of one of the caller's payments
 * (deposit or purchase). Another user's payment answers exactly like a missing one.
 */
export async function checkPayment(
  db: Queryable,
  userId: string,
  url: string,
): Promise<{ status: 'ok'; payment: TDepositPayment; quote: TPurchaseQuote | null }> {
  const id = paymentIdOf(url);
  if (!id) throw notFoundOf('payment');
  const [row] = await db.query<TDepositRow & { buying: string | null }>(
    `SELECT ${DEPOSIT_COLUMNS}, (SELECT buy_currency FROM purchases WHERE payment_id = payments.id) AS buying
     FROM payments WHERE public_id = $1 AND user_id = $2 AND direction IN ('deposit', 'purchase')`,
    [id, userId],
  );
  if (!row) throw notFoundOf('payment');
  const quote = row.direction === 'purchase' ? await purchaseQuote(db, row.id) : null;
  return { status: 'ok', payment: await paymentView(db, row, row.buying ?? undefined), quote };
}

/**
 * Ends the deposits nobody started paying in time (`created` past expires_at). A `pending`
 * one is left for the provider's final word: its payer may be paying right now. The row lock
 * of UPDATE and the webhook's FOR UPDATE serialise the two: whichever comes second sees the
 * other's state (a paid event after expiry moves nothing and is kept in the inbox).
 */
export async function expireDeposits(db: Queryable, now: Date): Promise<number> {
  // One statement: each expiry and its event commit together (users in ascending id: event_record's counters).
  const rows = await db.query<{ user_id: string }>(
    `WITH expired AS (
       UPDATE payments SET state = 'expired', reason = 'payments.expired', updated_at = $1
       WHERE direction IN ('deposit', 'purchase') AND state = 'created' AND expires_at <= $1 RETURNING user_id, public_id
     )
     SELECT user_id::text AS user_id, event_record(user_id, 'payment', jsonb_build_object('id', public_id::text, 'state', 'expired'))
       FROM (SELECT * FROM expired ORDER BY user_id, public_id) e`,
    [now],
  );
  db.announce?.([...new Set(rows.map((row) => row.user_id))]);
  return rows.length;
}
