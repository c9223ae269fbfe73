import { describe, expect, it } from 'vitest';
import { ENGINES } from '../../helpers.ts';
import { call } from '../../auth-helpers.ts';
import { createFixtureUser, fund, type TFixtureUser } from '../../fixtures.ts';
import { asOperator, operatorWith, stepUpOperator, type TTestOperator, useOpsApp } from '../../ops-helpers.ts';
import { verifyAuditChain } from '../../../src/domains/audit/service.ts';
import { checkLedger } from '../../../src/domains/ledger/invariants.ts';
import { heldBalance } from '../../../src/domains/ledger/holds.ts';
import { userBalance } from '../../../src/domains/ledger/service.ts';
import { largeAmounts, setLargeAmount } from '../../../src/domains/payments/withdrawals.ts';
import { WITHDRAW_COMMANDS } from '../../../src/cli/withdraw.ts';

const CARD = { card_number: '4111 1111 1111 1111', card_holder: 'IVAN PETROV' };

describe.each(ENGINES)('the withdrawals desk on %s', (engine) => {
  const ctx = useOpsApp(engine);
  const clock = ctx.clock;
  let keys = 0;

  const post = (op: TTestOperator, url: string, payload: object = {}) => call(ctx.app, url, { payload, ...asOperator(op.token), locale: 'en' });
  const desk = async (op: TTestOperator) => {
    const answer = await call(ctx.app, '/api/ops/withdrawals', asOperator(op.token));
    expect(answer.statusCode, answer.body).toBe(200);
    return answer.json();
  };
  const stateOf = async (id: string) => (await ctx.db.query<{ state: string }>('SELECT state FROM withdrawals WHERE public_id = $1', [id]))[0]?.state;

  /** A level-1 customer with 100 000 RUB. */
  async function customer(): Promise<TFixtureUser> {
    const user = await createFixtureUser(ctx.db);
    await ctx.db.query('UPDATE users SET verification_level = 1 WHERE id = $1', [user.id]);
    await fund(ctx.db, user.id, 'RUB', 10_000_000n);
    return user;
  }
  async function withdraw(user: TFixtureUser, amount: string, locale: 'ru' | 'en' = 'en'): Promise<string> {
    const answer = await call(ctx.app, '/api/withdraw/form/sandbox-card', {
      token: user.token,
      payload: { amount, currency: 'RUB', ...CARD },
      locale,
      headers: { 'idempotency-key': `desk-${++keys}-${Date.now()}` },
    });
    expect(answer.statusCode, answer.body).toBe(200);
    return answer.json().withdrawal.id as string;
  }
  async function finance(): Promise<[TTestOperator, TTestOperator]> {
    const pair: [TTestOperator, TTestOperator] = [await operatorWith(ctx, clock, ['finance']), await operatorWith(ctx, clock, ['finance'])];
    for (const op of pair) await stepUpOperator(ctx.app, clock, op);
    return pair;
  }

  it('lists waiting requests oldest first with what the decision weighs; a claim keeps colleagues off; approval hands it to the provider', async () => {
    await setLargeAmount(ctx.db, 'RUB', '50000');
    const user = await customer();
    const first = await withdraw(user, '12000');
    const second = await withdraw(user, '13000');
    const [ann, bob] = await finance();
    const listed = await desk(ann);
    const mine = listed.waiting.filter((item: { account_id: number }) => item.account_id === user.accountId);
    expect(mine.map((item: { id: string }) => item.id)).toEqual([first, second]);
    expect(mine[1]).toMatchObject({
      currency: 'RUB',
      amount: '13000.00',
      level: 1,
      large: false,
      same_destination: { own: 1, others: 0 },
      sum_24h: '12000.00',
      request: null,
      claim: null,
    });
    expect(mine[1].limits.currency).toBeTruthy();
    expect(listed.target_ms).toBe(4 * 60 * 60_000);

    expect((await post(ann, `/api/ops/withdrawals/${first}/claim`)).json().claim).toMatchObject({ operator: ann.email, mine: true });
    const taken = await post(bob, `/api/ops/withdrawals/${first}/approve`);
    expect({ status: taken.statusCode, code: taken.json().code }).toEqual({ status: 409, code: 'ops_claimed' });
    const approved = await post(ann, `/api/ops/withdrawals/${first}/approve`);
    expect(approved.statusCode, approved.body).toBe(200);
    expect(approved.json()).toMatchObject({ state: 'processing', request: null });
    expect(await stateOf(first)).toBe('processing');

    const queues = (await call(ctx.app, '/api/ops/queues', asOperator(ann.token))).json().queues;
    expect(queues.find((queue: { name: string }) => queue.name === 'withdrawals')).toMatchObject({ count: expect.any(Number), target_ms: 4 * 60 * 60_000 });
  });

  it('the seeded four-eyes amounts hold: ten times the auto-approval amount', async () => {
    const large = await largeAmounts(ctx.db);
    expect(large.get('USDT')).toBe(1_000_000_000n);
    expect(large.get('BTC')).toBe(1_000_000n);
  });

  it('a large withdrawal is approved only when a second operator confirms the request', async () => {
    await setLargeAmount(ctx.db, 'RUB', '50000');
    const user = await customer();
    const id = await withdraw(user, '60000');
    const [ann, bob] = await finance();
    expect((await desk(ann)).waiting.find((item: { id: string }) => item.id === id)).toMatchObject({ large: true });
    const proposed = await post(ann, `/api/ops/withdrawals/${id}/approve`);
    expect(proposed.statusCode, proposed.body).toBe(200);
    const request = proposed.json().request;
    expect(request).toMatchObject({ action: 'withdrawals.approve_large', state: 'pending', subject: `withdrawal:${id}` });
    expect(await stateOf(id)).toBe('requested');
    expect((await desk(bob)).waiting.find((item: { id: string }) => item.id === id).request).toMatchObject({ id: request.id });
    expect((await post(ann, `/api/ops/requests/${request.id}/approve`)).json().code).toBe('ops_four_eyes');
    const confirmed = await post(bob, `/api/ops/requests/${request.id}/approve`);
    expect(confirmed.statusCode, confirmed.body).toBe(200);
    expect(await stateOf(id)).toBe('approved');
    expect((await desk(bob)).waiting.find((item: { id: string }) => item.id === id)).toBeUndefined();
  });

  it('a rejection gives the customer a reason from the catalogue in their language and releases the hold', async () => {
    const user = await customer();
    const id = await withdraw(user, '20000', 'ru');
    expect(await heldBalance(ctx.db, user.id, 'RUB')).toBeGreaterThan(0n);
    const [ann] = await finance();
    const bad = await post(ann, `/api/ops/withdrawals/${id}/reject`, { reason: 'because' });
    expect(bad.statusCode).toBe(400);
    const rejected = await post(ann, `/api/ops/withdrawals/${id}/reject`, { reason: 'details_invalid', text: 'card closed' });
    expect(rejected.statusCode, rejected.body).toBe(200);
    expect(await userBalance(ctx.db, user.id, 'RUB')).toBe(10_000_000n);
    expect(await heldBalance(ctx.db, user.id, 'RUB')).toBe(0n);
    const seen = await call(ctx.app, `/api/withdraw/status/${id}`, { token: user.token, locale: 'ru' });
    expect(seen.json().withdrawal).toMatchObject({ state: 'rejected', reason: 'Реквизиты для выплаты неверны или неполны: card closed' });
    const [row] = await ctx.db.query<{ actor: string }>("SELECT operator AS actor FROM operator_audit WHERE action = 'withdraw:reject' AND subject = $1", [id]);
    expect(row!.actor).toContain(ann.email);
  });

  it('a payout stuck at its provider is handed over again or given up, the hold released; the ledger stays clean', async () => {
    const user = await customer();
    const [stuck, lost] = [await withdraw(user, '15000'), await withdraw(user, '16000')];
    const [ann] = await finance();
    for (const id of [stuck, lost]) expect((await post(ann, `/api/ops/withdrawals/${id}/approve`)).json().state).toBe('processing');
    await ctx.db.query("UPDATE withdrawals SET expected_at = $2::timestamptz - interval '1 hour' WHERE public_id = ANY($1::uuid[])", [
      [stuck, lost],
      clock.now(),
    ]);
    const troubled = (await desk(ann)).troubled.filter((row: { id: string }) => row.id === stuck || row.id === lost);
    expect(troubled).toEqual([expect.objectContaining({ state: 'processing', stuck: true }), expect.objectContaining({ state: 'processing', stuck: true })]);

    const retried = await post(ann, `/api/ops/withdrawals/${stuck}/retry`);
    expect(retried.json()).toMatchObject({ state: 'processing' });
    const failed = await post(ann, `/api/ops/withdrawals/${lost}/mark-failed`);
    expect(failed.json()).toMatchObject({ state: 'failed' });
    expect(await heldBalance(ctx.db, user.id, 'RUB')).toBe(1_500_000n);
    expect((await desk(ann)).troubled.find((row: { id: string }) => row.id === lost)).toMatchObject({ state: 'failed', stuck: false });
    expect((await post(ann, `/api/ops/withdrawals/${lost}/retry`)).json().code).toBe('withdrawal_state');
    expect(await checkLedger(ctx.db)).toMatchObject({ ok: true });
    expect(await verifyAuditChain(ctx.db)).toMatchObject({ intact: true });
  });

  it('a support operator sees nothing of the desk', async () => {
    const support = await operatorWith(ctx, clock, ['support']);
    await stepUpOperator(ctx.app, clock, support);
    expect((await call(ctx.app, '/api/ops/withdrawals', asOperator(support.token))).json().code).toBe('ops_forbidden');
    const me = (await call(ctx.app, '/api/ops/me', asOperator(support.token))).json().operator;
    expect(me.permissions).not.toContain('withdrawals.review');
    expect(me.permissions).not.toContain('ledger.adjust');
  });

  it('withdraw:approve, retry and fail read one id and the operator --as; a waiting request is no payout to give up', async () => {
    const run = (name: string, ...args: string[]) => WITHDRAW_COMMANDS[name]!(ctx.db, args);
    const user = await customer();
    const id = await withdraw(user, '12000');
    const [ann] = await finance();
    for (const name of ['withdraw:approve', 'withdraw:retry', 'withdraw:fail']) {
      await expect(run(name, id)).rejects.toThrow(new RegExp(`usage: ${name} `));
      await expect(run(name, '--as', ann.email)).rejects.toThrow(new RegExp(`usage: ${name} `));
      await expect(run(name, id, id, '--as', ann.email)).rejects.toThrow(new RegExp(`usage: ${name} `));
      await expect(run(name, id, '--as', 'nobody@obmen.test')).rejects.toThrow(/no enrolled/);
    }
    await expect(run('withdraw:fail', id, '--as', ann.email)).rejects.toThrow();
    expect(await stateOf(id)).toBe('requested');
  });
});
