import { describe, expect, it } from 'vitest';
import { type TEngine, ENGINES, testConfig } from '../../helpers.ts';
import { call } from '../../auth-helpers.ts';
import { createFixtureUser, type TFixtureUser } from '../../fixtures.ts';
import { asOperator, operatorWith, stepUpOperator, type TTestOperator, useOpsApp } from '../../ops-helpers.ts';
import { verifyAuditChain } from '../../../src/domains/audit/service.ts';
import { checkLedger } from '../../../src/domains/ledger/invariants.ts';
import { userBalance } from '../../../src/domains/ledger/service.ts';
import { loadPaymentProviders } from '../../../src/providers/index.ts';
import { bankReceived, chainMine, chainSend } from '../../../src/providers/sandbox/payments.ts';

const providers = loadPaymentProviders(testConfig());

const cases: Array<[TEngine, boolean]> = ENGINES.map((engine) => [engine, engine === 'postgres']);

describe.each(cases)('the payments desk on %s', (engine, concurrent) => {
  const ctx = useOpsApp(engine);
  const clock = ctx.clock;

  const post = (op: TTestOperator, url: string, payload: object = {}) => call(ctx.app, url, { payload, ...asOperator(op.token), locale: 'en' });
  const desk = async (op: TTestOperator, q?: string) => {
    const answer = await call(ctx.app, `/api/ops/payments${q ? `?q=${encodeURIComponent(q)}` : ''}`, asOperator(op.token));
    expect(answer.statusCode, answer.body).toBe(200);
    return answer.json();
  };
  const depositState = async (id: string) =>
    (await ctx.db.query<{ state: string; amount: string }>('SELECT state, amount::text AS amount FROM payments WHERE public_id = $1', [id]))[0];

  async function customer(): Promise<TFixtureUser> {
    const user = await createFixtureUser(ctx.db);
    await ctx.db.query(`UPDATE verification_limits SET per_24h = 100000000, per_30d = 100000000 WHERE operation = 'deposit'`);
    return user;
  }
  /** A bank deposit the customer opened: its id and the reference to quote. */
  async function bankDeposit(user: TFixtureUser, amount: string): Promise<{ id: string; reference: string; receive: string }> {
    const answer = await call(ctx.app, '/api/deposit/integration_json', {
      token: user.token,
      payload: { ps: 'sandbox-bank', currency: 'RUB', amount },
      locale: 'en',
    });
    expect(answer.statusCode, answer.body).toBe(200);
    const { payment } = answer.json();
    return { id: payment.id, reference: payment.bank.reference, receive: payment.receive };
  }
  /** A transfer the bank got quoting a reference no deposit has: held for an operator. */
  async function heldTransfer(reference: string, amount: string, payer = 'Ivan Petrov'): Promise<string> {
    const sent = await bankReceived(ctx.db, providers, { reference, amount, currency: 'RUB', payer, now: clock.now() });
    expect(sent.result).toBe('unknown_payment');
    const [row] = await ctx.db.query<{ id: string }>("SELECT id::text AS id FROM bank_payments_held WHERE reference = $1 AND state = 'held'", [reference]);
    return row!.id;
  }
  async function finance(): Promise<[TTestOperator, TTestOperator]> {
    const pair: [TTestOperator, TTestOperator] = [await operatorWith(ctx, clock, ['finance']), await operatorWith(ctx, clock, ['finance'])];
    for (const op of pair) await stepUpOperator(ctx.app, clock, op);
    return pair;
  }
  let serial = 0;
  const reference = () => `OBM-TYPO${engine === 'postgres' ? 'P' : 'G'}${++serial}`;

  it('a transfer quoting an unknown reference is held and listed, found by reference, payer or amount, with the deposits it may be for', async () => {
    const user = await customer();
    const deposit = await bankDeposit(user, '5000');
    const typo = reference();
    const id = await heldTransfer(typo, '5000', 'Maria Sidorova');
    const [ann] = await finance();
    const listed = await desk(ann);
    const item = listed.bank.find((row: { id: string }) => row.id === id);
    expect(item).toMatchObject({
      reference: typo,
      payer: 'Maria Sidorova',
      currency: 'RUB',
      amount: '5000.00',
      why: 'unknown_payment',
      overdue: false,
      request: null,
    });
    expect(item.candidates).toContainEqual(expect.objectContaining({ id: deposit.id, account_id: user.accountId, amount: '5000.00' }));
    expect(listed.targets.bank_unmatched).toBe(4 * 60 * 60_000);
    for (const q of [typo.slice(4).toLowerCase(), 'sidorova', '5000', '5000.00'])
      expect(
        (await desk(ann, q)).bank.map((row: { id: string }) => row.id),
        q,
      ).toContain(id);
    expect((await desk(ann, 'nobody-like-this')).bank).toEqual([]);
    // The payer's name is personal data: each look at the held payments is on the audit trail.
    const [viewed] = await ctx.db.query<{ n: number }>(
      "SELECT count(*)::int AS n FROM operator_audit WHERE action = 'payments.view_held' AND outcome = 'viewed' AND operator LIKE '%' || $1 || '%'",
      [ann.email],
    );
    expect(viewed!.n).toBeGreaterThanOrEqual(5);

    const queues = (await call(ctx.app, '/api/ops/queues', asOperator(ann.token))).json().queues;
    expect(queues.find((queue: { name: string }) => queue.name === 'bank_unmatched')).toMatchObject({ target_ms: 4 * 60 * 60_000 });
    expect(queues.find((queue: { name: string }) => queue.name === 'bank_unmatched').count).toBeGreaterThanOrEqual(1);
  });

  it('a chain deposit short of its confirmations waits on the desk against its clock, linking to its customer', async () => {
    const user = await customer();
    const opened = await call(ctx.app, '/api/deposit/integration_json', { token: user.token, payload: { ps: 'sandbox-chain', currency: 'ETH' }, locale: 'en' });
    expect(opened.statusCode, opened.body).toBe(200);
    await chainSend(ctx.db, providers, { outputs: [{ address: opened.json().address.address, amount: '0.05' }], now: clock.now() });
    const [ann] = await finance();
    const listed = await desk(ann);
    expect(listed.chain.find((row: { account_id: number }) => row.account_id === user.accountId)).toMatchObject({
      currency: 'ETH',
      amount: expect.stringMatching(/^0\.050*$/),
      confirmations: 0,
      overdue: false,
    });
    expect(listed.targets).toMatchObject({ chain_waiting: 2 * 60 * 60_000, card_orders: 24 * 60 * 60_000, webhooks_failed: 60 * 60_000 });
    const queues = (await call(ctx.app, '/api/ops/queues', asOperator(ann.token))).json().queues;
    expect(queues.map((queue: { name: string }) => queue.name)).toEqual(expect.arrayContaining(['webhooks_failed', 'chain_waiting', 'card_orders']));
  });

  it('a support operator sees nothing of the desk and can match nothing', async () => {
    const support = await operatorWith(ctx, clock, ['support']);
    await stepUpOperator(ctx.app, clock, support);
    expect((await call(ctx.app, '/api/ops/payments', asOperator(support.token))).json().code).toBe('ops_forbidden');
    const id = await heldTransfer(reference(), '100');
    const refused = await post(support, `/api/ops/payments/bank/${id}/match`, { deposit: 'OBM-ANYTHING' });
    expect({ status: refused.statusCode, code: refused.json().code }).toEqual({ status: 403, code: 'ops_forbidden' });
  });

  it('matching the expected amount credits the deposit at once, once, however often it is asked', async () => {
    const user = await customer();
    const deposit = await bankDeposit(user, '7000');
    const id = await heldTransfer(reference(), '7000');
    const [ann, bob] = await finance();
    const before = await userBalance(ctx.db, user.id, 'RUB');
    const first = await post(ann, `/api/ops/payments/bank/${id}/match`, { deposit: deposit.reference.toLowerCase() });
    expect(first.statusCode, first.body).toBe(200);
    expect(first.json()).toMatchObject({ state: 'credited', request: null });
    const again = await post(bob, `/api/ops/payments/bank/${id}/match`, { deposit: deposit.id });
    expect(again.json()).toMatchObject({ state: 'credited' });
    const credited = (await userBalance(ctx.db, user.id, 'RUB')) - before;
    expect(credited).toBe(BigInt(deposit.receive.replace('.', '')));
    expect(await depositState(deposit.id)).toMatchObject({ state: 'credited' });
    expect((await desk(ann)).bank.find((row: { id: string }) => row.id === id)).toBeUndefined();
    // Matched once: to another deposit it is refused.
    const other = await bankDeposit(user, '7000');
    expect((await post(ann, `/api/ops/payments/bank/${id}/match`, { deposit: other.id })).json().code).toBe('bank_payment_matched');
    const [audit] = await ctx.db.query<{ n: number }>("SELECT count(*)::int AS n FROM operator_audit WHERE action = 'payments.match' AND subject = $1", [
      `customer:${user.accountId}`,
    ]);
    expect(audit!.n).toBe(1);
    expect(await checkLedger(ctx.db)).toMatchObject({ ok: true });
  });

  it.runIf(concurrent)('two operators matching at the same moment credit the deposit once', async () => {
    const user = await customer();
    const deposit = await bankDeposit(user, '3000');
    const id = await heldTransfer(reference(), '3000');
    const [ann, bob] = await finance();
    const before = await userBalance(ctx.db, user.id, 'RUB');
    const answers = await Promise.all([ann, bob, ann, bob].map((op) => post(op, `/api/ops/payments/bank/${id}/match`, { deposit: deposit.id })));
    for (const answer of answers) expect(answer.statusCode, answer.body).toBe(200);
    expect((await userBalance(ctx.db, user.id, 'RUB')) - before).toBe(BigInt(deposit.receive.replace('.', '')));
    const [postings] = await ctx.db.query<{ n: number }>(
      'SELECT count(*)::int AS n FROM payments p JOIN ledger_transactions t ON t.id = p.ledger_transaction_id WHERE p.public_id = $1',
      [deposit.id],
    );
    expect(postings!.n).toBe(1);
  });

  it('another amount becomes a request: the proposer cannot approve it, a second operator can, and the deposit is credited with what arrived', async () => {
    const user = await customer();
    const deposit = await bankDeposit(user, '5000');
    // The payer quoted the right reference but sent less: the inbox holds it (amount_mismatch).
    const sent = await bankReceived(ctx.db, providers, { reference: deposit.reference, amount: '4500', now: clock.now() });
    expect(sent.result).toBe('amount_mismatch');
    const [held] = await ctx.db.query<{ id: string; why: string }>('SELECT id::text AS id, why FROM bank_payments_held WHERE reference = $1', [
      deposit.reference,
    ]);
    expect(held!.why).toBe('amount_mismatch');
    const [ann, bob] = await finance();
    const before = await userBalance(ctx.db, user.id, 'RUB');
    const proposed = await post(ann, `/api/ops/payments/bank/${held!.id}/match`, { deposit: deposit.reference });
    expect(proposed.statusCode, proposed.body).toBe(200);
    const request = proposed.json().request;
    expect(proposed.json().state).toBe('requested');
    expect(request).toMatchObject({
      action: 'payments.match',
      state: 'pending',
      subject: `bank_payment:${held!.id}`,
      params: { deposit_id: deposit.id, currency: 'RUB', amount: '4500.00', expected: '5000.00' },
    });
    expect(await userBalance(ctx.db, user.id, 'RUB')).toBe(before);
    expect((await desk(bob)).bank.find((row: { id: string }) => row.id === held!.id).request).toMatchObject({ id: request.id });
    expect((await post(ann, `/api/ops/requests/${request.id}/approve`)).json().code).toBe('ops_four_eyes');
    // A proposal through the generic route with amounts other than the real ones is refused.
    const forged = await post(bob, '/api/ops/requests', {
      action: 'payments.match',
      params: { bank_payment_id: held!.id, deposit_id: deposit.id, currency: 'RUB', amount: '5000', expected: '5000.00' },
      reason: 'customer_request',
    });
    expect(forged.statusCode).toBe(400);
    const approved = await post(bob, `/api/ops/requests/${request.id}/approve`);
    expect(approved.statusCode, approved.body).toBe(200);
    expect(await depositState(deposit.id)).toEqual({ state: 'credited', amount: '450000' });
    const credited = (await userBalance(ctx.db, user.id, 'RUB')) - before;
    expect(credited > 0n && credited <= 450_000n).toBe(true);
    expect(await checkLedger(ctx.db)).toMatchObject({ ok: true });
    expect(await verifyAuditChain(ctx.db)).toMatchObject({ intact: true });
  });

  it('a delivery whose processing failed is listed with its error, attempts and next retry, and replayed through the inbox once', async () => {
    const user = await customer();
    const deposit = await bankDeposit(user, '2000');
    const body = JSON.stringify({ id: `bank_failed_${engine}`, type: 'payment.paid', payment_id: deposit.id, amount: '2000.00', currency: 'RUB' });
    const [stored] = await ctx.db.query<{ id: string }>(
      `INSERT INTO payment_webhooks (provider, raw_body, signature, signature_valid, event_id, received_at, attempts, last_error, next_attempt_at)
       VALUES ('sandbox-bank', $1, 'sig', true, $2, $3::timestamptz - interval '2 hours', 3, 'database went away', $3::timestamptz + interval '1 minute')
       RETURNING id::text AS id`,
      [Buffer.from(body), `bank_failed_${engine}`, clock.now()],
    );
    const [ann] = await finance();
    const row = (await desk(ann)).webhooks.find((item: { id: string }) => item.id === stored!.id);
    expect(row).toMatchObject({ provider: 'sandbox-bank', attempts: 3, last_error: 'database went away', overdue: true });
    expect(row.next_attempt_at).toBeTruthy();
    const before = await userBalance(ctx.db, user.id, 'RUB');
    const replayed = await post(ann, `/api/ops/payments/webhooks/${stored!.id}/replay`);
    expect(replayed.statusCode, replayed.body).toBe(200);
    expect(replayed.json()).toMatchObject({ result: 'credited', was_processed: false });
    const twice = await post(ann, `/api/ops/payments/webhooks/${stored!.id}/replay`);
    expect(twice.json()).toMatchObject({ result: 'duplicate', was_processed: true });
    expect((await userBalance(ctx.db, user.id, 'RUB')) - before).toBe(BigInt(deposit.receive.replace('.', '')));
    expect((await desk(ann)).webhooks.find((item: { id: string }) => item.id === stored!.id)).toBeUndefined();
    const [audit] = await ctx.db.query<{ n: number }>(
      "SELECT count(*)::int AS n FROM operator_audit WHERE action = 'payments.webhook_replay' AND subject = $1",
      [`payment_webhook:${stored!.id}`],
    );
    expect(audit!.n).toBe(2);
    expect((await post(ann, '/api/ops/payments/webhooks/999999999/replay')).statusCode).toBe(404);
  });

  it("a chain deposit above its customer's limits is held once confirmed, waits on the desk, and one release credits it once", async () => {
    const user = await customer();
    // Level 0 may bring in 10 USD a day: 0.05 ETH is worth more.
    await ctx.db.query(`UPDATE verification_limits SET per_24h = 1000, per_30d = 1000 WHERE operation = 'deposit' AND level = 0`);
    const opened = await call(ctx.app, '/api/deposit/integration_json', { token: user.token, payload: { ps: 'sandbox-chain', currency: 'ETH' }, locale: 'en' });
    expect(opened.statusCode, opened.body).toBe(200);
    await chainSend(ctx.db, providers, { outputs: [{ address: opened.json().address.address, amount: '0.05' }], now: clock.now() });
    await chainMine(ctx.db, providers, { blocks: 40, now: clock.now() });
    const [held] = await ctx.db.query<{ id: string; state: string; reason: string; held: boolean }>(
      `SELECT public_id::text AS id, state, reason, held_at IS NOT NULL AS held FROM payments WHERE user_id = $1 AND address IS NOT NULL`,
      [user.id],
    );
    expect(held).toMatchObject({ state: 'pending', reason: 'payments.held_over_limits', held: true });
    expect(await userBalance(ctx.db, user.id, 'ETH')).toBe(0n);
    // More blocks change nothing: only an operator releases it.
    await chainMine(ctx.db, providers, { blocks: 2, now: clock.now() });
    expect((await depositState(held!.id))!.state).toBe('pending');

    clock.tick(25 * 60 * 60_000);
    const [ann] = await finance();
    const row = (await desk(ann)).chain.find((item: { id: string }) => item.id === held!.id);
    expect(row).toMatchObject({ held_at: expect.any(String), confirmations: expect.any(Number), overdue: true });
    const queue = async () =>
      (await call(ctx.app, '/api/ops/queues', asOperator(ann.token))).json().queues.find((item: { name: string }) => item.name === 'chain_held');
    expect(await queue()).toMatchObject({ count: expect.any(Number), target_ms: 24 * 60 * 60_000 });
    const countBefore = (await queue()).count;
    expect(countBefore).toBeGreaterThanOrEqual(1);

    const released = await post(ann, `/api/ops/payments/chain/${held!.id}/release`);
    expect(released.statusCode, released.body).toBe(200);
    expect(released.json()).toEqual({ status: 'ok', state: 'credited' });
    expect((await depositState(held!.id))!.state).toBe('credited');
    expect(await userBalance(ctx.db, user.id, 'ETH')).toBeGreaterThan(0n);
    const again = await post(ann, `/api/ops/payments/chain/${held!.id}/release`);
    expect(again.statusCode).toBe(404);
    expect((await queue()).count).toBe(countBefore - 1);
    const [audit] = await ctx.db.query<{ after: { state: string; currency: string } }>(
      "SELECT after FROM operator_audit WHERE action = 'payments.chain_release' AND subject = $1",
      [`customer:${user.accountId}`],
    );
    expect(audit!.after).toMatchObject({ state: 'credited', currency: 'ETH' });
    expect(await checkLedger(ctx.db)).toMatchObject({ ok: true });

    // A deposit that is not held is not released: found nowhere.
    const support = await operatorWith(ctx, clock, ['support']);
    await stepUpOperator(ctx.app, clock, support);
    expect((await post(support, `/api/ops/payments/chain/${held!.id}/release`)).statusCode).toBe(403);
    expect((await post(ann, '/api/ops/payments/chain/00000000-0000-4000-8000-000000000000/release')).statusCode).toBe(404);
    expect((await post(ann, '/api/ops/payments/chain/not-a-uuid/release')).statusCode).toBe(400);
  });

  it("a card issuer's callback whose processing failed is on the same queue and replayed through its own inbox once", async () => {
    const eventId = `cb_failed_${engine}`;
    const body = JSON.stringify({ id: eventId, type: 'order.accepted', order: '00000000-0000-4000-8000-000000000001', reference: 'ISS-1' });
    const [stored] = await ctx.db.query<{ id: string }>(
      `INSERT INTO card_issuer_callbacks (issuer, raw_body, signature, signature_valid, event_id, received_at, attempts, last_error, next_attempt_at)
       VALUES ('sandbox', $1, 'sig', true, $2, $3::timestamptz - interval '3 hours', 2, 'issuer database timeout', $3::timestamptz + interval '1 minute')
       RETURNING id::text AS id`,
      [Buffer.from(body), eventId, clock.now()],
    );
    const [ann] = await finance();
    const row = (await desk(ann)).webhooks.find((item: { inbox: string; id: string }) => item.inbox === 'cards' && item.id === stored!.id);
    expect(row).toMatchObject({ provider: 'sandbox', event_id: eventId, attempts: 2, last_error: 'issuer database timeout', overdue: true });
    const replayed = await post(ann, `/api/ops/payments/callbacks/${stored!.id}/replay`);
    expect(replayed.statusCode, replayed.body).toBe(200);
    expect(replayed.json()).toMatchObject({ was_processed: false });
    expect(replayed.json().result).not.toBe('duplicate');
    const twice = await post(ann, `/api/ops/payments/callbacks/${stored!.id}/replay`);
    expect(twice.json()).toMatchObject({ result: 'duplicate', was_processed: true });
    expect((await desk(ann)).webhooks.find((item: { inbox: string; id: string }) => item.inbox === 'cards' && item.id === stored!.id)).toBeUndefined();
    const [audit] = await ctx.db.query<{ n: number }>(
      "SELECT count(*)::int AS n FROM operator_audit WHERE action = 'payments.webhook_replay' AND subject = $1",
      [`card_callback:${stored!.id}`],
    );
    expect(audit!.n).toBe(2);
    expect((await post(ann, '/api/ops/payments/callbacks/999999999/replay')).statusCode).toBe(404);
  });
});
