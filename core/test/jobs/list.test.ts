import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ENGINES, build } from '../helpers.ts';
import { createFixtureUser, fund } from '../fixtures.ts';
import { JOB_NAMES } from '../../src/jobs/names.ts';
import { listJobs } from '../../src/jobs/list.ts';
import { createDeposit, DEPOSIT_LIFETIME_MS } from '../../src/domains/payments/deposits.ts';
import { SANDBOX_ISSUE_DELAY_MS } from '../../src/providers/sandbox/issuer.ts';
import { CARD_OVERRIDES, cardStatus, makeProduct, placeOrder, post, verifyUser, walletMinor } from '../domains/cards/helpers.ts';

/** Years from the real date: a job reading the wall clock instead of the injected one would find nothing due. */
const NOW = new Date('2031-11-23T10:00:00Z');

describe('the job list', () => {
  it('names every job once, as config.ts knows them', () => {
    const none = undefined as never;
    const names = listJobs({
      config: { PUBLIC_URL: 'http://x', WEBHOOK_RETENTION_DAYS: 90, EVENTS_CHECK_MS: 2_000, EVM_POLL_MS: 3_000 },
      providers: none,
      issuers: new Map(),
      cipher: none,
      storage: none,
      mailer: none,
      hub: none,
    }).map((job) => job.name);
    expect(names).toEqual([...JOB_NAMES]);
  });
});

describe.each(ENGINES)('jobs on the injected clock (%s)', (engine) => {
  let ctx: Awaited<ReturnType<typeof build>>;
  let clock = NOW;
  beforeAll(async () => {
    ctx = await build(engine, CARD_OVERRIDES, { now: () => clock });
  });
  afterAll(async () => ctx?.close());

  it('deposit-expiry expires a deposit once its lifetime has passed on the clock', async () => {
    const user = await createFixtureUser(ctx.db);
    const deposit = await createDeposit(ctx.db, {
      userId: user.id,
      provider: 'sandbox-card',
      systemId: 'sandbox-card',
      currency: 'USD',
      amount: 10_00n,
      now: clock,
    });
    const state = async () => (await ctx.db.query<{ state: string }>('SELECT state FROM payments WHERE id = $1', [deposit.id]))[0]!.state;
    clock = new Date(NOW.getTime() + DEPOSIT_LIFETIME_MS - 1_000);
    expect(await ctx.app.jobs.runJob('deposit-expiry')).toMatchObject({ ran: true, error: null });
    expect(await state()).toBe('created');
    clock = new Date(NOW.getTime() + DEPOSIT_LIFETIME_MS);
    await ctx.app.jobs.runJob('deposit-expiry');
    expect(await state()).toBe('expired');
  });

  it('the sandbox issuer issues a card through its callback, and card-fees charges its month on the clock', async () => {
    clock = NOW;
    await makeProduct(ctx.db, { id: 'jobs-monthly', monthly_fee: '1' });
    const user = await createFixtureUser(ctx.db);
    await verifyUser(ctx.db, user.id);
    await fund(ctx.db, user.id, 'USD', 3_00n);
    const order = await placeOrder(ctx, user.token, { product: 'jobs-monthly', currency: 'USD', name_on_card: 'IVAN PETROV' });
    await post(ctx, '/api/card/order/confirm', user.token, { card: order.id });
    await ctx.app.jobs.runJob('sandbox-card-issuer');
    clock = new Date(NOW.getTime() + SANDBOX_ISSUE_DELAY_MS);
    await ctx.app.jobs.runJob('sandbox-card-issuer');
    expect(await cardStatus(ctx.db, order.id)).toBe('active');
    // Issued in November: nothing is due in November.
    await ctx.app.jobs.runJob('card-fees');
    expect(await walletMinor(ctx.db, user.id, 'USD')).toBe(3_00n);
    clock = new Date('2031-12-01T00:05:00Z');
    expect(await ctx.app.jobs.runJob('card-fees')).toMatchObject({ ran: true, error: null });
    expect(await walletMinor(ctx.db, user.id, 'USD')).toBe(2_00n);
  });
});
