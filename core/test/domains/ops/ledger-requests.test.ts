import { describe, expect, it } from 'vitest';
import { ENGINES } from '../../helpers.ts';
import { call } from '../../auth-helpers.ts';
import { createFixtureUser, fund, type TFixtureUser } from '../../fixtures.ts';
import { asOperator, operatorWith, stepUpOperator, type TTestOperator, useOpsApp } from '../../ops-helpers.ts';
import { verifyAuditChain } from '../../../src/domains/audit/service.ts';
import { checkLedger } from '../../../src/domains/ledger/invariants.ts';
import { placeHold } from '../../../src/domains/ledger/holds.ts';
import { userBalance } from '../../../src/domains/ledger/service.ts';

describe.each(ENGINES)('money by four eyes on %s', (engine) => {
  const ctx = useOpsApp(engine);
  const clock = ctx.clock;

  const post = (op: TTestOperator, url: string, payload: object = {}) => call(ctx.app, url, { payload, ...asOperator(op.token), locale: 'en' });
  const usdt = (cust: TFixtureUser) => userBalance(ctx.db, cust.id, 'USDT');
  const adjustment = (cust: TFixtureUser, amount: string, direction: 'credit' | 'debit' = 'credit') => ({
    action: 'ledger.adjust',
    params: { account_id: cust.accountId, currency: 'USDT', amount, direction, reason: 'compensation', memo: 'outage on 26 November' },
    reason: 'customer_request',
  });
  /** Two finance operators, both with a fresh second factor. */
  async function financePair(): Promise<[TTestOperator, TTestOperator]> {
    const pair: [TTestOperator, TTestOperator] = [await operatorWith(ctx, clock, ['finance']), await operatorWith(ctx, clock, ['finance'])];
    for (const op of pair) await stepUpOperator(ctx.app, clock, op);
    return pair;
  }
  const ledgerRows = (requestId: string) =>
    ctx.db.query<{ id: string; kind: string; memo: string }>('SELECT id::text, kind, memo FROM ledger_transactions WHERE actor = $1', [
      `ops_request:${requestId}`,
    ]);

  it('a credit runs only when a second finance operator approves it: one ledger transaction, the wallet event, the audit chain', async () => {
    const cust = await createFixtureUser(ctx.db);
    const [ann, bob] = await financePair();
    const proposed = await post(ann, '/api/ops/requests', adjustment(cust, '50'));
    expect(proposed.statusCode, proposed.body).toBe(200);
    const { id } = proposed.json().request;
    expect(proposed.json().request).toMatchObject({ state: 'pending', mine: true, subject: `customer:${cust.accountId}` });
    expect(await usdt(cust)).toBe(0n);

    const self = await post(ann, `/api/ops/requests/${id}/approve`);
    expect({ status: self.statusCode, code: self.json().code }).toEqual({ status: 409, code: 'ops_four_eyes' });
    const listed = (await call(ctx.app, `/api/ops/requests?account_id=${cust.accountId}`, asOperator(bob.token))).json();
    expect(listed.pending.map((request: { id: string }) => request.id)).toEqual([id]);

    const seqBefore = await ctx.db.query<{ n: string }>('SELECT count(*)::text AS n FROM events WHERE user_id = $1', [cust.id]);
    const approved = await post(bob, `/api/ops/requests/${id}/approve`);
    expect(approved.statusCode, approved.body).toBe(200);
    expect(approved.json().request).toMatchObject({ state: 'approved', decided_by: bob.email });
    expect(await usdt(cust)).toBe(50_000_000n);
    expect(await ledgerRows(id)).toEqual([expect.objectContaining({ kind: 'adjustment', memo: 'compensation: outage on 26 November' })]);
    const events = await ctx.db.query<{ type: string }>('SELECT type FROM events WHERE user_id = $1 ORDER BY seq OFFSET $2', [
      cust.id,
      Number(seqBefore[0]!.n),
    ]);
    expect(events).toEqual([{ type: 'wallets' }]);
    // The other side is the adjustment account named by the reason.
    const [house] = await ctx.db.query<{ balance: string }>(
      "SELECT balance::text FROM ledger_accounts WHERE kind = 'adjustment' AND currency = 'USDT' AND name = 'compensation'",
    );
    expect(BigInt(house!.balance)).toBeLessThanOrEqual(-50_000_000n);
    expect(await verifyAuditChain(ctx.db)).toMatchObject({ intact: true });
    expect(await checkLedger(ctx.db)).toMatchObject({ ok: true });
  });

  it('a debit beyond the balance is refused at approval and the request stays pending; bad amounts are refused at proposal', async () => {
    const cust = await createFixtureUser(ctx.db);
    await fund(ctx.db, cust.id, 'USDT', 10_000_000n);
    const [ann, bob] = await financePair();
    for (const amount of ['0', '1.1234567', 'ten']) {
      const refused = await post(ann, '/api/ops/requests', adjustment(cust, amount, 'debit'));
      expect(refused.statusCode, amount).toBeGreaterThanOrEqual(400);
    }
    // Nothing typed: each field says what it needs (the form shows them by name).
    const empty = await post(ann, '/api/ops/requests', { ...adjustment(cust, ''), params: { ...adjustment(cust, '').params, memo: '' } });
    expect(empty.statusCode).toBe(400);
    expect(Object.keys(empty.json().fields).sort()).toEqual(['params.amount', 'params.memo']);
    const { id } = (await post(ann, '/api/ops/requests', adjustment(cust, '25', 'debit'))).json().request;
    const refused = await post(bob, `/api/ops/requests/${id}/approve`);
    expect({ status: refused.statusCode, code: refused.json().code }).toEqual({ status: 422, code: 'insufficient_funds' });
    expect(refused.json().message).toContain('10');
    expect(await usdt(cust)).toBe(10_000_000n);
    expect(await ledgerRows(id)).toEqual([]);
    const [row] = await ctx.db.query<{ state: string }>('SELECT state FROM ops_requests WHERE id = $1', [id]);
    expect(row!.state).toBe('pending');
    expect((await post(bob, `/api/ops/requests/${id}/decline`)).json().request.state).toBe('declined');
  });

  it('a reversal of a transaction of this customer, approved by another operator; never twice, never of a stranger; the ledger stays clean', async () => {
    const [cust, stranger] = [await createFixtureUser(ctx.db), await createFixtureUser(ctx.db)];
    const [ann, bob] = await financePair();
    const credit = (await post(ann, '/api/ops/requests', adjustment(cust, '7.5'))).json().request;
    await post(bob, `/api/ops/requests/${credit.id}/approve`);
    const [{ id: transaction } = { id: '' }] = await ledgerRows(credit.id);
    const reverse = (account_id: number) => ({
      action: 'ledger.reverse',
      params: { account_id, transaction_id: transaction, memo: 'credited twice' },
      reason: 'customer_request',
    });
    const stranger_ = await post(ann, '/api/ops/requests', reverse(stranger.accountId));
    expect({ status: stranger_.statusCode, code: stranger_.json().code }).toEqual({ status: 404, code: 'transaction_not_found' });
    const proposed = await post(bob, '/api/ops/requests', reverse(cust.accountId));
    expect(proposed.statusCode, proposed.body).toBe(200);
    expect(proposed.json().request.subject).toBe(`ledger_transaction:${transaction}`);
    const approved = await post(ann, `/api/ops/requests/${proposed.json().request.id}/approve`);
    expect(approved.statusCode, approved.body).toBe(200);
    expect(await usdt(cust)).toBe(0n);
    const again = await post(bob, '/api/ops/requests', reverse(cust.accountId));
    expect(again.json().code).toBe('already_reversed');
    // A transaction that moved held money is ended by its own state machine, never reversed.
    await fund(ctx.db, cust.id, 'USDT', 2_000_000n);
    await ctx.db.transaction((tx) => placeHold(tx, { userId: cust.id, currency: 'USDT', amount: 1_000_000n, purpose: 'test hold' }));
    const [held] = await ctx.db.query<{ id: string }>(
      "SELECT p.transaction_id::text AS id FROM postings p JOIN ledger_accounts a ON a.id = p.account_id WHERE a.kind = 'hold' AND a.holder_id = $1 ORDER BY p.id DESC LIMIT 1",
      [cust.id],
    );
    const hold = await post(bob, '/api/ops/requests', { ...reverse(cust.accountId), params: { ...reverse(cust.accountId).params, transaction_id: held!.id } });
    expect({ status: hold.statusCode, code: hold.json().code }).toEqual({ status: 409, code: 'ops_reverse_hold' });
    expect(await checkLedger(ctx.db)).toMatchObject({ ok: true });
  });

  it('the database refuses the proposer approving their own adjustment even past the service; a lapsed request is never approved', async () => {
    const cust = await createFixtureUser(ctx.db);
    const [ann, bob] = await financePair();
    const { id } = (await post(ann, '/api/ops/requests', adjustment(cust, '1'))).json().request;
    await expect(
      ctx.db.query("UPDATE ops_requests SET state = 'approved', decided_by = proposed_by, decided_at = now() WHERE id = $1", [id]),
    ).rejects.toMatchObject({ message: expect.stringContaining('ops_four_eyes') });
    clock.tick(24 * 60 * 60_000 + 1000);
    const carol = await operatorWith(ctx, clock, ['finance']);
    const lapsed = await post(carol, `/api/ops/requests/${id}/approve`);
    expect(lapsed.json().code).toBe('ops_request_closed');
    expect(await usdt(cust)).toBe(0n);
    expect(bob.email).not.toBe(carol.email);
  });

  it('operators without ledger.adjust can neither propose nor approve money', async () => {
    const cust = await createFixtureUser(ctx.db);
    const [ann] = await financePair();
    for (const roles of [['support'], ['compliance'], ['admin']]) {
      const other = await operatorWith(ctx, clock, roles);
      await stepUpOperator(ctx.app, clock, other);
      expect((await post(other, '/api/ops/requests', adjustment(cust, '1'))).json().code).toBe('ops_forbidden');
    }
    const { id } = (await post(ann, '/api/ops/requests', adjustment(cust, '1'))).json().request;
    const support = await operatorWith(ctx, clock, ['support']);
    await stepUpOperator(ctx.app, clock, support);
    expect((await post(support, `/api/ops/requests/${id}/approve`)).json().code).toBe('ops_forbidden');
    expect(await usdt(cust)).toBe(0n);
  });

  it.runIf(engine === 'postgres')('20 concurrent approvals of one request apply it once', async () => {
    const cust = await createFixtureUser(ctx.db);
    const [ann] = await financePair();
    const { id } = (await post(ann, '/api/ops/requests', adjustment(cust, '3'))).json().request;
    const approvers: TTestOperator[] = [];
    for (let i = 0; i < 20; i++) approvers.push(await operatorWith(ctx, clock, ['finance']));
    // Signing 20 in takes ten TOTP steps: every session's second factor counts as given now.
    await ctx.db.query('UPDATE ops_sessions SET second_factor_at = $1, last_seen_at = $1 WHERE revoked_at IS NULL', [clock.now()]);
    const answers = await Promise.all(approvers.map((op) => post(op, `/api/ops/requests/${id}/approve`)));
    expect(answers.filter((answer) => answer.statusCode === 200)).toHaveLength(1);
    expect(new Set(answers.filter((answer) => answer.statusCode !== 200).map((answer) => answer.json().code))).toEqual(new Set(['ops_request_closed']));
    expect(await ledgerRows(id)).toHaveLength(1);
    expect(await usdt(cust)).toBe(3_000_000n);
  });
});
