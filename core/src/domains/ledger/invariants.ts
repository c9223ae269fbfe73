import type { Queryable } from '../../db/index.ts';

export type TViolation = { rule: string; detail: string };
export type TLedgerReport = {
  ok: boolean;
  violations: TViolation[];
  /** Per currency: sum of all balances (double entry: always 0) and of all postings. */
  sums: Record<string, { balances: string; postings: string }>;
  counts: { accounts: number; transactions: number; postings: number };
};

const LIMIT = 20;

/**
 * The ledger's rules, checked from the stored data alone (tests, the bench, `ledger:check`):
 *  1. per currency, all balances sum to zero, and all postings too (double entry);
 *  2. no user balance is negative;
 *  3. every ledger transaction has two or more postings summing to zero per currency;
 *  4. every stored balance equals the sum of its account's postings;
 *  5. no idempotency key was applied twice (transfers, single exchanges and exchange-all batches
 *     per user and key, within the keys' retention of 48 hours);
 *  6. every deposit transaction belongs to one credited deposit and gives exactly its amount less
 *     its fee to its user (so no provider event credited twice);
 *  7. holds: every held balance (ledger kind 'hold') equals the sum of its user's holds still
 *     held in that currency; each hold's placing moved exactly its amount from its user's
 *     available balance to their held one, and an ended hold's final transaction moved exactly
 *     its amount out of it (back to the same user's available balance when released);
 *  8. cards: no card account (ledger kind 'card') below zero; each belongs to exactly one issued
 *     card of its currency (name 'card:<public id>') and a closed card's is empty; each card's
 *     issue fee was captured from its own hold into card fees with exactly the fee, and a refund
 *     (failed order) gave exactly the fee back to its user; a cancelled order's hold was released;
 *  9. referral: every 'referral' transaction is one accrual's or one settlement's; an accrual's
 *     credits the referral liability with exactly its amount; a reversed accrual's reversal is
 *     of its own transaction, and every reversal of a referral transaction is an accrual's; a
 *     settlement's moves exactly its amount from the liability to its referrer's wallet, its
 *     accruals (its referrer's, its currency) sum to that amount plus what it clawed back, and
 *     its clawbacks (reversed paid accruals) sum to that; per currency the liability holds
 *     exactly the unsettled, unreversed accruals less the clawbacks not yet taken.
 */
export async function checkLedger(db: Queryable): Promise<TLedgerReport> {
  const violations: TViolation[] = [];
  const add = (rule: string, rows: Record<string, unknown>[]) => {
    for (const row of rows.slice(0, LIMIT)) violations.push({ rule, detail: JSON.stringify(row) });
  };

  const balances = await db.query<{ currency: string; total: string }>(
    'SELECT currency, sum(balance)::text AS total FROM ledger_accounts GROUP BY currency ORDER BY currency',
  );
  const postings = await db.query<{ currency: string; total: string }>(
    'SELECT currency, sum(amount)::text AS total FROM postings GROUP BY currency ORDER BY currency',
  );
  const sums: TLedgerReport['sums'] = {};
  for (const row of balances) sums[row.currency] = { balances: row.total, postings: '0' };
  for (const row of postings) sums[row.currency] = { balances: sums[row.currency]?.balances ?? '0', postings: row.total };
  add(
    'currency balances sum to zero',
    balances.filter((row) => BigInt(row.total) !== 0n),
  );
  add(
    'currency postings sum to zero',
    postings.filter((row) => BigInt(row.total) !== 0n),
  );

  add(
    'no negative user balance',
    await db.query(
      `SELECT id, kind, coalesce(user_id, holder_id) AS user_id, currency, balance::text FROM ledger_accounts
       WHERE kind IN ('user', 'hold') AND balance < 0 LIMIT ${LIMIT}`,
    ),
  );
  add(
    'no user account whose postings sum below zero',
    await db.query(
      `SELECT a.id, a.currency, sum(p.amount)::text AS postings FROM ledger_accounts a JOIN postings p ON p.account_id = a.id
       WHERE a.kind IN ('user', 'hold') GROUP BY a.id, a.currency HAVING sum(p.amount) < 0 LIMIT ${LIMIT}`,
    ),
  );
  add(
    'transactions sum to zero per currency',
    await db.query(
      `SELECT transaction_id, currency, sum(amount)::text AS total FROM postings GROUP BY transaction_id, currency
       HAVING sum(amount) <> 0 LIMIT ${LIMIT}`,
    ),
  );
  add(
    'transactions have two or more postings',
    await db.query(
      `SELECT t.id, count(p.id)::int AS postings FROM ledger_transactions t LEFT JOIN postings p ON p.transaction_id = t.id
       GROUP BY t.id HAVING count(p.id) < 2 LIMIT ${LIMIT}`,
    ),
  );
  add(
    'stored balance equals the sum of postings',
    await db.query(
      `SELECT a.id, a.currency, a.balance::text AS balance, coalesce(p.total, 0)::text AS postings
       FROM ledger_accounts a LEFT JOIN (SELECT account_id, sum(amount) AS total FROM postings GROUP BY account_id) p ON p.account_id = a.id
       WHERE a.balance <> coalesce(p.total, 0) LIMIT ${LIMIT}`,
    ),
  );
  add(
    'each idempotency key applied once',
    await db.query(
      `SELECT user_id, idempotency_key, count(*)::int AS applied FROM (
         SELECT sender_id AS user_id, idempotency_key FROM transfers WHERE idempotency_key IS NOT NULL AND created_at > now() - interval '48 hours'
         UNION ALL
         SELECT user_id, idempotency_key FROM exchanges WHERE idempotency_key IS NOT NULL AND batch_id IS NULL AND created_at > now() - interval '48 hours'
         UNION ALL
         SELECT user_id, idempotency_key FROM exchange_batches WHERE idempotency_key IS NOT NULL AND created_at > now() - interval '48 hours'
       ) applied GROUP BY user_id, idempotency_key HAVING count(*) > 1 LIMIT ${LIMIT}`,
    ),
  );

  add(
    'each deposit credited once, with its amount less its fee, to its user',
    await db.query(
      `SELECT t.id AS transaction_id, p.id AS payment_id, p.amount::text AS amount, p.fee::text AS fee, sum(po.amount)::text AS credited
       FROM ledger_transactions t
       LEFT JOIN payments p ON p.ledger_transaction_id = t.id AND p.direction = 'deposit'
       LEFT JOIN postings po ON po.transaction_id = t.id AND po.account_id = (SELECT id FROM ledger_accounts WHERE user_id = p.user_id AND currency = p.currency)
       WHERE t.kind = 'deposit'
       GROUP BY t.id, p.id, p.amount, p.fee HAVING p.id IS NULL OR sum(po.amount) IS DISTINCT FROM p.amount - p.fee LIMIT ${LIMIT}`,
    ),
  );

  add(
    'each held balance equals its open holds',
    await db.query(
      `SELECT a.id AS account_id, coalesce(a.holder_id, o.user_id) AS user_id, coalesce(a.currency, o.currency) AS currency,
              coalesce(a.balance, 0)::text AS held, coalesce(o.open, 0)::text AS open_holds
       FROM (SELECT id, holder_id, currency, balance FROM ledger_accounts WHERE kind = 'hold') a
       FULL JOIN (SELECT user_id, currency, sum(amount) AS open FROM holds WHERE state = 'held' GROUP BY user_id, currency) o
         ON o.user_id = a.holder_id AND o.currency = a.currency
       WHERE coalesce(a.balance, 0) <> coalesce(o.open, 0) LIMIT ${LIMIT}`,
    ),
  );
  add(
    'each hold placed and ended with its amount',
    await db.query(
      `SELECT h.id AS hold_id, h.state, h.amount::text AS amount, m.placed::text AS placed, m.taken::text AS taken, m.ended::text AS ended, m.returned::text AS returned
       FROM holds h
       CROSS JOIN LATERAL (
         SELECT
           (SELECT sum(p.amount) FROM postings p JOIN ledger_accounts a ON a.id = p.account_id
             WHERE p.transaction_id = h.place_transaction_id AND a.kind = 'hold' AND a.holder_id = h.user_id AND a.currency = h.currency) AS placed,
           (SELECT sum(p.amount) FROM postings p JOIN ledger_accounts a ON a.id = p.account_id
             WHERE p.transaction_id = h.place_transaction_id AND a.kind = 'user' AND a.user_id = h.user_id AND a.currency = h.currency) AS taken,
           (SELECT sum(p.amount) FROM postings p JOIN ledger_accounts a ON a.id = p.account_id
             WHERE p.transaction_id = h.final_transaction_id AND a.kind = 'hold' AND a.holder_id = h.user_id AND a.currency = h.currency) AS ended,
           (SELECT sum(p.amount) FROM postings p JOIN ledger_accounts a ON a.id = p.account_id
             WHERE p.transaction_id = h.final_transaction_id AND a.kind = 'user' AND a.user_id = h.user_id AND a.currency = h.currency) AS returned
       ) m
       WHERE m.placed IS DISTINCT FROM h.amount OR m.taken IS DISTINCT FROM -h.amount
          OR (h.state = 'held' AND h.final_transaction_id IS NOT NULL)
          OR (h.state <> 'held' AND m.ended IS DISTINCT FROM -h.amount)
          OR (h.state = 'released' AND m.returned IS DISTINCT FROM h.amount)
          OR (h.state = 'captured' AND m.returned IS NOT NULL)
       LIMIT ${LIMIT}`,
    ),
  );

  add(
    'each referral transaction is one accrual or one settlement',
    await db.query(
      `SELECT t.id AS transaction_id,
              (SELECT count(*) FROM referral_accruals a WHERE a.transaction_id = t.id)::int AS accruals,
              (SELECT count(*) FROM referral_settlements s WHERE s.transaction_id = t.id)::int AS settlements
       FROM ledger_transactions t WHERE t.kind = 'referral' AND t.reverses IS NULL
       AND (SELECT count(*) FROM referral_accruals a WHERE a.transaction_id = t.id) + (SELECT count(*) FROM referral_settlements s WHERE s.transaction_id = t.id) <> 1
       LIMIT ${LIMIT}`,
    ),
  );
  add(
    'each referral accrual credits the liability with its amount',
    await db.query(
      `SELECT a.id AS accrual_id, a.amount::text AS amount, coalesce(sum(p.amount), 0)::text AS credited
       FROM referral_accruals a
       LEFT JOIN postings p ON p.transaction_id = a.transaction_id
         AND p.account_id = (SELECT id FROM ledger_accounts WHERE user_id IS NULL AND kind = 'referral' AND currency = a.currency AND name = 'liability')
       GROUP BY a.id, a.amount HAVING coalesce(sum(p.amount), 0) <> a.amount LIMIT ${LIMIT}`,
    ),
  );
  add(
    'each reversed referral accrual is reversed by its own transaction, and only accruals are',
    await db.query(
      `SELECT t.id AS transaction_id, t.reverses::text AS reverses, a.id AS accrual_id
       FROM ledger_transactions t JOIN ledger_transactions r ON r.id = t.reverses AND r.kind = 'referral'
       LEFT JOIN referral_accruals a ON a.reversal_transaction_id = t.id
       WHERE a.id IS NULL OR a.transaction_id <> t.reverses
       UNION ALL
       SELECT a.reversal_transaction_id, NULL, a.id FROM referral_accruals a
       WHERE a.reversal_transaction_id IS NOT NULL
         AND NOT EXISTS (SELECT 1 FROM ledger_transactions t WHERE t.id = a.reversal_transaction_id AND t.reverses = a.transaction_id)
       LIMIT ${LIMIT}`,
    ),
  );
  add(
    'each referral settlement pays its accruals from the liability to its referrer',
    await db.query(
      `SELECT s.id AS settlement_id, s.amount::text AS amount,
              s.clawed::text AS clawed,
              (SELECT coalesce(sum(a.amount), 0) FROM referral_accruals a WHERE a.settlement_id = s.id)::text AS accrued,
              (SELECT coalesce(sum(a.amount), 0) FROM referral_accruals a WHERE a.clawed_by = s.id)::text AS clawbacks,
              (SELECT coalesce(sum(p.amount), 0) FROM postings p JOIN ledger_accounts la ON la.id = p.account_id
                WHERE p.transaction_id = s.transaction_id AND la.user_id = s.referrer_id AND la.currency = s.currency)::text AS paid
       FROM referral_settlements s
       WHERE (SELECT coalesce(sum(a.amount), 0) FROM referral_accruals a WHERE a.settlement_id = s.id) <> s.amount + s.clawed
          OR (SELECT coalesce(sum(a.amount), 0) FROM referral_accruals a WHERE a.clawed_by = s.id) <> s.clawed
          OR EXISTS (SELECT 1 FROM referral_accruals a WHERE (a.settlement_id = s.id OR a.clawed_by = s.id) AND (a.referrer_id <> s.referrer_id OR a.currency <> s.currency))
          OR (SELECT coalesce(sum(p.amount), 0) FROM postings p JOIN ledger_accounts la ON la.id = p.account_id
                WHERE p.transaction_id = s.transaction_id AND la.user_id = s.referrer_id AND la.currency = s.currency) <> s.amount
       LIMIT ${LIMIT}`,
    ),
  );
  add(
    'the referral liability holds exactly the unsettled accruals less the clawbacks owed',
    await db.query(
      `SELECT coalesce(l.currency, u.currency) AS currency, coalesce(l.balance, 0)::text AS liability, coalesce(u.total, 0)::text AS unsettled
       FROM (SELECT currency, balance FROM ledger_accounts WHERE user_id IS NULL AND kind = 'referral' AND name = 'liability') l
       FULL JOIN (SELECT currency, coalesce(sum(amount) FILTER (WHERE settlement_id IS NULL AND reversal_transaction_id IS NULL), 0)
                    - coalesce(sum(amount) FILTER (WHERE settlement_id IS NOT NULL AND reversal_transaction_id IS NOT NULL AND clawed_by IS NULL), 0) AS total
                  FROM referral_accruals GROUP BY currency) u ON u.currency = l.currency
       WHERE coalesce(l.balance, 0) <> coalesce(u.total, 0) LIMIT ${LIMIT}`,
    ),
  );
  add(
    'no card account below zero; each belongs to one issued card, empty once closed',
    await db.query(
      `SELECT a.id AS account_id, a.currency, a.balance::text AS balance, count(c.id)::int AS cards, min(c.status) AS status
       FROM ledger_accounts a LEFT JOIN cards c ON c.account_id = a.id AND c.currency = a.currency AND a.name = 'card:' || c.public_id::text
       WHERE a.kind = 'card'
       GROUP BY a.id HAVING a.balance < 0 OR count(c.id) <> 1 OR (min(c.status) = 'closed' AND a.balance <> 0) LIMIT ${LIMIT}`,
    ),
  );
  add(
    'each card fee captured from its hold, and refunded, with exactly the fee',
    await db.query(
      `SELECT c.public_id AS card, c.status, c.issue_fee::text AS fee, h.state AS hold, m.captured::text AS captured, m.refunded::text AS refunded
       FROM cards c LEFT JOIN holds h ON h.id = c.hold_id
       CROSS JOIN LATERAL (
         SELECT
           (SELECT sum(p.amount) FROM postings p JOIN ledger_accounts a ON a.id = p.account_id
             WHERE p.transaction_id = c.fee_transaction_id AND a.kind = 'card_fees' AND a.currency = c.fee_currency) AS captured,
           (SELECT sum(p.amount) FROM postings p JOIN ledger_accounts a ON a.id = p.account_id
             WHERE p.transaction_id = c.refund_transaction_id AND a.kind = 'user' AND a.user_id = c.user_id AND a.currency = c.fee_currency) AS refunded
       ) m
       WHERE (c.issue_fee > 0 AND (c.hold_id IS NULL OR h.user_id <> c.user_id OR h.amount <> c.issue_fee OR h.currency <> c.fee_currency))
          OR (c.status = 'placed' AND c.issue_fee > 0 AND h.state <> 'held')
          OR (c.status = 'cancelled' AND c.issue_fee > 0 AND h.state <> 'released')
          OR (c.status NOT IN ('placed', 'cancelled') AND c.issue_fee > 0
              AND (h.state <> 'captured' OR h.final_transaction_id <> c.fee_transaction_id OR m.captured IS DISTINCT FROM c.issue_fee))
          OR (c.refund_transaction_id IS NOT NULL AND m.refunded IS DISTINCT FROM c.issue_fee)
       LIMIT ${LIMIT}`,
    ),
  );

  const [counts] = await db.query<{ accounts: number; transactions: number; postings: number }>(
    `SELECT (SELECT count(*) FROM ledger_accounts)::int AS accounts, (SELECT count(*) FROM ledger_transactions)::int AS transactions,
            (SELECT count(*) FROM postings)::int AS postings`,
  );
  return { ok: violations.length === 0, violations, sums, counts: counts! };
}
