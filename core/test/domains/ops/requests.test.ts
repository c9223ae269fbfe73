import { describe, expect, it } from 'vitest';
import { ENGINES } from '../../helpers.ts';
import { call, freshEmail, signUp } from '../../auth-helpers.ts';
import { asOperator, operatorWith, stepUpOperator, type TTestOperator, useOpsApp } from '../../ops-helpers.ts';
import { verifyAuditChain } from '../../../src/domains/audit/service.ts';
import { secondFactorEnabled } from '../../../src/domains/security/second-factor.ts';

describe.each(ENGINES)('four eyes on %s', (engine) => {
  const ctx = useOpsApp(engine);
  const clockOf = ctx.clock;

  const post = (op: TTestOperator, url: string, payload: object = {}) => call(ctx.app, url, { payload, ...asOperator(op.token), locale: 'en' });
  const rolesOf = async (email: string) =>
    (
      await ctx.db.query<{ role: string }>('SELECT role FROM operator_roles r JOIN operators o ON o.id = r.operator_id WHERE o.email = $1 ORDER BY role', [
        email,
      ])
    ).map((row) => row.role);

  it('a role change runs only when a second operator approves it; the proposer can neither approve nor decline', async () => {
    const [ann, bob] = [await operatorWith(ctx, clockOf, ['admin']), await operatorWith(ctx, clockOf, ['admin'])];
    const target = await operatorWith(ctx, clockOf, ['support']);
    await stepUpOperator(ctx.app, clockOf, ann);
    const proposed = await post(ann, '/api/ops/requests', {
      action: 'operators.set_roles',
      params: { email: target.email, roles: ['support', 'compliance'] },
      reason: 'duty_changed',
    });
    expect(proposed.statusCode, proposed.body).toBe(200);
    const { id, state, mine } = proposed.json().request;
    expect({ state, mine }).toEqual({ state: 'pending', mine: true });
    expect(await rolesOf(target.email)).toEqual(['support']);

    const again = await post(ann, '/api/ops/requests', { action: 'operators.set_roles', params: { email: target.email, roles: [] }, reason: 'duty_changed' });
    expect(again.json().code).toBe('ops_request_pending');
    for (const decision of ['approve', 'decline']) {
      const self = await post(ann, `/api/ops/requests/${id}/${decision}`);
      expect({ status: self.statusCode, code: self.json().code }).toEqual({ status: 409, code: 'ops_four_eyes' });
    }
    expect(await rolesOf(target.email)).toEqual(['support']);

    await stepUpOperator(ctx.app, clockOf, bob);
    const approved = await post(bob, `/api/ops/requests/${id}/approve`);
    expect(approved.statusCode, approved.body).toBe(200);
    expect(approved.json().request).toMatchObject({ state: 'approved', decided_by: bob.email, mine: false });
    expect(await rolesOf(target.email)).toEqual(['compliance', 'support']);
    // Decided once: nothing changes it afterwards.
    expect((await post(bob, `/api/ops/requests/${id}/decline`)).json().code).toBe('ops_request_closed');
    const audit = await ctx.db.query<{ action: string }>("SELECT action FROM operator_audit WHERE details->>'request' = $1 ORDER BY id", [id]);
    expect(audit.map((row) => row.action)).toEqual(['request.propose:operators.set_roles', 'request.approve:operators.set_roles']);
    expect(await verifyAuditChain(ctx.db)).toMatchObject({ intact: true });
  });

  it('the database itself refuses a decision by the proposer and any change to a decided request', async () => {
    const ann = await operatorWith(ctx, clockOf, ['admin']);
    const target = await operatorWith(ctx, clockOf, ['content']);
    await stepUpOperator(ctx.app, clockOf, ann);
    const { id } = (
      await post(ann, '/api/ops/requests', { action: 'operators.set_roles', params: { email: target.email, roles: [] }, reason: 'duty_changed' })
    ).json().request;
    await expect(
      ctx.db.query("UPDATE ops_requests SET state = 'approved', decided_by = proposed_by, decided_at = now() WHERE id = $1", [id]),
    ).rejects.toMatchObject({ message: expect.stringContaining('ops_four_eyes') });
    await expect(ctx.db.query('DELETE FROM ops_requests WHERE id = $1', [id])).rejects.toMatchObject({
      message: expect.stringContaining('ops_request_closed'),
    });
    expect((await post(ann, `/api/ops/requests/${id}/withdraw`)).json().request.state).toBe('withdrawn');
    await expect(ctx.db.query("UPDATE ops_requests SET params = '{}'::jsonb WHERE id = $1", [id])).rejects.toMatchObject({
      message: expect.stringContaining('ops_request_closed'),
    });
  });

  it("a customer's second factor is reset by two compliance officers; one without the permission is refused and audited; undecided requests lapse after 24 hours", async () => {
    const email = freshEmail('lostphone');
    await signUp(ctx.app, ctx.db, email, 'correct horse battery', 'en');
    const [user] = await ctx.db.query<{ id: string; account_id: number }>('SELECT id::text, account_id FROM users WHERE lower(email) = $1', [email]);
    await ctx.db.query(`INSERT INTO user_totp (user_id, secret, enabled_at) VALUES ($1, 'JBSWY3DPEHPK3PXPJBSWY3DPEHPK3PXP', now())`, [user!.id]);
    expect(await secondFactorEnabled(ctx.db, user!.id)).toBe(true);

    const support = await operatorWith(ctx, clockOf, ['support']);
    const denied = await post(support, '/api/ops/requests', {
      action: 'customers.reset_second_factor',
      params: { account_id: user!.account_id },
      reason: 'customer_request',
    });
    expect(denied.json().code).toBe('ops_forbidden');
    const [row] = await ctx.db.query<{ outcome: string; reason_code: string }>(
      "SELECT outcome, reason_code FROM operator_audit WHERE action = 'propose customers.reset_second_factor' ORDER BY id DESC LIMIT 1",
    );
    expect(row).toEqual({ outcome: 'denied', reason_code: 'missing:customers.reset_second_factor' });

    const [first, second] = [await operatorWith(ctx, clockOf, ['compliance']), await operatorWith(ctx, clockOf, ['compliance'])];
    const lapsing = (
      await post(first, '/api/ops/requests', { action: 'customers.reset_second_factor', params: { account_id: user!.account_id }, reason: 'customer_request' })
    ).json().request;
    expect(second.email).not.toBe(first.email);
    clockOf.tick(24 * 60 * 60_000 + 1000);
    // A day later their sessions are long over: the same roles, signed in again.
    const [third, fourth] = [await operatorWith(ctx, clockOf, ['compliance']), await operatorWith(ctx, clockOf, ['compliance'])];
    expect((await post(fourth, `/api/ops/requests/${lapsing.id}/approve`)).json().code).toBe('ops_request_closed');
    const listed = (await call(ctx.app, '/api/ops/requests', asOperator(fourth.token))).json();
    expect(listed.decided.find((request: { id: string }) => request.id === lapsing.id)).toMatchObject({ state: 'lapsed' });
    expect(await secondFactorEnabled(ctx.db, user!.id)).toBe(true);

    const { id } = (
      await post(third, '/api/ops/requests', {
        action: 'customers.reset_second_factor',
        params: { account_id: user!.account_id },
        reason: 'customer_request',
        text: 'lost phone, identity checked by video',
      })
    ).json().request;
    expect((await post(fourth, `/api/ops/requests/${id}/approve`)).statusCode).toBe(200);
    expect(await secondFactorEnabled(ctx.db, user!.id)).toBe(false);
    const mails = await ctx.db.query("SELECT 1 FROM mail_outbox WHERE kind = 'second_factor_disabled' AND to_address = $1", [email]);
    expect(mails).toHaveLength(1);
  });

  it('proposals and decisions ask for a fresh second factor', async () => {
    const ann = await operatorWith(ctx, clockOf, ['admin']);
    clockOf.tick(6 * 60_000);
    const stale = await post(ann, '/api/ops/requests', {
      action: 'operators.set_roles',
      params: { email: ann.email, roles: ['admin'] },
      reason: 'duty_changed',
    });
    expect(stale.json().code).toBe('step_up_required');
  });
});
