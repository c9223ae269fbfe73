import { randomInt } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ENGINES, openTestDb, testCipher } from '../../helpers.ts';
import type { TFixtureUser } from '../../fixtures.ts';
import { checkLedger, type TLedgerReport } from '../../../src/domains/ledger/invariants.ts';
import { formatAmount } from '@obmen/shared';
import { createDeposit } from '../../../src/domains/payments/deposits.ts';
import { receiveWebhooks } from '../../../src/domains/payments/webhooks.ts';
import { approveWithdrawal, cancelWithdrawal, rejectWithdrawal, requestWithdrawal } from '../../../src/domains/payments/withdrawal-states.ts';
import { setAutoApproval } from '../../../src/domains/payments/withdrawals.ts';
import { AppError } from '../../../src/errors.ts';
import { signWebhook } from '../../../src/inbox/signature.ts';
import { registerPaymentProviders } from '../../../src/domains/payments/providers.ts';
import { loadPaymentProviders } from '../../../src/providers/index.ts';
import { SANDBOX_DECLINED_CARD } from '../../../src/providers/sandbox/payouts.ts';
import { batchedTransfers, currencySums, describeRun, expectWorkloadKeptEveryRule, prng, runLedgerWorkload, seedLedgerUsers } from './ledger-workload.ts';
import { adjustmentSums, expectFourEyesKeptEveryRule, financeOperators, runFourEyesWorkload, type TFourEyesResult } from './four-eyes-workload.ts';
import { postAdjustment } from '../../../src/domains/ledger/service.ts';
import type { TOperator } from '../../../src/domains/ops/service.ts';

/*
 * Random transfers and exchanges from 16 concurrent workers, with overdraw
 * attempts and repeated idempotency keys, and alongside them a small share of the operations as
 * four-eyes adjustments and reversals from 4 operators' workers; then the ledger's rules checked from the stored data.
 * On PostgreSQL this proves the locking; on PGlite (one connection) the rules only.
 *   INVARIANTS_SEED=<n>  replays a run (the seed is printed)
 *   INVARIANTS_OPS=<n>   operations on PostgreSQL (default 10 000; PGlite runs a tenth)
 */
const SEED = Number(process.env.INVARIANTS_SEED ?? randomInt(1, 2 ** 31));
const PG_OPS = Number(process.env.INVARIANTS_OPS ?? 10_000);
const USERS = 50;
const WORKERS = 16;
/** Of the operations, the share proposed as four-eyes requests, and the operators' workers that propose and decide them. */
const FOUR_EYES_SHARE = 0.02;
const FOUR_EYES_WORKERS = 4;

console.log(`invariants seed: ${SEED} (replay with INVARIANTS_SEED=${SEED})`);

describe.each(ENGINES)('ledger invariants under concurrency on %s', (engine) => {
  let ctx: Awaited<ReturnType<typeof openTestDb>> & { users: TFixtureUser[] };
  const ops = engine === 'postgres' ? PG_OPS : Math.ceil(PG_OPS / 10);
  beforeAll(async () => {
    const opened = await openTestDb(engine, WORKERS);
    ctx = { ...opened, users: await seedLedgerUsers(opened.db, USERS) };
  }, 120_000);
  afterAll(() => ctx.drop());

  let fourEyes: { result: TFourEyesResult; operators: TOperator[]; adjustmentBefore: Map<string, bigint> } | undefined;

  it(`${ops} random transfers, exchanges and four-eyes adjustments and reversals from ${WORKERS} + ${FOUR_EYES_WORKERS} workers keep every rule (seed ${SEED})`, async () => {
    const before = await currencySums(ctx.db);
    const adjustmentBefore = await adjustmentSums(ctx.db);
    const prefix = `inv-${SEED}`;
    const operators = await financeOperators(ctx.db, prefix);
    const requests = Math.round(ops * FOUR_EYES_SHARE);
    const [result, four] = await Promise.all([
      runLedgerWorkload(ctx.db, ctx.users, { ops: ops - requests, workers: WORKERS, seed: SEED, prefix }),
      runFourEyesWorkload(ctx.db, ctx.users, operators, { ops: requests, workers: FOUR_EYES_WORKERS, seed: SEED, prefix }),
    ]);
    const report = await checkLedger(ctx.db);
    const batched = await batchedTransfers(ctx.db, prefix);
    console.log(
      `${describeRun(`invariants ${engine}`, SEED, ops - requests, result)}; ${report.counts.transactions} ledger transactions, ${report.counts.postings} postings; ` +
        `${batched} transfers committed in batches; four eyes: ${requests} operations in ${four.seconds.toFixed(1)} s, ${four.proposed} proposed, ${four.applied.size} applied ` +
        `(${[...four.applied.values()].filter((a) => a.action === 'ledger.reverse').length} reversals), ${four.declined} declined, refusals ${JSON.stringify(four.refusals)}`,
    );
    await expectWorkloadKeptEveryRule(ctx.db, result, before, prefix, ops - requests);
    await expectFourEyesKeptEveryRule(ctx.db, four, operators, adjustmentBefore);
    // Every kind of decision happened: approvals of both actions, declines, and the refusals the run is built to meet.
    expect(four.applied.size).toBeGreaterThan(0);
    if (engine === 'postgres') {
      expect(new Set([...four.applied.values()].map((a) => a.action))).toEqual(new Set(['ledger.adjust', 'ledger.reverse']));
      expect(four.declined).toBeGreaterThan(0);
      for (const refusal of ['approve:insufficient_funds', 'approve:ops_request_closed', 'propose:already_reversed', 'propose:ops_reverse_hold'])
        expect(four.refusals[refusal] ?? 0, refusal).toBeGreaterThan(0);
    }
    fourEyes = { result: four, operators, adjustmentBefore };
    // The transfers went through the batched path: refusals, replays and double submits inside batches.
    if (engine === 'postgres') expect(batched).toBeGreaterThan(0);
  }, 300_000);

  it('the four-eyes checks catch an approval applied twice (the suite can fail)', async () => {
    if (!fourEyes) throw new Error('runs after the random operations');
    const { result, operators, adjustmentBefore } = fourEyes;
    const [id] = [...result.applied.keys()];
    // A second transaction under an approved request, as an approval applied twice would post.
    await ctx.db.transaction((tx) =>
      postAdjustment(tx, {
        accountId: ctx.users[0]!.accountId,
        currency: 'USDT',
        amount: '1',
        direction: 'credit',
        reason: 'applied twice',
        account: 'correction',
        actor: `ops_request:${id}`,
      }),
    );
    await expect(expectFourEyesKeptEveryRule(ctx.db, result, operators, adjustmentBefore)).rejects.toThrow(/applied other than once/);
    // The ledger's own rules do not see it (it balances): only the requests' checks do.
    expect(await checkLedger(ctx.db)).toMatchObject({ ok: true });
  });

  it.runIf(engine === 'postgres')(
    `a payments storm (seed ${SEED}): 60 deposits and 60 withdrawals with holds, approved, rejected and cancelled at random and racing; ` +
      'every deposit and payout event delivered 5 times concurrently and out of order, singly and in gatherings, with forged and stale copies',
    async () => {
      const random = prng(SEED ^ 0x5eed);
      const pick = <T>(list: readonly T[]) => list[Math.floor(random() * list.length)]!;
      const secret = 'storm-secret-0123456789abcdef0123456789';
      const providers = loadPaymentProviders({ NODE_ENV: 'test', WEBHOOK_SECRET_SANDBOX_CARD: secret });
      // Built without the app: the withdrawals reach their provider through the registry.
      registerPaymentProviders(providers);
      const provider = providers.get('sandbox-card')!;
      const now = new Date();
      const deps = { db: ctx.db, now: () => now, cipher: testCipher() };
      await ctx.db.query('UPDATE users SET verification_level = 1 WHERE id = ANY ($1::bigint[])', [ctx.users.map((u) => u.id)]);
      await setAutoApproval(ctx.db, 'RUB', '1000');
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
      const refusals: Record<string, number> = {};
      const refused = (err: unknown) => {
        const code = err instanceof AppError ? err.code : `unexpected: ${String(err)}`;
        refusals[code] = (refusals[code] ?? 0) + 1;
      };
      const concurrently = async <T>(items: T[], work: (item: T) => Promise<void>) => {
        let next = 0;
        await Promise.all(
          Array.from({ length: WORKERS }, async () => {
            while (next < items.length) await work(items[next++]!);
          }),
        );
      };

      // Withdrawal requests: 100–3000 RUB (at most 1000 approved at once), one in six over the balance, one in ten sent twice with its key.
      const requests = Array.from({ length: 60 }, (_, i) => {
        const user = pick(ctx.users);
        const amount = random() < 1 / 6 ? '250000' : (100 + Math.floor(random() * 290_000) / 100).toFixed(2);
        const card = random() < 0.25 ? SANDBOX_DECLINED_CARD : '4111111111111111';
        return { user, key: `storm-${SEED}-w${i}`, body: { currency: 'RUB', amount, card_number: card, card_holder: 'STORM TEST' }, twice: random() < 0.1 };
      });
      const placed = new Map<string, { user: TFixtureUser; id: string }>();
      await concurrently(requests, async (r) => {
        const send = () => requestWithdrawal(deps, r.user.id, r.key, 'sandbox-card', r.body, 'en');
        try {
          const answers = await Promise.all(r.twice ? [send(), send()] : [send()]);
          expect(new Set(answers.map((a) => a.withdrawal.id)).size).toBe(1);
          placed.set(answers[0]!.withdrawal.id, { user: r.user, id: answers[0]!.withdrawal.id });
        } catch (err) {
          refused(err);
        }
      });
      expect(refusals.unexpected).toBeUndefined();
      // Decisions, at random and sometimes racing each other on one request: one wins, the other is refused.
      const decide = {
        approve: (id: string) => approveWithdrawal(deps, id, 'operator:storm', now),
        reject: (id: string) => rejectWithdrawal(ctx.db, id, 'storm says no', 'operator:storm', now),
        cancel: (id: string) => cancelWithdrawal(deps, placed.get(id)!.user.id, id, 'en'),
      };
      const choices: Array<Array<keyof typeof decide>> = [
        ['approve'],
        ['reject'],
        ['cancel'],
        ['approve', 'cancel'],
        ['reject', 'approve'],
        ['cancel', 'reject'],
      ];
      await concurrently([...placed.keys()], async (id) => {
        await Promise.all(pick(choices).map((choice) => decide[choice](id).then(() => undefined, refused)));
      });
      expect(Object.keys(refusals).filter((code) => !['insufficient_funds', 'withdrawal_state'].includes(code))).toEqual([]);
      const processing = await ctx.db.query<{ public_id: string; receive: string; provider_ref: string }>(
        `SELECT public_id::text AS public_id, receive::text AS receive, provider_ref FROM withdrawals WHERE state = 'processing' AND public_id = ANY($1::uuid[])`,
        [[...placed.keys()]],
      );
      expect(processing.length).toBeGreaterThan(5);

      // The events: per deposit pending, then paid or declined (one in five); per payout paid or failed, and for one in
      // eight both (the second finds a final state).
      const events: object[] = deposits.flatMap((deposit, i) => {
        const base = { payment_id: deposit.public_id, amount: formatAmount(deposit.amount, 2), currency: 'USD' };
        return [
          { id: `storm-${SEED}-${i}-pending`, type: 'payment.pending', ...base },
          { id: `storm-${SEED}-${i}-final`, type: i % 5 === 0 ? 'payment.declined' : 'payment.paid', ...base },
        ];
      });
      for (const payout of processing) {
        const base = { payment_id: payout.public_id, amount: formatAmount(payout.receive, 2), currency: 'RUB' };
        const outcomes = random() < 1 / 8 ? ['paid', 'failed'] : [random() < 0.7 ? 'paid' : 'failed'];
        for (const outcome of outcomes) events.push({ id: `${payout.provider_ref}.${outcome}`, type: `payout.${outcome}`, ...base });
      }
      const unix = Math.floor(now.getTime() / 1000);
      const deliveries: Array<{ body: Buffer; signature: string; kind: 'valid' | 'forged' | 'stale'; resent: number }> = [];
      for (const event of events) {
        const body = Buffer.from(JSON.stringify(event));
        for (let copy = 0; copy < 5; copy++) deliveries.push({ body, signature: signWebhook(secret, body, unix), kind: 'valid', resent: 0 });
        deliveries.push({ body, signature: signWebhook('a-forger-does-not-know-the-secret-000000', body, unix), kind: 'forged', resent: 0 });
        deliveries.push({ body, signature: signWebhook(secret, body, unix - 600), kind: 'stale', resent: 0 });
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
            // Half the time a gathering of up to 8, as the webhook route makes them (receiveWebhooks).
            const gathering = deliveries.slice(next, next + (random() < 0.5 ? 1 : 1 + Math.floor(random() * 8)));
            next += gathering.length;
            const received = await receiveWebhooks(
              ctx.db,
              gathering.map((d) => ({ provider, input: { rawBody: d.body, signature: d.signature, now } })),
              now,
            );
            received.forEach((r, i) => {
              const delivery = gathering[i]!;
              // Answered busy (a deadlock retried past its budget; stored, nothing applied): the
              // provider resends it, as a provider does with any answer but 200.
              if (r instanceof Error && r.message.startsWith('busy') && delivery.resent < 5) {
                deliveries.push({ ...delivery, resent: delivery.resent + 1 });
                return;
              }
              results.set(delivery.kind, [...(results.get(delivery.kind) ?? []), r instanceof Error ? `error: ${r.message}` : r.result]);
            });
          }
        }),
      );
      expect(new Set(results.get('forged'))).toEqual(new Set(['bad_signature']));
      expect(new Set(results.get('stale'))).toEqual(new Set(['stale']));
      expect(results.get('valid')!.filter((r) => r.startsWith('error'))).toEqual([]);

      // Deposits: each credited once or declined; out of order, a final event may come before its pending one.
      const depositIds = deposits.map((deposit) => deposit.public_id);
      const rows = await ctx.db.query<{ state: string; n: number; credited: string }>(
        `SELECT p.state, count(*)::int AS n, coalesce(sum(p.amount - p.fee), 0)::text AS credited FROM payments p
         WHERE p.public_id = ANY($1::uuid[]) GROUP BY p.state ORDER BY p.state`,
        [depositIds],
      );
      expect(rows.map((row) => [row.state, row.n])).toEqual([
        ['credited', 48],
        ['declined', 12],
      ]);
      // No event applied twice: one event id row per event, one deposit transaction per credited deposit.
      const [applied] = await ctx.db.query<{ events: number; txs: number; memos: number }>(
        `SELECT (SELECT count(*) FROM payment_events WHERE event_id = ANY($1::text[]))::int AS events,
                (SELECT count(*) FROM ledger_transactions t JOIN payments p ON p.ledger_transaction_id = t.id WHERE p.public_id = ANY($2::uuid[]))::int AS txs,
                (SELECT count(*) FROM ledger_transactions WHERE kind = 'deposit' AND memo = ANY($3::text[]))::int AS memos`,
        [events.map((e) => (e as { id: string }).id), depositIds, depositIds.map((id) => `deposit ${id}`)],
      );
      expect(applied).toEqual({ events: events.length, txs: 48, memos: 48 });
      const [users] = await ctx.db.query<{ total: string }>(
        `SELECT coalesce(sum(po.amount), 0)::text AS total FROM postings po JOIN ledger_accounts a ON a.id = po.account_id
         JOIN payments p ON p.ledger_transaction_id = po.transaction_id WHERE a.kind = 'user' AND p.public_id = ANY($1::uuid[])`,
        [depositIds],
      );
      expect(users!.total).toBe(rows.find((row) => row.state === 'credited')!.credited);

      // Withdrawals: every one that reached the provider ends paid or failed; each hold ended with its request's final
      // state (captured when paid, released when rejected, cancelled or failed) by one ledger transaction, and only
      // requests still under way keep theirs.
      const holds = await ctx.db.query<{ state: string; hold: string; finals: number; payouts: number }>(
        `SELECT w.state, h.state AS hold,
           (SELECT count(*) FROM ledger_transactions t WHERE t.memo LIKE 'withdrawal ' || w.public_id || '%' AND t.kind IN ('withdrawal', 'release'))::int AS finals,
           (SELECT count(*) FROM payment_events e WHERE e.event_id LIKE w.provider_ref || '.%' AND e.result IN ('paid', 'failed'))::int AS payouts
         FROM withdrawals w JOIN holds h ON h.id = w.hold_id WHERE w.public_id = ANY($1::uuid[])`,
        [[...placed.keys()]],
      );
      const expectedHold: Record<string, [string, number]> = {
        paid: ['captured', 1],
        failed: ['released', 1],
        rejected: ['released', 1],
        cancelled: ['released', 1],
        requested: ['held', 0],
        approved: ['held', 0],
      };
      for (const row of holds) expect([row.state, row.hold, row.finals]).toEqual([row.state, ...expectedHold[row.state]!]);
      expect(holds.filter((row) => row.state === 'processing')).toEqual([]);
      expect(holds.filter((row) => ['paid', 'failed'].includes(row.state)).every((row) => row.payouts === 1)).toBe(true);
      const states = new Set(holds.map((row) => row.state));
      for (const state of ['paid', 'failed', 'rejected', 'cancelled']) expect(states, `some withdrawal ends ${state}`).toContain(state);

      // Per currency, every balance still sums to zero; no user or held balance is negative; every ledger rule holds.
      const after = await currencySums(ctx.db);
      for (const total of Object.values({ ...before, ...after })) expect(total).toBe('0');
      const [negative] = await ctx.db.query<{ n: number }>(`SELECT count(*)::int AS n FROM ledger_accounts WHERE kind IN ('user', 'hold') AND balance < 0`);
      expect(negative!.n).toBe(0);
      const report = await checkLedger(ctx.db);
      expect(report.violations).toEqual([]);
      console.log(
        `[payments storm] seed ${SEED}: ${deliveries.length} deliveries of ${events.length} events; withdrawals ${JSON.stringify(
          Object.fromEntries([...states].map((s) => [s, holds.filter((row) => row.state === s).length])),
        )}; refusals ${JSON.stringify(refusals)}`,
      );
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
