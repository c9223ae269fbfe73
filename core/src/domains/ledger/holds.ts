import type { Queryable } from '../../db/index.ts';
import { fromDbError, moneyError } from '../../money-errors.ts';
import { currencies, precisionLookup, type TCurrency } from '../currencies/service.ts';
import { accountSql, sqlParams, type TAccount } from './posting.ts';

/**
 * Holds: money a user keeps but may not spend while a request waits for it (a withdrawal, a
 * card order). Each is a ledger movement between the user's available account and their held
 * account (ledger kind 'hold', migration 025), made by the SQL functions
 * core/sql/functions/ledger_hold_{place,release,capture}.sql, and a `holds` row that ends once:
 * released (back to available) or captured (to house accounts).
 *
 * Every function here runs in the CALLER's transaction, so the caller's state change (the
 * withdrawal becoming `cancelled`, the card order `issued`) and the money move commit together.
 * Lock order: the caller's own row (withdrawal, order), then the hold row, then the ledger
 * accounts in ascending id order (ledger_post).
 * Refusals are AppErrors: `insufficient_funds` (with balance and needed), `hold_not_held`
 * (released or captured already), `hold_not_found`. Their amounts are formatted with the
 * currencies read first (a refusal aborts the transaction); a caller that holds them already
 * passes them as `currencies`, which saves that read.
 */

export type THoldState = 'held' | 'released' | 'captured';

export type THold = {
  id: string;
  user_id: string;
  currency: string;
  /** minor units */
  amount: string;
  purpose: string;
  state: THoldState;
  place_transaction_id: string;
  final_transaction_id: string | null;
};

/**
 * Where a captured hold goes: house accounts only, named by kind (in the hold's currency; fees
 * to the user's shard of the fee account) or as an account of posting.ts.
 */
export type THoldDestination =
  | { kind: 'clearing'; name: string; amount: bigint }
  | { kind: 'fees'; amount: bigint }
  | { kind: 'card_fees'; name?: string; amount: bigint }
  | { account: TAccount; amount: bigint };

/** The currencies a caller has read already (saves the read before a refusal can happen). */
type TKnown = { currencies?: Map<string, TCurrency> };

const HOLD_COLUMNS = `id::text AS id, user_id::text AS user_id, currency, amount::text AS amount, purpose, state,
  place_transaction_id::text AS place_transaction_id, final_transaction_id::text AS final_transaction_id`;

/**
 * Available → held: one ledger transaction (kind 'hold') and a `holds` row. `purpose` says what
 * waits for it ('withdrawal:42'); amount in minor units, above zero. Refuses an overdraft.
 */
export async function placeHold(
  tx: Queryable,
  input: { userId: string; currency: string; amount: bigint; purpose: string; actor?: string } & TKnown,
  field = 'amount',
): Promise<THold> {
  return inTransaction(
    tx,
    async () => {
      const [placed] = await tx.query<{ id: string }>('SELECT ledger_hold_place($1, $2, $3, $4, $5)::text AS id', [
        input.userId,
        input.currency,
        input.amount.toString(),
        input.purpose,
        input.actor ?? null,
      ]);
      return (await getHold(tx, placed!.id))!;
    },
    input,
    field,
  );
}

/** Held → available, the whole hold, once. Returns the ledger transaction id. */
export async function releaseHold(tx: Queryable, holdId: string, input: { memo?: string; actor?: string } & TKnown = {}): Promise<string> {
  return inTransaction(
    tx,
    async () => {
      const [row] = await tx.query<{ tx: string }>('SELECT ledger_hold_release($1, $2, $3)::text AS tx', [holdId, input.memo ?? null, input.actor ?? null]);
      return row!.tx;
    },
    input,
  );
}

/**
 * Held → house accounts, the whole hold split between `destinations` (their amounts sum to the
 * hold's), once, as one ledger transaction of `kind` (the purpose's: 'withdrawal', 'card').
 * Returns the ledger transaction id.
 */
export async function captureHold(
  tx: Queryable,
  holdId: string,
  input: { kind: 'withdrawal' | 'card'; destinations: THoldDestination[]; memo?: string; actor?: string } & TKnown,
): Promise<string> {
  const { values, param } = sqlParams();
  const hold = param(holdId);
  // Destinations named by kind take the hold's currency and user from its row, in the same statement.
  const accounts = input.destinations.map((destination) => {
    if ('account' in destination) return accountSql(destination.account, param);
    if (destination.kind === 'fees') return `ledger_house_account('fees', h.currency, h.user_id)`;
    return `ledger_system_account(${param(destination.kind)}, h.currency, ${param(destination.name ?? '')})`;
  });
  const amounts = param(input.destinations.map((destination) => destination.amount.toString()));
  const captured = await inTransaction(
    tx,
    () =>
      tx.query<{ tx: string }>(
        `SELECT ledger_hold_capture(h.id, ARRAY[${accounts.join(', ')}]::bigint[], ${amounts}::numeric[], ${param(input.kind)}, ${param(input.memo ?? null)},
           ${param(input.actor ?? null)})::text AS tx
         FROM holds h WHERE h.id = ${hold}`,
        values,
      ),
    input,
  );
  if (!captured[0]) throw moneyError('hold_not_found', { hold: holdId });
  return captured[0].tx;
}

/**
 * Runs SQL that may raise ledger refusals inside the caller's transaction, turning them into
 * AppErrors. The currencies (for amounts in messages) are read first: after a refusal the
 * transaction is aborted and can answer nothing more.
 */
async function inTransaction<T>(tx: Queryable, work: () => Promise<T>, known: TKnown, field?: string): Promise<T> {
  const precisionOf = precisionLookup(known.currencies ?? (await currencies(tx)));
  try {
    return await work();
  } catch (err) {
    throw fromDbError(err, precisionOf, field);
  }
}

/** One hold, or undefined. */
export async function getHold(db: Queryable, holdId: string): Promise<THold | undefined> {
  const [row] = await db.query<THold>(`SELECT ${HOLD_COLUMNS} FROM holds WHERE id = $1`, [holdId]);
  return row;
}

/** A user's held balance in a currency (minor units): the sum of their holds still held. */
export async function heldBalance(db: Queryable, userId: string, currency: string): Promise<bigint> {
  const [row] = await db.query<{ balance: string }>('SELECT balance::text AS balance FROM ledger_accounts WHERE holder_id = $1 AND currency = $2', [
    userId,
    currency,
  ]);
  return row ? BigInt(row.balance) : 0n;
}
