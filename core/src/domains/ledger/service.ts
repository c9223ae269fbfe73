import { formatAmount } from '@obmen/shared';
import type { Db, Queryable } from '../../db/index.ts';
import { AppError } from '../../errors.ts';
import { currencies, enabledCurrency, parseUserAmount, precisionLookup } from '../currencies/service.ts';
import { fromDbError, moneyError, withRetry } from '../../money-errors.ts';
import { postTransaction, systemAccount, userAccount } from './posting.ts';

/** Runs SQL that may raise ledger refusals, turning them into AppErrors with formatted amounts. */
export async function ledgerCall<T>(db: Queryable, work: () => Promise<T>, field?: string): Promise<T> {
  try {
    return await work();
  } catch (err) {
    throw fromDbError(err, precisionLookup(await currencies(db)), field);
  }
}

export type TAdjustment = {
  /** users.account_id: the 8-digit number people see. */
  accountId: number;
  currency: string;
  /** Major units as text, e.g. "100.50". */
  amount: string;
  direction: 'credit' | 'debit';
  reason: string;
  actor?: string;
};

/**
 * An operator credits or debits a user through the ledger, against the house's adjustment
 * account, with a reason kept as the transaction memo. A debit never takes a balance below 0.
 */
export async function adjustBalance(db: Db, input: TAdjustment): Promise<TAdjusted> {
  return withRetry(() => ledgerCall(db, () => db.transaction((tx) => postAdjustment(tx, input))));
}

type TAdjusted = { transaction_id: string; currency: string; balance: string };

/**
 * adjustBalance in the caller's transaction (a four-eyes approval's); `account` names the
 * adjustment account on the other side. A refusal comes back as a database error (ledgerCall).
 */
export async function postAdjustment(tx: Queryable, input: TAdjustment & { account?: string }): Promise<TAdjusted> {
  const reason = input.reason.trim();
  if (!reason) throw new AppError('validation', { fields: { reason: 'validation.required' } });
  const currency = await enabledCurrency(tx, input.currency.toUpperCase());
  const amount = parseUserAmount(input.amount, currency);
  const signed = input.direction === 'credit' ? amount : -amount;
  const [user] = await tx.query<{ id: string }>('SELECT id::text AS id FROM users WHERE account_id = $1', [input.accountId]);
  if (!user) throw moneyError('recipient_not_found', { account_id: input.accountId });
  const transactionId = await postTransaction(tx, {
    kind: 'adjustment',
    postings: [
      { account: userAccount(user.id, currency.code), amount: signed },
      { account: systemAccount('adjustment', currency.code, input.account), amount: -signed },
    ],
    memo: reason,
    actor: input.actor ?? 'operator',
  });
  const [balance] = await tx.query<{ balance: string }>('SELECT balance::text AS balance FROM ledger_accounts WHERE user_id = $1 AND currency = $2', [
    user.id,
    currency.code,
  ]);
  return { transaction_id: transactionId, currency: currency.code, balance: formatAmount(balance!.balance, currency.precision) };
}

/** A correction: posts the opposite of a ledger transaction (once), with a reason. */
export async function reverseTransaction(db: Db, transactionId: string, reason: string, actor = 'operator'): Promise<TReversed> {
  return withRetry(() => ledgerCall(db, () => db.transaction((tx) => postReversal(tx, transactionId, reason, actor))));
}

type TReversed = { transaction_id: string; reverses: string };

/** reverseTransaction in the caller's transaction (a four-eyes approval's); refusals as database errors. */
export async function postReversal(tx: Queryable, transactionId: string, reason: string, actor = 'operator'): Promise<TReversed> {
  if (!reason.trim()) throw new AppError('validation', { fields: { reason: 'validation.required' } });
  if (!/^\d{1,18}$/.test(transactionId)) throw new AppError('validation', { fields: { transaction: 'validation.invalid' } });
  const [row] = await tx.query<{ tx: string }>('SELECT ledger_reverse($1, $2, $3)::text AS tx', [transactionId, reason.trim(), actor]);
  return { transaction_id: row!.tx, reverses: transactionId };
}

/** Whose wallets or holds a ledger transaction moved (none for a missing one), whether it moved a hold, whether it was reversed already. */
export async function transactionParties(db: Queryable, transactionId: string): Promise<{ users: string[]; holds: boolean; reversed: boolean }> {
  const rows = await db.query<{ user_id: string | null; holds: boolean; reversed: boolean }>(
    `SELECT u.uid::text AS user_id, coalesce(bool_or(u.hold) OVER (), false) AS holds,
            EXISTS (SELECT 1 FROM ledger_transactions r WHERE r.reverses = $1) AS reversed
       FROM (SELECT coalesce(a.user_id, a.holder_id) AS uid, bool_or(a.kind = 'hold') AS hold FROM postings p JOIN ledger_accounts a ON a.id = p.account_id
              WHERE p.transaction_id = $1 AND a.kind IN ('user', 'hold') GROUP BY 1) u RIGHT JOIN (SELECT 1) one ON true ORDER BY u.uid`,
    [transactionId],
  );
  return { users: rows.flatMap((row) => (row.user_id ? [row.user_id] : [])), holds: rows[0]?.holds ?? false, reversed: rows[0]?.reversed ?? false };
}

/** A user's balances in minor units by currency (accounts that exist). */
export async function userBalances(db: Queryable, userId: string): Promise<Map<string, bigint>> {
  const rows = await db.query<{ currency: string; balance: string }>('SELECT currency, balance::text AS balance FROM ledger_accounts WHERE user_id = $1', [
    userId,
  ]);
  return new Map(rows.map((row) => [row.currency, BigInt(row.balance)]));
}

export async function userBalance(db: Queryable, userId: string, currency: string): Promise<bigint> {
  const [row] = await db.query<{ balance: string }>('SELECT balance::text AS balance FROM ledger_accounts WHERE user_id = $1 AND currency = $2', [
    userId,
    currency,
  ]);
  return row ? BigInt(row.balance) : 0n;
}

export type TLedgerLine = { transaction_id: string; at: Date; kind: string; memo: string | null; account: 'user' | 'hold'; currency: string; amount: string };

/** The latest postings on a user's wallets and hold accounts, newest first (the back office's view). */
export async function userLedgerHistory(db: Queryable, userId: string, limit: number): Promise<TLedgerLine[]> {
  return db.query<TLedgerLine>(
    `SELECT t.id::text AS transaction_id, t.created_at AS at, t.kind, t.memo, a.kind AS account, p.currency, p.amount::text AS amount
       FROM ledger_accounts a JOIN postings p ON p.account_id = a.id JOIN ledger_transactions t ON t.id = p.transaction_id
      WHERE (a.kind = 'user' AND a.user_id = $1) OR (a.kind = 'hold' AND a.holder_id = $1)
      ORDER BY p.id DESC LIMIT $2`,
    [userId, limit],
  );
}
