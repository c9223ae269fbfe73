import { randomInt } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ENGINES, openTestDb } from '../../helpers.ts';
import type { TFixtureUser } from '../../fixtures.ts';
import { checkLedger, type TLedgerReport } from '../../../src/domains/ledger/invariants.ts';
import { formatAmount } from '@obmen/shared';
import { createDeposit } from '../../../src/domains/payments/deposits.ts';
import { receiveWebhook } from '../../../src/domains/payments/webhooks.ts';
import { signWebhook } from '../../../src/domains/payments/signature.ts';
import { currencySums, describeRun, expectWorkloadKeptEveryRule, runLedgerWorkload, seedLedgerUsers } from './ledger-workload.ts';

/*
 * Issue 5 point 11: random transfers and exchanges from 16 concurrent workers, with overdraw
 * attempts and repeated idempotency keys, then the ledger's rules checked from the stored data.
 * On PostgreSQL this proves the locking; on PGlite (one connection) the rules only.
 *   INVARIANTS_SEED=<n>  replays a run (the seed is printed)
 *   INVARIANTS_OPS=<n>   operations on PostgreSQL (default 10 000; PGlite runs a tenth)
 */
const SEED = Number(process.env.INVARIANTS_SEED ?? randomInt(1, 2 ** 31));
const PG_OPS = Number(process.env.INVARIANTS_OPS ?? 10_000);
const USERS = 50;
const WORKERS = 16;

console.log(`invariants seed: ${SEED} (replay with INVARIANTS_SEED=${SEED})`);

describe.each(ENGINES)('ledger invariants under concurrency on %s', (engine) => {
  let ctx: Awaited<ReturnType<typeof openTestDb>> & { users: TFixtureUser[] };
  const ops = engine === 'postgres' ? PG_OPS : Math.ceil(PG_OPS / 10);
  beforeAll(async () => {
    const opened = await openTestDb(engine, WORKERS);
    ctx = { ...opened, users: await seedLedgerUsers(opened.db, USERS) };
  }, 120_000);
  afterAll(() => ctx.drop());

  it(`${ops} random transfers and exchanges from ${WORKERS} workers keep every rule (seed ${SEED})`, async () => {
    const before = await currencySums(ctx.db);
    const prefix = `inv-${SEED}`;
    const result = await runLedgerWorkload(ctx.db, ctx.users, { ops, workers: WORKERS, seed: SEED, prefix });
    const report = await checkLedger(ctx.db);
    console.log(
      `${describeRun(`invariants ${engine}`, SEED, ops, result)}; ${report.counts.transactions} ledger transactions, ${report.counts.postings} postings`,
    );
    await expectWorkloadKeptEveryRule(ctx.db, result, before, prefix, ops);
  }, 300_000);

  it.runIf(engine === 'postgres')(
    `a webhook storm: 60 deposits, each event delivered 5 times concurrently and out of order, with forged and stale copies (seed ${SEED})`,
    async () => {
      let state = SEED;
      const random = () => {
        state = (state * 1_103_515_245 + 12_345) % 2 ** 31;
        return state / 2 ** 31;
      };
      const provider = { id: 'sandbox-card' as const, webhookSecret: 'storm-secret-0123456789abcdef0123456789' };
      const now = new Date();
      const deposits = await Promise.all(
        Array.from({ length: 60 }, (_, i) =>
          createDeposit(ctx.db, {
            userId: ctx.users[i % ctx.users.length]!.id,
            provider: 'sandbox-card',
            systemId: 'sandbox-card',
            currency: 'USD',
            amount: BigInt(100 + Math.floor(random() * 100_000)),
            fee: BigInt(Math.floor(random() * 50)),
            now,
          }),
        ),
      );
      const before = await currencySums(ctx.db);
      // Per deposit: pending, then paid or declined (one in five declined), each its own event id.
      const events = deposits.flatMap((deposit, i) => {
        const amount = formatAmount(deposit.amount, 2);
        const base = { payment_id: deposit.public_id, amount, currency: 'USD' };
        const final = i % 5 === 0 ? 'payment.declined' : 'payment.paid';
        return [
          { id: `storm-${SEED}-${i}-pending`, type: 'payment.pending' as const, ...base },
          { id: `storm-${SEED}-${i}-final`, type: final, ...base },
        ];
      });
      const unix = Math.floor(now.getTime() / 1000);
      const deliveries: Array<{ body: Buffer; signature: string; kind: 'valid' | 'forged' | 'stale' }> = [];
      for (const event of events) {
        const body = Buffer.from(JSON.stringify(event));
        for (let copy = 0; copy < 5; copy++) deliveries.push({ body, signature: signWebhook(provider.webhookSecret, body, unix), kind: 'valid' });
        deliveries.push({ body, signature: signWebhook('a-forger-does-not-know-the-secret-000000', body, unix), kind: 'forged' });
        deliveries.push({ body, signature: signWebhook(provider.webhookSecret, body, unix - 600), kind: 'stale' });
      }
      for (let i = deliveries.length - 1; i > 0; i--) {
        const j = Math.floor(random() * (i + 1));
        [deliveries[i], deliveries[j]] = [deliveries[j]!, deliveries[i]!];
      }
      const results = new Map<string, string[]>();
      let next = 0;
      await Promise.all(
        Array.from({ length: WORKERS }, async () => {
          while (next < deliveries.length) {
            const delivery = deliveries[next++]!;
            const { result } = await receiveWebhook(ctx.db, provider, { rawBody: delivery.body, signature: delivery.signature, now });
            results.set(delivery.kind, [...(results.get(delivery.kind) ?? []), result]);
          }
        }),
      );
      expect(new Set(results.get('forged'))).toEqual(new Set(['bad_signature']));
      expect(new Set(results.get('stale'))).toEqual(new Set(['stale']));
      const rows = await ctx.db.query<{ state: string; n: number; credited: string }>(
        `SELECT p.state, count(*)::int AS n, coalesce(sum(p.amount - p.fee), 0)::text AS credited FROM payments p
         WHERE p.public_id = ANY($1::uuid[]) GROUP BY p.state ORDER BY p.state`,
        [deposits.map((deposit) => deposit.public_id)],
      );
      // Out of order, a final event may come before its pending one (which then finds a final state).
      expect(rows.map((row) => [row.state, row.n])).toEqual([
        ['credited', 48],
        ['declined', 12],
      ]);
      const [applied] = await ctx.db.query<{ events: number; txs: number }>(
        `SELECT (SELECT count(*) FROM payment_events WHERE event_id LIKE $1)::int AS events,
                (SELECT count(*) FROM ledger_transactions t JOIN payments p ON p.ledger_transaction_id = t.id WHERE p.public_id = ANY($2::uuid[]))::int AS txs`,
        [`storm-${SEED}-%`, deposits.map((deposit) => deposit.public_id)],
      );
      expect(applied).toEqual({ events: 120, txs: 48 });
      // Per currency, every balance still sums to zero (the clearing account owes what users got).
      const after = await currencySums(ctx.db);
      for (const total of Object.values({ ...before, ...after })) expect(total).toBe('0');
      const [users] = await ctx.db.query<{ total: string }>(
        `SELECT coalesce(sum(po.amount), 0)::text AS total FROM postings po JOIN ledger_accounts a ON a.id = po.account_id
         JOIN payments p ON p.ledger_transaction_id = po.transaction_id WHERE a.kind = 'user' AND p.public_id = ANY($1::uuid[])`,
        [deposits.map((deposit) => deposit.public_id)],
      );
      expect(users!.total).toBe(rows.find((row) => row.state === 'credited')!.credited);
      const report = await checkLedger(ctx.db);
      expect(report.violations).toEqual([]);
    },
    300_000,
  );

  it('the same checker catches a deliberately unlocked transfer (the suite can fail)', async () => {
    // Read the balance without a lock, check, then write an absolute balance: lost updates.
    const unlockedTransfer = async (from: TFixtureUser, to: TFixtureUser, amount: bigint) => {
      const [a] = await ctx.db.query<{ id: string; balance: string }>(
        `SELECT id::text AS id, balance::text AS balance FROM ledger_accounts WHERE user_id = $1 AND currency = 'USDT'`,
        [from.id],
      );
      const [b] = await ctx.db.query<{ id: string; balance: string }>(
        `SELECT id::text AS id, balance::text AS balance FROM ledger_accounts WHERE id = ledger_user_account($1, 'USDT')`,
        [to.id],
      );
      if (BigInt(a!.balance) < amount) return;
      await new Promise((resolve) => setTimeout(resolve, Math.random() * 3));
      await ctx.db.query(
        `WITH t AS (INSERT INTO ledger_transactions (kind, memo) VALUES ('transfer', 'unlocked variant') RETURNING id)
         INSERT INTO postings (transaction_id, account_id, currency, amount)
         SELECT t.id, x.account_id, 'USDT', x.amount FROM t, (VALUES ($1::bigint, -$3::numeric), ($2::bigint, $3::numeric)) AS x(account_id, amount)`,
        [a!.id, b!.id, amount.toString()],
      );
      await ctx.db.query('UPDATE ledger_accounts SET balance = $2 WHERE id = $1', [a!.id, (BigInt(a!.balance) - amount).toString()]);
      await ctx.db.query('UPDATE ledger_accounts SET balance = $2 WHERE id = $1', [b!.id, (BigInt(b!.balance) + amount).toString()]);
    };
    const few = ctx.users.slice(0, 4);
    let report: TLedgerReport = await checkLedger(ctx.db);
    expect(report.ok).toBe(true);
    for (let round = 0; round < 20 && report.ok; round++) {
      await Promise.all(
        Array.from({ length: WORKERS }, async (_, i) => {
          for (let n = 0; n < 10; n++) await unlockedTransfer(few[(i + n) % 4]!, few[(i + n + 1) % 4]!, 1_000_000n);
        }),
      );
      report = await checkLedger(ctx.db);
    }
    expect(report.ok).toBe(false);
    expect(report.violations.map((v) => v.rule)).toContain('stored balance equals the sum of postings');
  }, 120_000);
});
