import {
  formatAmount,
  type TDepositAddress,
  type TDepositCreateBody,
  type TDepositPayment,
  type TDepositState,
  type TDepositSystems,
  type TLocale,
  type TPaymentDirection,
  type TPaymentProvider,
} from '@obmen/shared';
import type { Db, Queryable } from '../../db/index.ts';
import { AppError } from '../../errors.ts';
import { consumeRateLimit } from '../../rate-limit.ts';
import { currencies } from '../currencies/service.ts';
import { refuseOverLimits, userLevel } from '../limits/service.ts';
import { assessPayment, findPaymentSystem, groupByCurrency, listPaymentSystems } from './catalogue.ts';
import { findPaymentProvider, paymentProvider } from './providers.ts';
import { qrSvg } from './qr.ts';

/** How long a created card deposit waits for its payment before it may expire. */
export const DEPOSIT_LIFETIME_MS = 30 * 60_000;

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
  /** A chain deposit confirmed but above its customer's limits: held for an operator since. */
  held_at: Date | null;
};
export const DEPOSIT_COLUMNS = `id::text AS id, public_id::text AS public_id, direction, provider, system_id, user_id::text AS user_id, currency,
  amount::text AS amount, fee::text AS fee, state, reason, reference, address, confirmations, required_confirmations, created_at, expires_at, held_at`;

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

/**
 * Paid and credited in one step: a deposit has nothing to wait for once the provider has the
 * money. The provider owes us the whole amount (its clearing account goes down by it); the user
 * gets it less the system's fee, which goes to the house's fee account. All of them in one
 * statement (deposit_credit), which also announces them.
 */
export async function creditDeposits(tx: Queryable, paymentIds: string[], now: Date): Promise<void> {
  if (!paymentIds.length) return;
  const credited = await tx.query<{ user_id: string }>('SELECT credited_user::text AS user_id FROM deposit_credit($1::bigint[], $2)', [paymentIds, now]);
  tx.announce?.(credited.map((row) => row.user_id));
  // Each customer's mail, owed in this transaction (mail/money.ts): one statement for the gathering.
  await tx.query(
    `INSERT INTO money_mail_queue (user_id, kind, vars)
     SELECT user_id, 'deposit_credited', jsonb_build_object('currency', currency, 'amount', (amount - fee)::text, 'fee', fee::text, 'id', public_id::text)
       FROM payments WHERE id = ANY ($1::bigint[]) ORDER BY id`,
    [paymentIds],
  );
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

/** A payment as the API shows it. */
export async function paymentView(db: Queryable, row: TDepositRow, buying?: string): Promise<TDepositPayment> {
  const precision = (await currencies(db)).get(row.currency)?.precision ?? 0;
  const open = row.state === 'created' || row.state === 'pending';
  const payWith = findPaymentProvider(row.provider)?.payWith({ publicId: row.public_id, reference: row.reference, open }) ?? { payUrl: null, bank: null };
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
    pay_url: payWith.payUrl,
    url: paymentPageUrl(row, buying),
    bank: payWith.bank,
    address: row.address,
    confirmations: Number(row.confirmations),
    required_confirmations: Number(row.required_confirmations),
  };
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
  const toAddress = chain && paymentProvider(chain.system.provider);
  if (chain && toAddress?.deposits === 'address' && toAddress.openDepositAddress) {
    if (chain.system.locked) throw new AppError('payment_level_required', { vars: { level: chain.system.level } });
    const address = await toAddress.openDepositAddress(db, { userId, currency: chain.currency.code, systemId: chain.system.id, now });
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
  const opening = paymentProvider(system.provider).openPayment({ direction: 'deposit' });
  const row = await db.transaction(async (tx) => {
    await refuseOverLimits(tx, { userId, level, now, operation: 'deposit', currency: currency.code, amount: assessed.amount });
    return createDeposit(tx, {
      userId,
      provider: system.provider,
      systemId: system.id,
      currency: currency.code,
      amount: assessed.amount,
      fee: assessed.fee,
      now,
      ...opening,
    });
  });
  return { status: 'ok', payment: await paymentView(db, row), address: null };
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
