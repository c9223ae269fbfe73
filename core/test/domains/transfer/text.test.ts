import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ENGINES, build } from '../../helpers.ts';
import { createFixtureUser, fund, type TFixtureUser } from '../../fixtures.ts';

/** A comment the recipient reads cannot carry bidirectional controls. */
describe.each(ENGINES)('transfer comments on %s', (engine) => {
  let ctx: Awaited<ReturnType<typeof build>>;
  let alice: TFixtureUser;
  let bob: TFixtureUser;

  beforeAll(async () => {
    ctx = await build(engine);
    alice = await createFixtureUser(ctx.db, { firstName: 'Alice' });
    bob = await createFixtureUser(ctx.db, { firstName: 'Bob' });
    await fund(ctx.db, alice.id, 'USDT', 10_000_000n);
  });
  afterAll(() => ctx.close());

  const send = (url: string, comment: string, locale: 'ru' | 'en', key?: string) =>
    ctx.app.inject({
      method: 'POST',
      url,
      headers: { authorization: `Bearer ${alice.token}`, 'x-obmen-locale': locale, ...(key ? { 'idempotency-key': key } : {}) },
      payload: { account_id: String(bob.accountId), currency: 'USDT', amount: '1', comment },
    });

  it('refuses a comment with a right-to-left override, localized, and moves nothing', async () => {
    const lying = 'refund \u202e0001 TDSU\u202c';
    for (const url of ['/api/transfer/check', '/api/transfer']) {
      const en = await send(url, lying, 'en', `bidi-${engine}-en`);
      expect(en.statusCode).toBe(400);
      expect(en.json()).toMatchObject({
        status: 'error',
        code: 'validation',
        fields: { comment: 'Invisible text-direction characters are not allowed here.' },
      });
      const ru = await send(url, lying, 'ru', `bidi-${engine}-ru`);
      expect(ru.json().fields).toEqual({ comment: 'Невидимые символы направления текста здесь не допускаются.' });
    }
    const [count] = await ctx.db.query<{ n: number }>('SELECT count(*)::int AS n FROM transfers');
    expect(count!.n).toBe(0);
    const ok = await send('/api/transfer', 'refund for May', 'en', `bidi-${engine}-ok`);
    expect(ok.statusCode).toBe(200);
  });
});
