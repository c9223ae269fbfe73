import type { TLocale, TStatementQuery } from '@obmen/shared';
import type { Queryable } from '../../db/index.ts';
import { AppError } from '../../errors.ts';
import { currencies, type TCurrency } from '../currencies/service.ts';

/*
 * An account statement: for a period, per currency, the opening balance, every movement of the
 * user's wallet (its ledger postings: date, kind, counterparty, fee, running balance) and the
 * closing balance. Read from the ledger only, so its totals are the ledger's by construction;
 * statement-pdf.ts lays it out.
 */

export type TStatementLine = {
  at: Date;
  kind: string;
  /** Minor units, signed: what the wallet gained or lost. */
  amount: bigint;
  /** Minor units the house took with this movement (0 when none). */
  fee: bigint;
  /** The other account of a transfer (its account number), or the pair of an exchange. */
  counterparty: string | null;
  balance: bigint;
};
export type TStatementSection = { currency: TCurrency; opening: bigint; closing: bigint; credits: bigint; debits: bigint; lines: TStatementLine[] };
export type TStatement = {
  from: Date;
  /** Exclusive. */
  to: Date;
  accountId: number;
  name: string | null;
  locale: TLocale;
  sections: TStatementSection[];
};

const DAY_MS = 24 * 60 * 60_000;
/** A statement covers at most a year and a day: longer ones are several statements. */
export const STATEMENT_MAX_DAYS = 366;

/** The period of a query: a month, or two days (UTC, inclusive); never ahead of today. */
export function statementPeriod(query: TStatementQuery, now: Date): { from: Date; to: Date } {
  let from: Date;
  let to: Date;
  if (query.month) {
    from = new Date(`${query.month}-01T00:00:00Z`);
    to = new Date(Date.UTC(from.getUTCFullYear(), from.getUTCMonth() + 1, 1));
  } else if (query.from && query.to) {
    from = new Date(`${query.from}T00:00:00Z`);
    to = new Date(new Date(`${query.to}T00:00:00Z`).getTime() + DAY_MS);
  } else {
    throw new AppError('validation', { fields: { [query.from ? 'to' : 'from']: 'validation.required' } });
  }
  if (Number.isNaN(from.getTime()) || Number.isNaN(to.getTime())) throw new AppError('validation', { fields: { from: 'validation.invalid' } });
  if (to <= from) throw new AppError('validation', { fields: { to: 'statement.to_before_from' } });
  if (from > now) throw new AppError('validation', { fields: { [query.month ? 'month' : 'from']: 'statement.future' } });
  if (to.getTime() - from.getTime() > STATEMENT_MAX_DAYS * DAY_MS) throw new AppError('validation', { fields: { to: 'statement.too_long' } });
  return { from, to };
}

type TRow = {
  currency: string;
  at: Date;
  kind: string;
  amount: string;
  fee_posted: string;
  withdrawal_fee: string | null;
  sender_account: number | null;
  recipient_account: number | null;
  exchange_pair: string | null;
};

/** The statement of `userId` for [from, to): every currency the wallet held or moved. */
export async function readStatement(db: Queryable, userId: string, period: { from: Date; to: Date }, locale: TLocale): Promise<TStatement> {
  const [[user], openings, rows, byCode] = await Promise.all([
    db.query<{ account_id: number; name: string | null }>(
      `SELECT account_id, CASE WHEN verification_level >= 1 THEN concat_ws(' ', first_name, middle_name, last_name) END AS name FROM users WHERE id = $1`,
      [userId],
    ),
    db.query<{ currency: string; opening: string }>(
      `SELECT a.currency, coalesce(sum(p.amount) FILTER (WHERE t.created_at < $2), 0)::text AS opening
         FROM ledger_accounts a
         LEFT JOIN postings p ON p.account_id = a.id
         LEFT JOIN ledger_transactions t ON t.id = p.transaction_id
        WHERE a.kind = 'user' AND a.user_id = $1
        GROUP BY a.currency`,
      [userId, period.from],
    ),
    // Fees: what the same transaction posted to the house's fee accounts in this currency (a
    // transfer's or an exchange's), or the withdrawal's own fee for the hold that requested it.
    db.query<TRow>(
      `SELECT p.currency, t.created_at AS at, t.kind, p.amount::text AS amount,
              (SELECT coalesce(sum(f.amount), 0) FROM postings f JOIN ledger_accounts fa ON fa.id = f.account_id
                WHERE f.transaction_id = t.id AND f.currency = p.currency AND fa.kind IN ('fees', 'card_fees'))::text AS fee_posted,
              w.fee::text AS withdrawal_fee, su.account_id AS sender_account, ru.account_id AS recipient_account,
              coalesce(xs.src || ' → ' || xs.dst, xd.src || ' → ' || xd.dst) AS exchange_pair
         FROM ledger_accounts a
         JOIN postings p ON p.account_id = a.id
         JOIN ledger_transactions t ON t.id = p.transaction_id
         LEFT JOIN transfers tr ON tr.ledger_transaction_id = t.id
         LEFT JOIN users su ON su.id = tr.sender_id
         LEFT JOIN users ru ON ru.id = tr.recipient_id
         LEFT JOIN holds h ON h.place_transaction_id = t.id
         LEFT JOIN withdrawals w ON w.hold_id = h.id
         LEFT JOIN exchanges xs ON xs.src_transaction_id = t.id
         LEFT JOIN exchanges xd ON xd.dst_transaction_id = t.id
        WHERE a.kind = 'user' AND a.user_id = $1 AND t.created_at >= $2 AND t.created_at < $3
        ORDER BY t.created_at, p.id`,
      [userId, period.from, period.to],
    ),
    currencies(db),
  ]);
  if (!user) throw new AppError('unauthorized');
  const sections = new Map<string, TStatementSection>();
  const sectionOf = (code: string, opening = 0n) => {
    let section = sections.get(code);
    if (!section) {
      const currency = byCode.get(code);
      if (!currency) throw new Error(`statement: unknown currency ${code}`);
      section = { currency, opening, closing: opening, credits: 0n, debits: 0n, lines: [] };
      sections.set(code, section);
    }
    return section;
  };
  for (const row of openings) if (BigInt(row.opening) !== 0n) sectionOf(row.currency, BigInt(row.opening));
  for (const row of rows) {
    const section = sectionOf(row.currency, BigInt(openings.find((o) => o.currency === row.currency)?.opening ?? '0'));
    const amount = BigInt(row.amount);
    section.closing += amount;
    if (amount > 0n) section.credits += amount;
    else section.debits -= amount;
    const outgoing = amount < 0n;
    const fee = outgoing ? BigInt(row.withdrawal_fee ?? row.fee_posted) : 0n;
    const counterparty = row.exchange_pair ?? (row.sender_account === null ? null : String(outgoing ? row.recipient_account : row.sender_account));
    section.lines.push({ at: row.at, kind: row.kind, amount, fee, counterparty, balance: section.closing });
  }
  const ordered = [...sections.values()].sort((a, b) => a.currency.position - b.currency.position || a.currency.code.localeCompare(b.currency.code));
  return { from: period.from, to: period.to, accountId: user.account_id, name: user.name?.trim() || null, locale, sections: ordered };
}
