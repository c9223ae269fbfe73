import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { build, ENGINES } from '../../helpers.ts';
import { freshEmail } from '../../auth-helpers.ts';
import { createOperator } from '../../../src/domains/ops/service.ts';
import { claimItem, claimsOf, OPS_CLAIM_LAPSE_MS, releaseClaim, touchClaim } from '../../../src/domains/ops/claims.ts';

describe.each(ENGINES)('queue claims on %s', (engine) => {
  let ctx: Awaited<ReturnType<typeof build>>;
  const start = new Date('2026-11-27T09:00:00Z');
  const at = (ms: number) => new Date(start.getTime() + ms);

  beforeAll(async () => {
    ctx = await build(engine);
  });
  afterAll(async () => {
    await ctx?.close();
  });

  async function operatorId(): Promise<{ id: string }> {
    const { email } = await createOperator(ctx.db, { email: freshEmail('claimer'), roles: ['support'], actor: 'cli:test', now: start });
    const [row] = await ctx.db.query<{ id: string }>('SELECT id::text AS id FROM operators WHERE email = $1', [email]);
    return { id: row!.id };
  }

  it('one live holder per item; a colleague is refused until the claim lapses, and a touch keeps it alive', async () => {
    const [ann, bob] = [await operatorId(), await operatorId()];
    const item = { queue: 'support', itemId: `conv-${Date.now()}` };
    const first = await claimItem(ctx.db, { ...item, operator: ann, now: start });
    expect(first.operatorId).toBe(ann.id);
    expect(first.lapsesAt.getTime()).toBe(start.getTime() + OPS_CLAIM_LAPSE_MS);

    await expect(claimItem(ctx.db, { ...item, operator: bob, now: at(60_000) })).rejects.toMatchObject({ code: 'ops_claimed' });
    await touchClaim(ctx.db, { ...item, operator: ann, now: at(10 * 60_000) });
    await expect(claimItem(ctx.db, { ...item, operator: bob, now: at(OPS_CLAIM_LAPSE_MS + 60_000) })).rejects.toMatchObject({ code: 'ops_claimed' });
    // Claiming again by the holder keeps when it was first taken.
    expect((await claimItem(ctx.db, { ...item, operator: ann, now: at(11 * 60_000) })).claimedAt).toEqual(start);

    const lapsed = at(11 * 60_000 + OPS_CLAIM_LAPSE_MS);
    expect((await claimsOf(ctx.db, item.queue, [item.itemId], lapsed)).size).toBe(0);
    const taken = await claimItem(ctx.db, { ...item, operator: bob, now: lapsed });
    expect(taken).toMatchObject({ operatorId: bob.id, claimedAt: lapsed });

    // Only the holder gives it back.
    await releaseClaim(ctx.db, { ...item, operator: ann });
    expect((await claimsOf(ctx.db, item.queue, [item.itemId], lapsed)).get(item.itemId)?.operatorId).toBe(bob.id);
    await releaseClaim(ctx.db, { ...item, operator: bob });
    expect((await claimsOf(ctx.db, item.queue, [item.itemId], lapsed)).size).toBe(0);
  });

  it('two operators claiming the same free item at once: exactly one wins', async () => {
    const operators = await Promise.all(Array.from({ length: 6 }, operatorId));
    const item = { queue: 'kyc', itemId: `ver-${Date.now()}` };
    const results = await Promise.allSettled(operators.map((operator) => claimItem(ctx.db, { ...item, operator, now: start })));
    expect(results.filter((result) => result.status === 'fulfilled')).toHaveLength(1);
  });
});
