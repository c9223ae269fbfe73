import type { Db, Queryable } from '../../db/index.ts';
import { withRetry } from '../../money-errors.ts';
import { accountById, houseAccount, lockAccounts, postTransaction, resolveAccounts, userAccount } from '../ledger/posting.ts';
import { addActivity } from './store.ts';

/*
 * The monthly fee: once per card and calendar month (UTC), for cards that are active or frozen
 * and were issued before the month began (the issue fee covers the month of issue). It is taken
 * from the user's wallet in the product's fee currency into the card-fees account.
 *
 * Any number of cores may run the job at once: each card is charged in its own transaction that
 * locks the card row and then inserts (card, month) into card_monthly_fees; a second run waits
 * on the lock, then finds the month taken and moves nothing. A wallet that lacks the fee leaves
 * the month `unpaid` (no money moves); later runs take it once the wallet has it.
 */

export function feePeriod(now: Date): string {
  return now.toISOString().slice(0, 7);
}

function periodStart(now: Date): Date {
  return new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), 1));
}

type TFeeCard = { id: string; public_id: string; user_id: string; fee_currency: string; monthly_fee: string };

/** Takes the fee if the wallet has it (under the lock of both accounts). Returns the ledger transaction or null. */
async function takeFee(tx: Queryable, card: TFeeCard, period: string): Promise<string | null> {
  const [walletId, feesId] = await resolveAccounts(tx, [
    userAccount(card.user_id, card.fee_currency),
    houseAccount('card_fees', card.fee_currency, card.user_id),
  ]);
  const [wallet, fees] = [accountById(walletId!), accountById(feesId!)];
  // With the referral accrual's accounts (the fee earns the card owner's referrer their share).
  await lockAccounts(tx, [wallet, fees], (param) => `referral_accounts(${param(card.user_id)}, ${param(card.fee_currency)})`);
  const [balance] = await tx.query<{ balance: string }>('SELECT balance::text AS balance FROM ledger_accounts WHERE id = $1', [walletId]);
  const fee = BigInt(card.monthly_fee);
  if (BigInt(balance!.balance) < fee) return null;
  const posted = await postTransaction(tx, {
    kind: 'card',
    postings: [
      { account: wallet, amount: -fee },
      { account: fees, amount: fee },
    ],
    memo: `card monthly fee ${period} ${card.public_id}`,
    actor: 'system',
  });
  await tx.query(`SELECT referral_accrue($1, $2, $3, $4, 'card', $5)`, [card.user_id, card.fee_currency, card.monthly_fee, feesId, posted]);
  return posted;
}

const FEE_CARD_COLUMNS = `c.id::text AS id, c.public_id::text AS public_id, c.user_id::text AS user_id, c.fee_currency, c.monthly_fee::text AS monthly_fee`;

/** Charges this month's fee of every billable card, and retries unpaid months. Returns counts. */
export async function chargeMonthlyFees(db: Db, now: Date): Promise<{ charged: number; unpaid: number; settled: number }> {
  const period = feePeriod(now);
  const counts = { charged: 0, unpaid: 0, settled: 0 };
  const due = await db.query<{ id: string }>(
    `SELECT c.id::text AS id FROM cards c
     WHERE c.status IN ('active', 'frozen') AND c.monthly_fee > 0 AND c.issued_at < $2
       AND NOT EXISTS (SELECT 1 FROM card_monthly_fees f WHERE f.card_id = c.id AND f.period = $1)
     ORDER BY c.id LIMIT 1000`,
    [period, periodStart(now)],
  );
  for (const { id } of due) {
    const outcome = await withRetry(() =>
      db.transaction(async (tx) => {
        const [card] = await tx.query<TFeeCard>(`SELECT ${FEE_CARD_COLUMNS} FROM cards c WHERE c.id = $1 AND c.status IN ('active', 'frozen') FOR UPDATE`, [
          id,
        ]);
        if (!card) return null;
        const [claimed] = await tx.query(
          `INSERT INTO card_monthly_fees (card_id, period, amount, currency, state, created_at) VALUES ($1, $2, $3, $4, 'unpaid', $5)
           ON CONFLICT (card_id, period) DO NOTHING RETURNING 1`,
          [id, period, card.monthly_fee, card.fee_currency, now],
        );
        if (!claimed) return null;
        const paid = await takeFee(tx, card, period);
        if (paid) {
          await tx.query(`UPDATE card_monthly_fees SET state = 'paid', ledger_transaction_id = $3, paid_at = $4 WHERE card_id = $1 AND period = $2`, [
            id,
            period,
            paid,
            now,
          ]);
        }
        await addActivity(tx, { row_id: id }, paid ? 'monthly_fee' : 'monthly_fee_unpaid', 'system', now, {
          amount: card.monthly_fee,
          currency: card.fee_currency,
          transactionId: paid,
        });
        return paid ? 'charged' : 'unpaid';
      }),
    );
    if (outcome) counts[outcome]++;
  }

  // Months left unpaid: taken once the wallet has the fee (each row locked by one run at a time).
  const unpaid = await db.query<{ card_id: string; period: string }>(
    `SELECT card_id::text AS card_id, period FROM card_monthly_fees WHERE state = 'unpaid' ORDER BY card_id, period LIMIT 1000`,
  );
  for (const row of unpaid) {
    const settled = await withRetry(() =>
      db.transaction(async (tx) => {
        const [fee] = await tx.query<TFeeCard & { amount: string }>(
          `SELECT ${FEE_CARD_COLUMNS}, f.amount::text AS amount FROM card_monthly_fees f JOIN cards c ON c.id = f.card_id
           WHERE f.card_id = $1 AND f.period = $2 AND f.state = 'unpaid' FOR UPDATE OF f SKIP LOCKED`,
          [row.card_id, row.period],
        );
        if (!fee) return false;
        const paid = await takeFee(tx, { ...fee, monthly_fee: fee.amount }, row.period);
        if (!paid) return false;
        await tx.query(`UPDATE card_monthly_fees SET state = 'paid', ledger_transaction_id = $3, paid_at = $4 WHERE card_id = $1 AND period = $2`, [
          row.card_id,
          row.period,
          paid,
          now,
        ]);
        await addActivity(tx, { row_id: row.card_id }, 'monthly_fee', 'system', now, { amount: fee.amount, currency: fee.fee_currency, transactionId: paid });
        return true;
      }),
    );
    if (settled) counts.settled++;
  }
  return counts;
}
