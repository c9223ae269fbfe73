import type { Queryable } from '../../db/index.ts';

/*
 * The one door to the ledger's SQL (with holds.ts, service.ts and invariants.ts): no other
 * TypeScript names a `ledger_*` function (core/test/domains/ledger/door.test.ts). A domain
 * names its accounts with the helpers below and posts, locks or resolves them here; each call
 * is one statement, the accounts resolved (and created on first use) inside it, so a posting
 * costs the same round trip as the SQL its caller used to write by hand.
 */

/** A ledger account, resolved inside the statement that uses it. */
export type TAccount =
  | { of: 'user'; user: string; currency: string }
  | { of: 'hold'; user: string; currency: string }
  | { of: 'system'; kind: string; currency: string; name: string }
  | { of: 'house'; kind: THouseKind; currency: string; user: string }
  | { of: 'id'; id: string };

/** House accounts split in shards by user (ledger_house_account). */
export type THouseKind = 'fees' | 'liquidity' | 'card_fees';

/** A user's available balance in a currency. */
export const userAccount = (user: string, currency: string): TAccount => ({ of: 'user', user, currency });
/** A user's held balance in a currency (holds.ts). */
export const holdAccount = (user: string, currency: string): TAccount => ({ of: 'hold', user, currency });
/** A house account by kind and name: clearing of a payment system, adjustment, a card's own account... */
export const systemAccount = (kind: string, currency: string, name = ''): TAccount => ({ of: 'system', kind, currency, name });
/** The shard of a house account that serves this user's movements. */
export const houseAccount = (kind: THouseKind, currency: string, user: string): TAccount => ({ of: 'house', kind, currency, user });
/** An account whose id is already known. */
export const accountById = (id: string): TAccount => ({ of: 'id', id });

/** Adds a value to a statement's parameters and answers its placeholder ($1, $2...). */
export type TParam = (value: unknown) => string;

/** The parameters of one statement, numbered as they are added. */
export function sqlParams(): { values: unknown[]; param: TParam } {
  const values: unknown[] = [];
  return { values, param: (value) => `$${values.push(value)}` };
}

/** The SQL expression of an account's id (bigint), for a statement of the caller's. */
export function accountSql(account: TAccount, param: TParam): string {
  switch (account.of) {
    case 'user':
      return `ledger_user_account(${param(account.user)}, ${param(account.currency)})`;
    case 'hold':
      return `ledger_hold_account(${param(account.user)}, ${param(account.currency)})`;
    case 'system':
      return `ledger_system_account(${param(account.kind)}, ${param(account.currency)}, ${param(account.name)})`;
    case 'house':
      return `ledger_house_account(${param(account.kind)}, ${param(account.currency)}, ${param(account.user)})`;
    case 'id':
      return `${param(account.id)}::bigint`;
  }
}

/** The SQL expression of accounts' ids (bigint[]), in order. */
export function accountsSql(accounts: readonly TAccount[], param: TParam): string {
  return `ARRAY[${accounts.map((account) => accountSql(account, param)).join(', ')}]::bigint[]`;
}

export type TPosting = { account: TAccount; amount: bigint };

export type TTransaction = {
  /** ledger_transactions.kind: 'transfer', 'card', 'purchase', 'adjustment'... */
  kind: string;
  /** Amounts in minor units that sum to zero per currency; zero ones are dropped. */
  postings: readonly TPosting[];
  memo?: string | null;
  actor?: string | null;
};

/**
 * Posts one ledger transaction in the caller's database transaction (ledger_post: locks in
 * ascending id order, refuses an overdraft with `insufficient_funds`). One statement. Returns
 * the ledger transaction id. Refusals come back as database errors: the caller's ledgerCall (or
 * its own handling) turns them into AppErrors.
 */
export async function postTransaction(tx: Queryable, transaction: TTransaction): Promise<string> {
  const { values, param } = sqlParams();
  const accounts = accountsSql(
    transaction.postings.map((posting) => posting.account),
    param,
  );
  const amounts = `${param(transaction.postings.map((posting) => posting.amount.toString()))}::numeric[]`;
  const [row] = await tx.query<{ tx: string }>(
    `SELECT ledger_post(${param(transaction.kind)}, ${accounts}, ${amounts}, ${param(transaction.memo ?? null)}, ${param(transaction.actor ?? null)})::text AS tx`,
    values,
  );
  return row!.tx;
}

/**
 * Locks accounts (ascending id, ledger_lock) for a writer that touches them in several steps,
 * so two writers never wait on each other in a cycle. `more` adds a bigint[] expression of
 * accounts another function will touch (referral_accounts). One statement.
 */
export async function lockAccounts(tx: Queryable, accounts: readonly TAccount[], more?: (param: TParam) => string): Promise<void> {
  const { values, param } = sqlParams();
  const list = accountsSql(accounts, param);
  await tx.query(`SELECT ledger_lock(${more ? `${list} || ${more(param)}` : list})`, values);
}

/** The ids of accounts (created on first use), in order. One statement. */
export async function resolveAccounts(db: Queryable, accounts: readonly TAccount[]): Promise<string[]> {
  const { values, param } = sqlParams();
  const [row] = await db.query<{ ids: string[] }>(`SELECT ${accountsSql(accounts, param)}::text[] AS ids`, values);
  return row!.ids;
}
