import type { Queryable } from '../../db/index.ts';
import { registeredPaymentProviders } from './providers.ts';

/*
 * Reconciliation: what each provider says it did against what our ledger
 * says, for a period, every difference listed.
 *
 * The providers' records: for payouts, each provider's book (its adapter's payoutBook: what it
 * was asked to pay and what became of it); for payments (deposits), the events they
 * signed and sent us (payment_webhooks with a valid signature: the provider's word, whatever
 * we did with it). Our side: the payments and withdrawals and their ledger transactions on the
 * provider's clearing account.
 *
 * Differences, per item:
 *   payout_missing_in_ledger   the provider paid out, our withdrawal is not paid
 *   amount_mismatch            both say paid, the clearing posting has another amount than the provider's
 *   currency_mismatch          the provider's payout has another currency than our withdrawal
 *   payout_unknown_to_provider our withdrawal is paid, the provider has no succeeded payout for it
 *   payout_failed_not_released the provider failed it, our withdrawal did not end failed
 *   deposit_not_credited       the provider reported a payment paid, no credit to the clearing account
 *   deposit_unreported         we credited a deposit the provider never reported paid
 *   clearing_mismatch          (all time, per provider and currency) the clearing account's balance
 *                              differs from payouts succeeded − payments paid as the provider reports
 */

export type TDifference = { kind: string; provider: string; currency: string; reference: string; provider_amount: string | null; ledger_amount: string | null };

export type TReconciliation = {
  from: string;
  to: string;
  ok: boolean;
  /** Per provider and currency, within the period (minor units). */
  totals: Array<{ provider: string; currency: string; payouts_provider: string; payouts_ledger: string; deposits_provider: string; deposits_ledger: string }>;
  /** Per provider and currency, all time: the clearing account and what the provider's reports make of it. */
  clearing: Array<{ provider: string; currency: string; balance: string; expected: string }>;
  differences: TDifference[];
  /** Per UTC day and clearing account within the period: its postings up and down (minor units). */
  daily: Array<{ day: string; provider: string; currency: string; transactions: number; increase: string; decrease: string; net: string }>;
};

/** Every registered provider's book of payouts as one relation; an empty one when none keeps a book. */
function payoutBooks(): string {
  const books = [...registeredPaymentProviders()].flatMap((provider) => (provider.payoutBook ? [provider.payoutBook] : []));
  if (books.length) return `(${books.join(' UNION ALL ')})`;
  return '(SELECT NULL::text AS provider, NULL::text AS reference, NULL::text AS currency, NULL::numeric AS amount, NULL::text AS state, NULL::timestamptz AS settled_at WHERE false)';
}

/** The whole report, or one provider's (`provider`): the CLI and /ops/reconciliation read the same. */
export async function reconcile(db: Queryable, from: Date, to: Date, provider?: string): Promise<TReconciliation> {
  const all = await reconcileAll(db, from, to);
  if (provider === undefined) return all;
  const mine = <T extends { provider: string }>(rows: T[]) => rows.filter((row) => row.provider === provider);
  const differences = mine(all.differences);
  return { ...all, ok: differences.length === 0, totals: mine(all.totals), clearing: mine(all.clearing), differences, daily: mine(all.daily) };
}

async function reconcileAll(db: Queryable, from: Date, to: Date): Promise<TReconciliation> {
  const period = [from, to];
  const book = payoutBooks();
  const differences: TDifference[] = [];

  // Payouts: the provider's book against our withdrawals and the ledger's clearing postings.
  const payouts = await db.query<TDifference>(
    `WITH p AS (
       SELECT provider, reference, currency, amount, state FROM ${book} b
       WHERE state <> 'pending' AND settled_at >= $1 AND settled_at < $2
     ), w AS (
       SELECT w.public_id::text AS reference, w.provider, w.currency, w.state,
              (SELECT sum(po.amount) FROM holds h JOIN postings po ON po.transaction_id = h.final_transaction_id
                 JOIN ledger_accounts a ON a.id = po.account_id AND a.kind = 'clearing' AND a.name = w.provider
               WHERE h.id = w.hold_id) AS cleared
       FROM withdrawals w WHERE w.finished_at >= $1 AND w.finished_at < $2 AND w.state IN ('paid', 'failed')
     )
     SELECT CASE
              WHEN p.reference IS NOT NULL AND w.reference IS NOT NULL AND p.currency <> w.currency THEN 'currency_mismatch'
              WHEN p.state = 'succeeded' AND w.state = 'paid' AND w.cleared IS DISTINCT FROM p.amount THEN 'amount_mismatch'
              WHEN p.state = 'succeeded' AND (w.reference IS NULL OR w.state <> 'paid') THEN 'payout_missing_in_ledger'
              WHEN p.state = 'failed' AND (w.reference IS NULL OR w.state <> 'failed') THEN 'payout_failed_not_released'
              WHEN p.reference IS NULL AND w.state = 'paid' THEN 'payout_unknown_to_provider'
            END AS kind,
            coalesce(p.provider, w.provider) AS provider, coalesce(p.currency, w.currency) AS currency,
            coalesce(p.reference, w.reference) AS reference,
            CASE WHEN p.state = 'succeeded' THEN p.amount::text END AS provider_amount, w.cleared::text AS ledger_amount
     FROM p FULL JOIN w ON w.reference = p.reference AND w.provider = p.provider`,
    period,
  );
  differences.push(...payouts.filter((row) => row.kind));

  // Deposits: the paid events the provider signed against the credits from its clearing account.
  const deposits = await db.query<TDifference>(
    `WITH r AS (
       SELECT DISTINCT ON (wh.provider, (convert_from(wh.raw_body, 'UTF8')::jsonb ->> 'payment_id'))
              wh.provider, convert_from(wh.raw_body, 'UTF8')::jsonb ->> 'payment_id' AS reference
       FROM payment_webhooks wh
       WHERE wh.signature_valid AND wh.event_id IS NOT NULL AND wh.received_at >= $1 AND wh.received_at < $2
         AND convert_from(wh.raw_body, 'UTF8')::jsonb ->> 'type' = 'payment.paid'
     ), c AS (
       SELECT p.public_id::text AS reference, p.provider, p.currency, p.amount,
              -(SELECT sum(po.amount) FROM postings po JOIN ledger_accounts a ON a.id = po.account_id AND a.kind = 'clearing' AND a.name = p.provider
                WHERE po.transaction_id = p.ledger_transaction_id) AS cleared
       FROM payments p WHERE p.ledger_transaction_id IS NOT NULL AND p.credited_at >= $1 AND p.credited_at < $2
     )
     SELECT CASE WHEN c.reference IS NULL THEN 'deposit_not_credited' WHEN r.reference IS NULL THEN 'deposit_unreported' END AS kind,
            coalesce(r.provider, c.provider) AS provider, coalesce(c.currency, '') AS currency, coalesce(r.reference, c.reference) AS reference,
            NULL AS provider_amount, c.cleared::text AS ledger_amount
     FROM r FULL JOIN c ON c.reference = r.reference AND c.provider = r.provider`,
    period,
  );
  differences.push(...deposits.filter((row) => row.kind));

  const totals = await db.query<TReconciliation['totals'][number]>(
    `WITH k AS (
       SELECT provider, currency FROM ${book} b UNION SELECT provider, currency FROM withdrawals UNION SELECT provider, currency FROM payments
     )
     SELECT k.provider, k.currency,
       (SELECT coalesce(sum(amount), 0) FROM ${book} s WHERE s.provider = k.provider AND s.currency = k.currency AND s.state = 'succeeded'
          AND s.settled_at >= $1 AND s.settled_at < $2)::text AS payouts_provider,
       (SELECT coalesce(sum(w.receive), 0) FROM withdrawals w WHERE w.provider = k.provider AND w.currency = k.currency AND w.state = 'paid'
          AND w.finished_at >= $1 AND w.finished_at < $2)::text AS payouts_ledger,
       (SELECT coalesce(sum(p.amount), 0) FROM payments p WHERE p.provider = k.provider AND p.currency = k.currency
          AND p.public_id::text IN (SELECT convert_from(wh.raw_body, 'UTF8')::jsonb ->> 'payment_id' FROM payment_webhooks wh
            WHERE wh.provider = k.provider AND wh.signature_valid AND wh.event_id IS NOT NULL AND wh.received_at >= $1 AND wh.received_at < $2
              AND convert_from(wh.raw_body, 'UTF8')::jsonb ->> 'type' = 'payment.paid'))::text AS deposits_provider,
       (SELECT coalesce(sum(p.amount), 0) FROM payments p WHERE p.provider = k.provider AND p.currency = k.currency
          AND p.ledger_transaction_id IS NOT NULL AND p.credited_at >= $1 AND p.credited_at < $2)::text AS deposits_ledger
     FROM k ORDER BY k.provider, k.currency`,
    period,
  );

  // The clearing accounts, all time: payouts succeeded − payments paid, as the providers report them.
  const clearing = await db.query<TReconciliation['clearing'][number]>(
    `SELECT a.name AS provider, a.currency, a.balance::text AS balance,
       ((SELECT coalesce(sum(s.amount), 0) FROM ${book} s WHERE s.provider = a.name AND s.currency = a.currency AND s.state = 'succeeded')
        - (SELECT coalesce(sum(p.amount), 0) FROM payments p WHERE p.provider = a.name AND p.currency = a.currency
             AND p.public_id::text IN (SELECT convert_from(wh.raw_body, 'UTF8')::jsonb ->> 'payment_id' FROM payment_webhooks wh
               WHERE wh.provider = a.name AND wh.signature_valid AND wh.event_id IS NOT NULL AND convert_from(wh.raw_body, 'UTF8')::jsonb ->> 'type' = 'payment.paid')))::text AS expected
     FROM ledger_accounts a WHERE a.kind = 'clearing' ORDER BY a.name, a.currency`,
  );
  for (const row of clearing) {
    if (row.balance !== row.expected) {
      differences.push({
        kind: 'clearing_mismatch',
        provider: row.provider,
        currency: row.currency,
        reference: '',
        provider_amount: row.expected,
        ledger_amount: row.balance,
      });
    }
  }
  const daily = await db.query<TReconciliation['daily'][number]>(
    `SELECT to_char(t.created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD') AS day, a.name AS provider, a.currency,
            count(DISTINCT t.id)::int AS transactions,
            coalesce(sum(po.amount) FILTER (WHERE po.amount > 0), 0)::text AS increase,
            coalesce(-sum(po.amount) FILTER (WHERE po.amount < 0), 0)::text AS decrease,
            sum(po.amount)::text AS net
       FROM postings po JOIN ledger_accounts a ON a.id = po.account_id AND a.kind = 'clearing'
       JOIN ledger_transactions t ON t.id = po.transaction_id
      WHERE t.created_at >= $1 AND t.created_at < $2
      GROUP BY 1, 2, 3 ORDER BY 1, 2, 3`,
    period,
  );
  return { from: from.toISOString(), to: to.toISOString(), ok: differences.length === 0, totals, clearing, differences, daily };
}
