import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TWithdrawal } from '@obmen/shared';
import { build, ENGINES, testCipher } from '../../helpers.ts';
import { call } from '../../auth-helpers.ts';
import { createFixtureUser, fund, type TFixtureUser } from '../../fixtures.ts';
import { checkLedger } from '../../../src/domains/ledger/invariants.ts';
import { heldBalance } from '../../../src/domains/ledger/holds.ts';
import { userBalance } from '../../../src/domains/ledger/service.ts';
import { loadPaymentProviders } from '../../../src/providers/index.ts';
import { runSandboxPayouts } from '../../../src/providers/sandbox/payouts.ts';
import { approveWithdrawal, rejectWithdrawal } from '../../../src/domains/payments/withdrawal-states.ts';

const NOW = new Date('2026-11-23T10:00:00Z');
const CARD = { card_number: '4111111111111111', card_holder: 'IVAN PETROV' };
/** Every way the three racing calls may end, and the state each leaves. */
const RACE_ENDINGS = [
  { cancelled: true, approved: false, rejected: false, state: 'cancelled' },
  { cancelled: false, approved: true, rejected: false, state: 'processing' },
  { cancelled: false, approved: false, rejected: true, state: 'rejected' },
  { cancelled: false, approved: true, rejected: true, state: 'rejected' },
];

/**
 * Withdrawals racing their operator: every request above the auto-approval amount is cancelled
 * by its user while an operator approves and another rejects it, all at once. Exactly one of
 * them wins each request; the hold ends exactly once; the ledger's rules (the held balance
 * equals the open holds, no hold left behind a final state) hold after.
 */
describe.each(ENGINES)('withdrawals: cancel vs approve vs reject (%s)', (engine) => {
  let ctx: Awaited<ReturnType<typeof build>>;
  let user: TFixtureUser;

  beforeAll(async () => {
    ctx = await build(engine, {}, { now: () => NOW });
    user = await createFixtureUser(ctx.db);
    await ctx.db.query('UPDATE users SET verification_level = 1 WHERE id = $1', [user.id]);
    await fund(ctx.db, user.id, 'RUB', 100_000_000n);
  });
  afterAll(async () => ctx?.close());

  it('ends each request once, and the ledger agrees', async () => {
    const ids: string[] = [];
    for (let i = 0; i < 12; i++) {
      const res = await call(ctx.app, '/api/withdraw/form/sandbox-card', {
        token: user.token,
        payload: { currency: 'RUB', amount: String(10_001 + i), ...CARD },
        headers: { 'idempotency-key': `race-request-${i}` },
      });
      expect(res.statusCode).toBe(200);
      ids.push((res.json().withdrawal as TWithdrawal).id);
    }
    const outcomes = await Promise.all(
      ids.map((id, i) =>
        Promise.allSettled([
          call(ctx.app, `/api/withdraw/cancel/${id}`, { token: user.token, payload: {}, headers: { 'idempotency-key': `race-cancel-${i}` } }).then((res) => {
            if (res.statusCode !== 200) throw new Error(res.json().code);
          }),
          approveWithdrawal({ db: ctx.db, cipher: testCipher() }, id, 'operator:race', NOW),
          rejectWithdrawal(ctx.db, id, 'race', 'operator:race', NOW),
        ]),
      ),
    );
    for (const [i, settled] of outcomes.entries()) {
      const [cancelled, approved, rejected] = settled.map((r) => r.status === 'fulfilled');
      const [row] = await ctx.db.query<{ state: string }>('SELECT state FROM withdrawals WHERE public_id = $1', [ids[i]]);
      // The user's cancel wins alone; otherwise the operator's approval and rejection are
      // ordered (a rejection may still follow an approval before the payout is handed over).
      expect(RACE_ENDINGS, `request ${i}`).toContainEqual({ cancelled, approved, rejected, state: row!.state });
    }
    await runSandboxPayouts(ctx.db, loadPaymentProviders({ NODE_ENV: 'test' }), NOW, { force: true });
    const [open] = await ctx.db.query<{ n: number }>(`SELECT count(*)::int AS n FROM withdrawals WHERE state NOT IN ('paid', 'cancelled', 'rejected')`);
    expect(open!.n).toBe(0);
    expect(await heldBalance(ctx.db, user.id, 'RUB')).toBe(0n);
    const [paid] = await ctx.db.query<{ total: string }>(`SELECT coalesce(sum(amount), 0)::text AS total FROM withdrawals WHERE state = 'paid'`);
    expect(await userBalance(ctx.db, user.id, 'RUB')).toBe(100_000_000n - BigInt(paid!.total));
    const [stale] = await ctx.db.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM withdrawals w JOIN holds h ON h.id = w.hold_id
       WHERE (w.state = 'paid') <> (h.state = 'captured') OR (w.state IN ('cancelled', 'rejected', 'failed')) <> (h.state = 'released')`,
    );
    expect(stale!.n).toBe(0);
    expect((await checkLedger(ctx.db)).violations).toEqual([]);
  });
});
