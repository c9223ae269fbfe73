import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ENGINES, build } from '../../helpers.ts';
import { currencies, forgetCurrencies } from '../../../src/domains/currencies/service.ts';
import type { Queryable } from '../../../src/db/index.ts';

describe.each(ENGINES)('the currencies cache on %s', (engine) => {
  let ctx: Awaited<ReturnType<typeof build>>;

  beforeAll(async () => {
    ctx = await build(engine);
  });
  afterAll(() => ctx.close());

  /** The same transaction, counting its queries. */
  const counted = (tx: Queryable) => {
    const seen = { queries: 0 };
    const handle: Queryable = {
      ...tx,
      query: (sql, params) => {
        seen.queries++;
        return tx.query(sql, params);
      },
    };
    return { handle, seen };
  };

  it("a transaction reads the database's cache instead of the table", async () => {
    forgetCurrencies(ctx.db);
    const cached = await currencies(ctx.db);
    const { read, queries } = await ctx.db.transaction(async (tx) => {
      const { handle, seen } = counted(tx);
      return { read: await currencies(handle), queries: seen.queries };
    });
    expect(read).toBe(cached);
    expect(queries).toBe(0);
  });

  it('what a transaction reads itself (its own change, rolled back here) is not kept', async () => {
    forgetCurrencies(ctx.db);
    const before = (await ctx.db.query<{ name: string }>(`SELECT name FROM currencies WHERE code = 'BTC'`))[0]!.name;
    forgetCurrencies(ctx.db);
    const seenInside = await ctx.db
      .transaction(async (tx) => {
        await tx.query(`UPDATE currencies SET name = 'Not committed' WHERE code = 'BTC'`);
        const name = (await currencies(tx)).get('BTC')!.name;
        throw new Error(name);
      })
      .catch((err: Error) => err.message);
    expect(seenInside).toBe('Not committed');
    expect((await currencies(ctx.db)).get('BTC')!.name).toBe(before);
  });
});
