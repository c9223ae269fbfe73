import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WEBHOOK_SIGNATURE_HEADER } from '@obmen/shared';
import { holdRowLock, openTestDb, until } from '../../helpers.ts';
import { createFixtureUser, type TFixtureUser } from '../../fixtures.ts';
import { startCore, type TCoreProcess } from '../../core-process.ts';
import { migrate } from '../../../src/db/migrate.ts';
import { seedDemoData } from '../../../src/seed/demo.ts';
import { checkLedger } from '../../../src/domains/ledger/invariants.ts';
import { userBalance } from '../../../src/domains/ledger/service.ts';
import { createDeposit, type TDepositRow } from '../../../src/domains/payments/deposits.ts';
import { signWebhook } from '../../../src/inbox/signature.ts';

/*
 * The core killed with `kill -9` between receiving a webhook (its delivery stored in
 * the inbox) and crediting it. No hook in the core: the test holds the deposit's row lock, so
 * the core's processing transaction waits on it with the event id claimed but nothing committed;
 * the core is killed there, the lock released (PostgreSQL rolls the dead client's transaction
 * back), and a new core (its webhook-retry job on, as outside tests) credits the stored delivery at
 * start-up. Then the provider's redelivery of the same event moves nothing.
 */
const SECRET = 'kill-test-sandbox-card-secret-0123456789';

describe.skipIf(!process.env.TEST_DATABASE_URL)('a webhook and kill -9 of the core (PostgreSQL)', () => {
  let ctx: Awaited<ReturnType<typeof openTestDb>>;
  let user: TFixtureUser;
  let deposit: TDepositRow;
  let core: TCoreProcess | undefined;
  const env = () => ({ DATABASE_URL: ctx.url!, NODE_ENV: 'development', WEBHOOK_SECRET_SANDBOX_CARD: SECRET, JOBS: 'webhook-retry' });
  beforeAll(async () => {
    ctx = await openTestDb('postgres', 4);
    await migrate(ctx.db);
    await seedDemoData(ctx.db, { demoAccount: false, sandboxCatalogue: true });
    user = await createFixtureUser(ctx.db);
    deposit = await createDeposit(ctx.db, {
      userId: user.id,
      provider: 'sandbox-card',
      systemId: 'sandbox-card',
      currency: 'USD',
      amount: 12_345n,
      fee: 45n,
      now: new Date(),
    });
  }, 120_000);
  afterAll(async () => {
    await core?.stop();
    await ctx.drop();
  });

  const body = () =>
    Buffer.from(JSON.stringify({ id: `kill-${deposit.public_id}`, type: 'payment.paid', payment_id: deposit.public_id, amount: '123.45', currency: 'USD' }));
  const deliver = (url: string) =>
    fetch(`${url}/api/payments/webhook/sandbox-card`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', [WEBHOOK_SIGNATURE_HEADER]: signWebhook(SECRET, body(), Math.floor(Date.now() / 1000)) },
      body: body(),
    });
  const inbox = () =>
    ctx.db.query<{ processed_at: Date | null; result: string | null }>('SELECT processed_at, result FROM payment_webhooks WHERE event_id = $1 ORDER BY id', [
      `kill-${deposit.public_id}`,
    ]);
  const depositTransactions = async () =>
    (
      await ctx.db.query<{ n: number }>(`SELECT count(*)::int AS n FROM ledger_transactions WHERE kind = 'deposit' AND memo = $1`, [
        `deposit ${deposit.public_id}`,
      ])
    )[0]!.n;

  it('killed after the delivery is stored and before it is credited: credited exactly once after the restart; a redelivery moves nothing', async () => {
    core = await startCore(env());
    const before = await userBalance(ctx.db, user.id, 'USD');
    const lock = await holdRowLock(ctx.db, 'SELECT 1 FROM payments WHERE id = $1 FOR UPDATE', [deposit.id]);
    const cut = deliver(core.url).then(
      (res) => `answered ${res.status}`,
      () => 'cut',
    );
    // Stored, and its processing waiting on the payment's row (the event id claimed, not committed).
    await until('the delivery stored', async () => (await inbox()).length === 1);
    await lock.waiting();
    await core.kill();
    expect(await cut).toBe('cut');
    await lock.release();
    // The dead core's transaction rolls back: the event id is free again, nothing credited.
    await until('the dead transaction rolled back', async () => {
      const [row] = await ctx.db.query<{ n: number }>('SELECT count(*)::int AS n FROM payment_events WHERE event_id = $1', [`kill-${deposit.public_id}`]);
      const [waiting] = await ctx.db.query<{ n: number }>(
        `SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND state = 'idle in transaction'`,
      );
      return row!.n === 0 && waiting!.n === 0;
    });
    expect(await inbox()).toEqual([{ processed_at: null, result: null }]);
    expect(await depositTransactions()).toBe(0);
    expect(await userBalance(ctx.db, user.id, 'USD')).toBe(before);

    // A new core takes up what the dead one stored.
    core = await startCore(env());
    await until('credited after the restart', async () => (await inbox())[0]?.result === 'credited');
    expect(await userBalance(ctx.db, user.id, 'USD')).toBe(before + 12_300n);
    expect(await depositTransactions()).toBe(1);
    const [state] = await ctx.db.query<{ state: string }>('SELECT state FROM payments WHERE id = $1', [deposit.id]);
    expect(state!.state).toBe('credited');

    // The provider never got its answer, so it sends the event again: a duplicate.
    const again = await deliver(core.url);
    expect(again.status).toBe(200);
    expect(await again.json()).toMatchObject({ result: 'duplicate' });
    expect((await inbox()).map((row) => row.result)).toEqual(['credited', 'duplicate']);
    expect(await userBalance(ctx.db, user.id, 'USD')).toBe(before + 12_300n);
    expect(await depositTransactions()).toBe(1);
    expect((await checkLedger(ctx.db)).violations).toEqual([]);
  }, 120_000);
});
