import { describe, expect, it } from 'vitest';
import type { TSuspenseItem } from '@obmen/shared';
import { ENGINES } from '../../helpers.ts';
import { call } from '../../auth-helpers.ts';
import { createFixtureUser, fund, type TFixtureUser } from '../../fixtures.ts';
import { asOperator, operatorWith, stepUpOperator, type TTestOperator, useOpsApp } from '../../ops-helpers.ts';
import { verifyAuditChain } from '../../../src/domains/audit/service.ts';
import { userBalance } from '../../../src/domains/ledger/service.ts';
import { registeredPaymentProviders } from '../../../src/domains/payments/providers.ts';
import { setAutoApproval } from '../../../src/domains/payments/withdrawals.ts';
import { runSandboxPayouts } from '../../../src/providers/sandbox/payouts.ts';
import { WITHDRAW_COMMANDS } from '../../../src/cli/withdraw.ts';

const CARD = { card_number: '4111 1111 1111 1111', card_holder: 'IVAN PETROV' };

describe.each(ENGINES)('reconciliation on %s', (engine) => {
  const ctx = useOpsApp(engine);
  const clock = ctx.clock;
  let keys = 0;
  const today = () => clock.now().toISOString().slice(0, 10);
  const period = () => `provider=sandbox-card&from=${today()}&to=${today()}`;

  const post = (op: TTestOperator, url: string, payload: object = {}) => call(ctx.app, url, { payload, ...asOperator(op.token), locale: 'en' });
  const report = async (op: TTestOperator) => {
    const answer = await call(ctx.app, `/api/ops/reconciliation?${period()}`, { ...asOperator(op.token), locale: 'en' });
    expect(answer.statusCode, answer.body).toBe(200);
    return answer.json() as { ok: boolean; differences: TSuspenseItem[]; suspense: TSuspenseItem[] };
  };

  /** A small withdrawal (approved without an operator), paid by the sandbox at once. */
  async function paidWithdrawal(user: TFixtureUser): Promise<string> {
    const answer = await call(ctx.app, '/api/withdraw/form/sandbox-card', {
      token: user.token,
      payload: { amount: '1000', currency: 'RUB', ...CARD },
      locale: 'en',
      headers: { 'idempotency-key': `recon-${++keys}-${engine}` },
    });
    expect(answer.statusCode, answer.body).toBe(200);
    const id = answer.json().withdrawal.id as string;
    const providers = new Map([...registeredPaymentProviders()].map((provider) => [provider.id, provider]));
    await runSandboxPayouts(ctx.db, providers, clock.now(), { reference: id, force: true, outcome: 'succeeded' });
    const [row] = await ctx.db.query<{ state: string }>('SELECT state FROM withdrawals WHERE public_id = $1', [id]);
    expect(row?.state).toBe('paid');
    return id;
  }

  it('lists each difference once, explains one, settles another by an adjustment a second operator approves; support may not see it', async () => {
    await setAutoApproval(ctx.db, 'RUB', '2000');
    const user = await createFixtureUser(ctx.db);
    await ctx.db.query('UPDATE users SET verification_level = 1 WHERE id = $1', [user.id]);
    await fund(ctx.db, user.id, 'RUB', 10_000_000n);
    const ann = await operatorWith(ctx, clock, ['finance']);
    const bob = await operatorWith(ctx, clock, ['finance']);
    const sue = await operatorWith(ctx, clock, ['support']);

    const short = await paidWithdrawal(user);
    const unknown = await paidWithdrawal(user);
    const clean = await report(ann);
    expect(clean.differences.filter((item) => item.kind !== 'clearing_mismatch')).toEqual([]);
    // The ledger dates its transactions by the database's clock: the daily summary over any period holding today.
    const wide = await call(ctx.app, '/api/ops/reconciliation?provider=sandbox-card&from=2020-01-01&to=2099-12-31', asOperator(ann.token));
    const days = (wide.json().daily as Array<{ currency: string; increase: string; transactions: number }>).filter((day) => day.currency === 'RUB');
    expect(days.reduce((sum, day) => sum + Number(day.increase), 0)).toBe(1880);
    expect(days.reduce((sum, day) => sum + day.transactions, 0)).toBe(2);

    // The provider's book: a payout we never asked for, one of another amount, and one missing.
    await ctx.db.query(
      `INSERT INTO sandbox_payouts (provider_ref, provider, reference, currency, amount, destination, state, created_at, due_at, settled_at, reported_at)
       VALUES ('po_ghost_${engine}', 'sandbox-card', 'ghost-${engine}', 'RUB', 777, 'x', 'succeeded', $1, $1, $1, $1)`,
      [clock.now()],
    );
    await ctx.db.query('UPDATE sandbox_payouts SET amount = amount - 100 WHERE reference = $1', [short]);
    await ctx.db.query('DELETE FROM sandbox_payouts WHERE reference = $1', [unknown]);

    const first = await report(ann);
    expect(first.ok).toBe(false);
    const kinds = new Map(first.differences.map((item) => [item.reference, item]));
    expect(kinds.get(`ghost-${engine}`)).toMatchObject({ kind: 'payout_missing_in_ledger', provider_amount: '7.77', ledger_amount: null, state: 'open' });
    expect(kinds.get(short)).toMatchObject({ kind: 'amount_mismatch', provider_amount: '939.00', ledger_amount: '940.00' });
    expect(kinds.get(unknown)).toMatchObject({ kind: 'payout_unknown_to_provider', provider_amount: null, ledger_amount: '940.00' });

    // Run again (and from the command line, the same service): the same items, each recorded once.
    const second = await report(ann);
    expect(second.differences.map((item) => item.id)).toEqual(first.differences.map((item) => item.id));
    const printed = (await WITHDRAW_COMMANDS['payments:reconcile']!(ctx.db, [`from=${today()}`, `to=${today()}`, 'provider=sandbox-card'])) as {
      differences: TSuspenseItem[];
    };
    process.exitCode = 0;
    expect(printed.differences.map((item) => item.id).sort()).toEqual(first.differences.map((item) => item.id).sort());
    const [stored] = await ctx.db.query<{ n: number }>('SELECT count(*)::int AS n FROM reconciliation_suspense WHERE reference = ANY($1::text[])', [
      [`ghost-${engine}`, short, unknown],
    ]);
    expect(stored?.n).toBe(3);

    const csv = await call(ctx.app, `/api/ops/reconciliation?${period()}&format=csv`, asOperator(ann.token));
    expect(csv.headers['content-type']).toMatch(/^text\/csv/);
    expect(csv.body.split('\r\n')[0]).toBe('id,kind,provider,currency,reference,provider_amount,ledger_amount,found_at,state');
    expect(csv.body).toContain(`,payout_missing_in_ledger,sandbox-card,RUB,ghost-${engine},7.77,,`);

    const forbidden = await call(ctx.app, `/api/ops/reconciliation?${period()}`, asOperator(sue.token));
    expect({ status: forbidden.statusCode, code: forbidden.json().code }).toEqual({ status: 403, code: 'ops_forbidden' });
    const queueOf = async () =>
      (await call(ctx.app, '/api/ops/queues', asOperator(ann.token))).json().queues.find((queue: { name: string }) => queue.name === 'suspense');
    const waiting = (await queueOf()).count as number;
    expect(waiting).toBeGreaterThanOrEqual(3);

    // Explained in words: resolved, on the audit trail, and not twice.
    const ghost = kinds.get(`ghost-${engine}`)!;
    await stepUpOperator(ctx.app, clock, ann);
    const empty = await post(ann, `/api/ops/reconciliation/suspense/${ghost.id}/explain`, { text: ' ' });
    expect(empty.statusCode).toBe(400);
    const explained = await post(ann, `/api/ops/reconciliation/suspense/${ghost.id}/explain`, { text: 'test payout of the provider, refunded by them' });
    expect(explained.statusCode, explained.body).toBe(200);
    expect(explained.json().item).toMatchObject({ state: 'resolved', explanation: 'test payout of the provider, refunded by them', resolved_by: ann.email });
    expect((await post(ann, `/api/ops/reconciliation/suspense/${ghost.id}/explain`, { text: 'again' })).json().code).toBe('suspense_resolved');
    expect((await post(ann, '/api/ops/reconciliation/suspense/999999999/explain', { text: 'x' })).json().code).toBe('suspense_not_found');
    const bySupport = await post(sue, `/api/ops/reconciliation/suspense/${ghost.id}/explain`, { text: 'x' });
    expect(bySupport.statusCode).toBe(403);

    // Settled by an adjustment: a ledger.adjust request; nothing moves until a second operator approves it.
    const before = await userBalance(ctx.db, user.id, 'RUB');
    const item = kinds.get(unknown)!;
    const proposed = await post(ann, `/api/ops/reconciliation/suspense/${item.id}/adjust`, {
      account_id: user.accountId,
      currency: 'RUB',
      amount: '10',
      direction: 'credit',
      reason: 'correction',
      memo: `suspense ${item.id}`,
    });
    expect(proposed.statusCode, proposed.body).toBe(200);
    const request = proposed.json().item.request as { id: string; state: string };
    expect(proposed.json().item).toMatchObject({ state: 'proposed', request: { state: 'pending' } });
    expect(await userBalance(ctx.db, user.id, 'RUB')).toBe(before);
    const again = await post(ann, `/api/ops/reconciliation/suspense/${item.id}/adjust`, {
      account_id: user.accountId,
      currency: 'RUB',
      amount: '10',
      direction: 'credit',
      reason: 'correction',
      memo: 'twice',
    });
    expect(again.statusCode).toBe(409);
    expect((await post(ann, `/api/ops/requests/${request.id}/approve`)).json().code).toBe('ops_four_eyes');
    await stepUpOperator(ctx.app, clock, bob);
    const approved = await post(bob, `/api/ops/requests/${request.id}/approve`);
    expect(approved.statusCode, approved.body).toBe(200);
    expect(await userBalance(ctx.db, user.id, 'RUB')).toBe(before + 1000n);
    const after = (await report(bob)).suspense.find((entry) => entry.id === item.id);
    expect(after).toMatchObject({ state: 'resolved', resolved_by: bob.email, request: { id: request.id, state: 'approved' } });
    expect((await queueOf()).count).toBe(waiting - 2);

    const actions = (await ctx.db.query<{ action: string }>(`SELECT action FROM operator_audit WHERE action LIKE 'reconciliation.%'`)).map((row) => row.action);
    expect(actions).toEqual(expect.arrayContaining(['reconciliation.run', 'reconciliation.explain', 'reconciliation.propose_adjustment']));
    expect(await verifyAuditChain(ctx.db)).toMatchObject({ intact: true });
  });
});
