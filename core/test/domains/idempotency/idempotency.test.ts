import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ENGINES, build } from '../../helpers.ts';
import { createFixtureUser, type TFixtureUser } from '../../fixtures.ts';
import { requestHash, runIdempotent } from '../../../src/domains/idempotency/service.ts';
import { AppError } from '../../../src/errors.ts';

describe('request hash', () => {
  it('is the same for the same operation and input, whatever the key order', () => {
    expect(requestHash('POST /x', { a: 1, b: 2n, c: undefined })).toBe(requestHash('POST /x', { b: 2n, a: 1 }));
    expect(requestHash('POST /x', { a: 1 })).not.toBe(requestHash('POST /y', { a: 1 }));
    expect(requestHash('POST /x', { a: 1 })).not.toBe(requestHash('POST /x', { a: '1' }));
    expect(requestHash('POST /x', { list: [1, 2] })).not.toBe(requestHash('POST /x', { list: [2, 1] }));
  });
});

describe.each(ENGINES)('idempotency keys on %s', (engine) => {
  let ctx: Awaited<ReturnType<typeof build>>;
  let user: TFixtureUser;
  beforeAll(async () => {
    ctx = await build(engine);
    user = await createFixtureUser(ctx.db);
  });
  afterAll(() => ctx.close());

  it('runs the work once for 20 concurrent calls with one key; all get its answer', async () => {
    let runs = 0;
    const call = () =>
      runIdempotent(ctx.db, { userId: user.id, key: 'same-key-0001', scope: 'test', payload: { n: 1 } }, async (tx) => {
        runs++;
        const [row] = await tx.query<{ now: string }>(`SELECT pg_sleep(0.05)::text, now()::text AS now`);
        return { ran: runs, at: row!.now };
      });
    const answers = await Promise.all(Array.from({ length: 20 }, call));
    expect(runs).toBe(1);
    for (const answer of answers) expect(answer.result).toEqual(answers[0]!.result);
    expect(answers.filter((a) => !a.replayed)).toHaveLength(1);
  });

  it('refuses the key with another request, and frees it when the work fails', async () => {
    await runIdempotent(ctx.db, { userId: user.id, key: 'other-key-0001', scope: 'test', payload: { n: 1 } }, async () => ({ ok: true }));
    await expect(
      runIdempotent(ctx.db, { userId: user.id, key: 'other-key-0001', scope: 'test', payload: { n: 2 } }, async () => ({ ok: true })),
    ).rejects.toMatchObject({ code: 'idempotency_key_reused', statusCode: 422 });
    await expect(
      runIdempotent(ctx.db, { userId: user.id, key: 'failing-key-01', scope: 'test', payload: {} }, async () => {
        throw new AppError('insufficient_funds');
      }),
    ).rejects.toMatchObject({ code: 'insufficient_funds' });
    const retry = await runIdempotent(ctx.db, { userId: user.id, key: 'failing-key-01', scope: 'test', payload: {} }, async () => ({ ok: 'now' }));
    expect(retry).toEqual({ result: { ok: 'now' }, replayed: false });
    // Keys are per user.
    const other = await createFixtureUser(ctx.db);
    const theirs = await runIdempotent(ctx.db, { userId: other.id, key: 'other-key-0001', scope: 'test', payload: { n: 2 } }, async () => ({ mine: true }));
    expect(theirs.replayed).toBe(false);
  });

  it('every money-moving POST needs a well-formed Idempotency-Key header', async () => {
    const auth = { authorization: `Bearer ${user.token}`, 'x-obmen-locale': 'en' };
    for (const url of ['/api/transfer', '/api/exchange/USDT/BTC', '/api/exchange/all', '/api/exchange/all/USDT']) {
      const missing = await ctx.app.inject({ method: 'POST', url, headers: auth, payload: {} });
      expect(missing.statusCode, url).toBe(400);
      expect(missing.json().code, url).toBe('idempotency_key_required');
      const bad = await ctx.app.inject({ method: 'POST', url, headers: { ...auth, 'idempotency-key': 'no spaces allowed' }, payload: {} });
      expect(bad.json().code, url).toBe('idempotency_key_invalid');
    }
  });
});
