import {
  CARD_ISSUED_STATUSES,
  formatAmount,
  type TCard,
  type TCardActivity,
  type TCardActivityKind,
  type TCardKind,
  type TCardOrder,
  type TCardStatus,
  type TStatusEvent,
} from '@obmen/shared';
import type { Queryable } from '../../db/index.ts';
import { notFoundOf } from '../../errors.ts';
import { recordEvent } from '../events/service.ts';
import type { TCurrency } from '../currencies/service.ts';

/** One card (and its order) as stored, with its product's names and its balance. */
export type TCardRow = {
  id: string;
  row_id: string;
  user_id: string;
  product_id: string;
  kind: TCardKind;
  currency: string;
  name_on_card: string;
  address: { country: string; city: string; postcode: string; line: string } | null;
  fee_currency: string;
  issue_fee: string;
  monthly_fee: string;
  status: TCardStatus;
  reason: string | null;
  issuer: string;
  issuer_ref: string | null;
  bin: string | null;
  last4: string | null;
  expiry_month: number | null;
  expiry_year: number | null;
  account_id: string | null;
  hold_id: string | null;
  fee_transaction_id: string | null;
  created_at: string;
  updated_at: string;
  balance: string;
  names: { ru: string; en: string };
  image: string;
  limits: Record<string, { day: string; month: string }>;
  delivery_days: number | null;
};

export const CARD_SELECT = `SELECT c.public_id::text AS id, c.id::text AS row_id, c.user_id::text AS user_id, c.product_id, c.kind, c.currency,
    c.name_on_card, c.address, c.fee_currency, c.issue_fee::text AS issue_fee, c.monthly_fee::text AS monthly_fee, c.status, c.reason,
    c.issuer, c.issuer_ref, c.bin, c.last4, c.expiry_month, c.expiry_year, c.account_id::text AS account_id, c.hold_id::text AS hold_id,
    c.fee_transaction_id::text AS fee_transaction_id, iso_time(c.created_at) AS created_at, iso_time(c.updated_at) AS updated_at,
    coalesce(a.balance, 0)::text AS balance, p.names, p.image, p.limits, p.delivery_days
  FROM cards c JOIN card_products p ON p.id = c.product_id LEFT JOIN ledger_accounts a ON a.id = c.account_id`;

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * The caller's own card by public id; with `lock`, its row is locked (FOR UPDATE OF c) first, so
 * every change of one card (confirm, cancel, issuer events, freeze, moves) queues on it. Another
 * user's card answers exactly like a missing one.
 */
export async function ownCard(db: Queryable, userId: string, publicId: string, lock = false): Promise<TCardRow> {
  const row = UUID.test(publicId)
    ? (await db.query<TCardRow>(`${CARD_SELECT} WHERE c.public_id = $1 AND c.user_id = $2${lock ? ' FOR UPDATE OF c' : ''}`, [publicId, userId]))[0]
    : undefined;
  if (!row) throw notFoundOf('card');
  return row;
}

/** A card by public id, whoever owns it (issuer callbacks), locked. */
export async function cardByOrderRef(db: Queryable, publicId: string, issuer: string): Promise<TCardRow | undefined> {
  if (!UUID.test(publicId)) return undefined;
  const [row] = await db.query<TCardRow>(`${CARD_SELECT} WHERE c.public_id = $1 AND c.issuer = $2 FOR UPDATE OF c`, [publicId, issuer]);
  return row;
}

export async function addActivity(
  db: Queryable,
  row: Pick<TCardRow, 'row_id'> & Partial<Pick<TCardRow, 'id' | 'user_id'>>,
  kind: TCardActivityKind,
  actor: string,
  now: Date,
  money?: { amount: bigint | string; currency: string; transactionId?: string | null },
): Promise<void> {
  await db.query('INSERT INTO card_activity (card_id, kind, amount, currency, ledger_transaction_id, actor, created_at) VALUES ($1, $2, $3, $4, $5, $6, $7)', [
    row.row_id,
    kind,
    money ? money.amount.toString() : null,
    money?.currency ?? null,
    money?.transactionId ?? null,
    actor,
    now,
  ]);
  // A change of the card (its status, its money) is news for the pages showing it: a live event
  // in the same transaction. Looking at the details changes nothing.
  if (row.id && row.user_id && kind !== 'revealed' && kind !== 'reveal_refused')
    await recordEvent(db, row.user_id, 'card', { id: row.id, state: kind } satisfies TStatusEvent);
}

const precision = (byCode: Map<string, TCurrency>, code: string) => byCode.get(code)?.precision ?? 0;

export function toOrder(row: TCardRow, byCode: Map<string, TCurrency>): TCardOrder {
  return {
    id: row.id,
    product: { id: row.product_id, kind: row.kind, name: row.names, image: row.image },
    currency: row.currency,
    name_on_card: row.name_on_card,
    address: row.address,
    status: row.status,
    fee_currency: row.fee_currency,
    issue_fee: formatAmount(row.issue_fee, precision(byCode, row.fee_currency)),
    monthly_fee: formatAmount(row.monthly_fee, precision(byCode, row.fee_currency)),
    reason: row.reason,
    can_confirm: row.status === 'placed',
    can_cancel: row.status === 'placed',
    created_at: row.created_at,
    updated_at: row.updated_at,
  };
}

export function isIssued(status: TCardStatus): boolean {
  return (CARD_ISSUED_STATUSES as readonly string[]).includes(status);
}

/** "4000 12•• •••• 3456": the BIN and the last four, nothing else. */
export function maskNumber(bin: string, last4: string): string {
  return `${bin.slice(0, 4)} ${bin.slice(4, 6)}•• •••• ${last4}`;
}

export function toCard(row: TCardRow, byCode: Map<string, TCurrency>): TCard {
  return {
    id: row.id,
    kind: row.kind,
    product: { id: row.product_id, name: row.names, image: row.image },
    status: row.status,
    currency: row.currency,
    name_on_card: row.name_on_card,
    masked: row.bin && row.last4 ? maskNumber(row.bin, row.last4) : null,
    last4: row.last4,
    expiry: row.expiry_month && row.expiry_year ? `${String(row.expiry_month).padStart(2, '0')}/${String(row.expiry_year % 100).padStart(2, '0')}` : null,
    balance: formatAmount(row.balance, precision(byCode, row.currency)),
    created_at: row.created_at,
  };
}

export async function cardActivity(db: Queryable, row: TCardRow, byCode: Map<string, TCurrency>, limit = 50): Promise<TCardActivity[]> {
  const rows = await db.query<{ kind: TCardActivityKind; amount: string | null; currency: string | null; at: string }>(
    `SELECT kind, amount::text AS amount, currency, iso_time(created_at) AS at FROM card_activity WHERE card_id = $1 ORDER BY id DESC LIMIT $2`,
    [row.row_id, limit],
  );
  return rows.map((r) => ({
    kind: r.kind,
    amount: r.amount !== null && r.currency ? formatAmount(r.amount, precision(byCode, r.currency)) : null,
    currency: r.currency,
    at: r.at,
  }));
}
