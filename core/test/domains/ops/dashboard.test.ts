import { describe, expect, it } from 'vitest';
import { ENGINES } from '../../helpers.ts';
import { call } from '../../auth-helpers.ts';
import { createFixtureUser, fund } from '../../fixtures.ts';
import { asOperator, operatorWith, useOpsApp } from '../../ops-helpers.ts';
import { registeredPaymentProviders } from '../../../src/domains/payments/providers.ts';
import { setAutoApproval, setLargeAmount } from '../../../src/domains/payments/withdrawals.ts';
import { runSandboxPayouts } from '../../../src/providers/sandbox/payouts.ts';

const CARD = { card_number: '4111 1111 1111 1111', card_holder: 'IVAN PETROV' };

describe.each(ENGINES)('the back office home on %s', (engine) => {
  const ctx = useOpsApp(engine);
  const clock = ctx.clock;
  let keys = 0;

  const withdraw = async (token: string, amount: string) => {
    const answer = await call(ctx.app, '/api/withdraw/form/sandbox-card', {
      token,
      payload: { amount, currency: 'RUB', ...CARD },
      locale: 'en',
      headers: { 'idempotency-key': `home-${++keys}-${engine}` },
    });
    expect(answer.statusCode, answer.body).toBe(200);
    return answer.json().withdrawal.id as string;
  };

  it("shows each operator the queues of their roles, overdue first, today's volumes and the parts' health, as /metrics does", async () => {
    await setLargeAmount(ctx.db, 'RUB', '50000');
    await setAutoApproval(ctx.db, 'RUB', '2000');
    const user = await createFixtureUser(ctx.db);
    await ctx.db.query('UPDATE users SET verification_level = 1 WHERE id = $1', [user.id]);
    await fund(ctx.db, user.id, 'RUB', 10_000_000n);
    // Two paid today, one waiting for an operator.
    const providers = new Map([...registeredPaymentProviders()].map((provider) => [provider.id, provider]));
    for (const amount of ['1000', '1500']) {
      const id = await withdraw(user.token, amount);
      await runSandboxPayouts(ctx.db, providers, clock.now(), { reference: id, force: true, outcome: 'succeeded' });
    }
    await withdraw(user.token, '12000');
    // Past the withdrawals desk's target: the waiting one is overdue.
    clock.tick(5 * 60 * 60_000);
    const finance = await operatorWith(ctx, clock, ['finance']);
    const support = await operatorWith(ctx, clock, ['support']);

    const home = await call(ctx.app, '/api/ops/dashboard', asOperator(finance.token));
    expect(home.statusCode, home.body).toBe(200);
    const body = home.json();
    expect(body.day).toBe(clock.now().toISOString().slice(0, 10));
    expect(body.queues.map((queue: { name: string }) => queue.name)).toEqual([
      'withdrawals',
      'webhooks_failed',
      'bank_unmatched',
      'chain_waiting',
      'chain_held',
      'card_orders',
      'suspense',
    ]);
    expect(body.queues[0]).toMatchObject({ name: 'withdrawals', count: 1, overdue: 1 });
    expect(body.volumes).toEqual([{ kind: 'withdrawals', currency: 'RUB', count: 2, amount: '2500.00' }]);
    expect(body.health.map((part: { part: string }) => part.part)).toEqual(['database', 'webhooks', 'payouts', 'realtime']);
    expect(body.health[0]).toMatchObject({ part: 'database', state: 'ok' });
    expect(body.health[1]).toMatchObject({ part: 'webhooks', value: 0 });

    const theirs = (await call(ctx.app, '/api/ops/dashboard', asOperator(support.token))).json();
    expect(theirs.queues.map((queue: { name: string }) => queue.name)).toEqual(['support', 'chat_reports']);
    expect(theirs.volumes).toEqual(body.volumes);

    const metrics = await call(ctx.app, '/metrics', { ip: '127.0.0.1' });
    expect(metrics.statusCode).toBe(200);
    expect(metrics.body).toContain('obmen_volume_today{kind="withdrawals",currency="RUB"} 2500');
    expect(metrics.body).toContain('obmen_volume_today_count{kind="withdrawals",currency="RUB"} 2');
    expect(metrics.body).toContain('obmen_queue_overdue{queue="withdrawals"} 1');
    expect(metrics.body).toContain('obmen_health{part="database"} 1');

    expect((await call(ctx.app, '/api/ops/dashboard')).statusCode).toBe(404);
  });
});
