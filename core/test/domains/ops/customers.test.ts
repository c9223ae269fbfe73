import { describe, expect, it } from 'vitest';
import { ENGINES, testCipher } from '../../helpers.ts';
import { call, expectRefusal, freshEmail, logIn, signUp } from '../../auth-helpers.ts';
import { asOperator, operatorWith, stepUpOperator, type TTestOperator, useOpsApp } from '../../ops-helpers.ts';
import { verifyAuditChain } from '../../../src/domains/audit/service.ts';
import { withdrawalsBlockedUntil } from '../../../src/domains/security/second-factor.ts';

const PASSWORD = 'correct horse battery';

describe.each(ENGINES)('the customer view on %s', (engine) => {
  const ctx = useOpsApp(engine);
  const clockOf = ctx.clock;

  /** A signed-up customer with a name and phone: e-mail, account id, session. */
  async function customer() {
    const email = freshEmail('cust');
    const token = await signUp(ctx.app, ctx.db, email, PASSWORD, 'en');
    const [row] = await ctx.db.query<{ id: string; account_id: number }>(
      `UPDATE users SET first_name = 'Ivan', last_name = 'Petrov', phone = '+7 900 123-45-67' WHERE lower(email) = $1 RETURNING id::text, account_id`,
      [email],
    );
    return { email, token, id: row!.id, accountId: row!.account_id };
  }

  const post = (op: TTestOperator, url: string, payload: object) => call(ctx.app, url, { payload, ...asOperator(op.token), locale: 'en' });
  const auditOf = (accountId: number) =>
    ctx.db.query<{ action: string; outcome: string; reason_code: string | null; before: unknown; after: unknown }>(
      'SELECT action, outcome, reason_code, before, after FROM operator_audit WHERE subject = $1 ORDER BY id',
      [`customer:${accountId}`],
    );

  it('finds a customer by account id, e-mail, name and phone; the page masks personal data and its view is audited', async () => {
    const cust = await customer();
    const support = await operatorWith(ctx, clockOf, ['support']);
    for (const q of [String(cust.accountId), cust.email, 'petrov', '9001234567']) {
      const res = await call(ctx.app, `/api/ops/customers?q=${encodeURIComponent(q)}`, asOperator(support.token));
      expect(res.statusCode, res.body).toBe(200);
      expect(res.json().customers.map((hit: { account_id: number }) => hit.account_id)).toContain(cust.accountId);
    }
    // The document number by its keyed hash (as the customer's submission stored it), written as the operator types it.
    await ctx.db.query(
      `INSERT INTO verifications (user_id, type, status, number_enc, number_tail, submitted_at, number_hash)
       VALUES ($1, 'passport', 'submitted', '\\x00', '4567', now(), $2)`,
      [cust.id, await testCipher().lookupHash('AB1234567')],
    );
    const byNumber = await call(ctx.app, `/api/ops/customers?q=${encodeURIComponent('ab 123-4567')}`, asOperator(support.token));
    expect(byNumber.json().customers).toEqual([expect.objectContaining({ account_id: cust.accountId, matched: 'document' })]);
    const page = await call(ctx.app, `/api/ops/customers/${cust.accountId}`, asOperator(support.token));
    expect(page.statusCode, page.body).toBe(200);
    const shown = page.json().customer;
    expect(shown).toMatchObject({
      account_id: cust.accountId,
      email: cust.email,
      personal: { revealed: false, first_name: 'I***', last_name: 'P***', phone: '***67' },
    });
    expect(shown.security.sessions.length).toBeGreaterThan(0);
    expect(await auditOf(cust.accountId)).toEqual([expect.objectContaining({ action: 'customers.view', outcome: 'viewed' })]);
    // A missing account answers like any missing account.
    const missing = await call(ctx.app, '/api/ops/customers/10000009', asOperator(support.token));
    expect(missing.statusCode).toBe(404);
  });

  it('revealing personal data takes the permission and a fresh second factor, and is audited with its reason', async () => {
    const cust = await customer();
    const support = await operatorWith(ctx, clockOf, ['support']);
    const refused = await post(support, `/api/ops/customers/${cust.accountId}/reveal`, { reason: 'customer_request' });
    expect(refused.json()).toMatchObject({ code: 'ops_forbidden' });

    const compliance = await operatorWith(ctx, clockOf, ['compliance']);
    clockOf.tick(6 * 60_000);
    const stale = await post(compliance, `/api/ops/customers/${cust.accountId}/reveal`, { reason: 'customer_request' });
    expect(stale.statusCode).toBe(403);
    expect(stale.json().code).toBe('step_up_required');
    await stepUpOperator(ctx.app, clockOf, compliance);
    const revealed = await post(compliance, `/api/ops/customers/${cust.accountId}/reveal`, { reason: 'compliance_review' });
    expect(revealed.statusCode, revealed.body).toBe(200);
    expect(revealed.json().customer.personal).toMatchObject({ revealed: true, first_name: 'Ivan', phone: '+7 900 123-45-67' });
    expect((await auditOf(cust.accountId)).at(-1)).toMatchObject({ action: 'customers.reveal_personal', outcome: 'viewed', reason_code: 'compliance_review' });
  });

  it('a sign-in block ends every session and refuses the next sign-in until lifted; before and after are in the audit row', async () => {
    const cust = await customer();
    const compliance = await operatorWith(ctx, clockOf, ['compliance']);
    const unknownReason = await post(compliance, `/api/ops/customers/${cust.accountId}/block-sign-in`, { reason: 'because' });
    expect(unknownReason.statusCode).toBe(400);
    const otherWithoutWords = await post(compliance, `/api/ops/customers/${cust.accountId}/block-sign-in`, { reason: 'other' });
    expect(otherWithoutWords.statusCode).toBe(400);
    expect(await auditOf(cust.accountId)).toEqual([]);

    const blocked = await post(compliance, `/api/ops/customers/${cust.accountId}/block-sign-in`, { reason: 'fraud_suspected', text: 'card testing' });
    expect(blocked.statusCode, blocked.body).toBe(200);
    expect((await call(ctx.app, '/api/wallets', { token: cust.token })).statusCode).toBe(401);
    const again = await call(ctx.app, '/api/auth/login_by_password', { payload: { email: cust.email, password: PASSWORD }, locale: 'en' });
    expectRefusal(again, 403, { code: 'sign_in_blocked', message: 'Sign-in to this account is blocked. Please contact support.' });
    const [row] = (await auditOf(cust.accountId)).slice(-1);
    expect(row).toMatchObject({ action: 'customers.block_sign_in', reason_code: 'fraud_suspected', before: { sign_in_blocked_at: null } });
    expect((row!.after as { sign_in_blocked_at: string | null }).sign_in_blocked_at).not.toBeNull();

    expect((await post(compliance, `/api/ops/customers/${cust.accountId}/unblock-sign-in`, { reason: 'customer_request' })).statusCode).toBe(200);
    expect(await logIn(ctx.app, cust.email, PASSWORD)).toMatch(/\S+/);
  });

  it('withdrawals blocked until a day, sessions revoked, notes added; a support operator may note but not block', async () => {
    const cust = await customer();
    const support = await operatorWith(ctx, clockOf, ['support']);
    const denied = await post(support, `/api/ops/customers/${cust.accountId}/block-withdrawals`, { reason: 'fraud_suspected', until: '2099-01-01' });
    expect(denied.json()).toMatchObject({ code: 'ops_forbidden' });
    expect((await post(support, `/api/ops/customers/${cust.accountId}/notes`, { text: 'Asked about a late deposit.' })).statusCode).toBe(200);

    const compliance = await operatorWith(ctx, clockOf, ['compliance']);
    expect((await post(compliance, `/api/ops/customers/${cust.accountId}/block-withdrawals`, { reason: 'chargeback', until: '2099-01-01' })).statusCode).toBe(
      200,
    );
    expect(await withdrawalsBlockedUntil(ctx.db, cust.id)).toEqual(new Date('2099-01-01T00:00:00Z'));
    expect((await post(compliance, `/api/ops/customers/${cust.accountId}/block-withdrawals`, { reason: 'customer_request', until: null })).statusCode).toBe(
      200,
    );
    expect(await withdrawalsBlockedUntil(ctx.db, cust.id)).toBeNull();

    expect((await post(compliance, `/api/ops/customers/${cust.accountId}/revoke-sessions`, { reason: 'security_incident' })).statusCode).toBe(200);
    expect((await call(ctx.app, '/api/wallets', { token: cust.token })).statusCode).toBe(401);

    const page = (await call(ctx.app, `/api/ops/customers/${cust.accountId}`, asOperator(compliance.token))).json().customer;
    expect(page.notes).toEqual([expect.objectContaining({ operator: support.email, text: 'Asked about a late deposit.' })]);
    expect(page.audit.map((row: { action: string }) => row.action)).toEqual(
      expect.arrayContaining(['customers.note', 'customers.block_withdrawals', 'customers.revoke_sessions']),
    );
    expect(await verifyAuditChain(ctx.db)).toMatchObject({ intact: true });
  });
});
