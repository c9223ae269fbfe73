import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { build } from '../../helpers.ts';
import { createFixtureUser, type TFixtureUser } from '../../fixtures.ts';
import { AppError } from '../../../src/errors.ts';
import { limitState, refuseOverLimits, userLevel } from '../../../src/domains/limits/service.ts';

const NOW = new Date('2026-11-23T10:00:00Z');

/* The one module of verification limits: the level, what is left, the refusal over it (payments and cards read it). */
describe('verification limits', () => {
  let ctx: Awaited<ReturnType<typeof build>>;
  let user: TFixtureUser;

  beforeAll(async () => {
    ctx = await build('pglite', {}, { now: () => NOW });
    user = await createFixtureUser(ctx.db);
  });
  afterAll(async () => ctx?.close());

  it("reads a user's level; an unknown user is level 0", async () => {
    expect(await userLevel(ctx.db, user.id)).toBe(0);
    await ctx.db.query('UPDATE users SET verification_level = 1 WHERE id = $1', [user.id]);
    expect(await ctx.db.transaction((tx) => userLevel(tx, user.id, true))).toBe(1);
    expect(await userLevel(ctx.db, '999999999')).toBe(0);
  });

  it.each(['deposit', 'withdrawal'] as const)('refuses a %s over what is left of the 24 h limit, and answers the value of one within it', async (operation) => {
    const limits = await limitState(ctx.db, user.id, 1, NOW, operation);
    expect(limits.left24h).toBeGreaterThan(0n);
    const within = await ctx.db.transaction((tx) =>
      refuseOverLimits(tx, { userId: user.id, level: 1, now: NOW, operation, currency: limits.currency, amount: limits.left24h }),
    );
    expect(within).toEqual({ value: limits.left24h, currency: limits.currency });
    const over = ctx.db.transaction((tx) =>
      refuseOverLimits(tx, { userId: user.id, level: 1, now: NOW, operation, currency: limits.currency, amount: limits.left24h + 1n }),
    );
    await expect(over).rejects.toBeInstanceOf(AppError);
    await expect(over).rejects.toMatchObject({ code: `${operation}_limit_exceeded`, messageKey: 'withdraw.limit_exceeded_24h' });
  });
});
