import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ENGINES, build } from '../../helpers.ts';
import { createFixtureUser, fund, type TFixtureUser } from '../../fixtures.ts';
import { purgeEvents, readEvents, readEventsOf, recordEvent } from '../../../src/domains/events/service.ts';
import { sendNotification } from '../../../src/domains/notifications/service.ts';
import { setRate } from '../../../src/domains/rates/service.ts';
import { postForm } from '../../auth-helpers.ts';

/** Events are written in the transaction of the change, numbered per user, announced after commit. */
describe.each(ENGINES)('events table on %s', (engine) => {
  let ctx: Awaited<ReturnType<typeof build>>;
  let alice: TFixtureUser;
  let bob: TFixtureUser;
  const announced: string[][] = [];
  let n = 0;
  const key = () => `events-${engine}-${++n}-${Date.now()}`;
  const post = (user: TFixtureUser, url: string, payload: Record<string, string>, idem?: string) => postForm(ctx.app, user, url, payload, idem);
  const events = async (user: TFixtureUser) =>
    ctx.db.query<{ seq: string; type: string }>('SELECT seq::text AS seq, type FROM events WHERE user_id = $1 ORDER BY seq', [user.id]);

  beforeAll(async () => {
    ctx = await build(engine);
    ctx.db.onAnnounce = (users) => announced.push([...users]);
    alice = await createFixtureUser(ctx.db);
    bob = await createFixtureUser(ctx.db);
    await fund(ctx.db, alice.id, 'USDT', 1_000_000_000n);
    await setRate(ctx.db, { src: 'USDT', dst: 'BTC', rate: '0.00001', spread: '0.01', fee_percent: '0.001', fee_fixed: '0', min: '1', max: '500' }, new Date());
  }, 180_000);
  afterAll(() => ctx.close());

  it('numbers each user 1, 2, 3… and announces only after commit, never on rollback', async () => {
    const user = await createFixtureUser(ctx.db);
    announced.length = 0;
    const seqs = await ctx.db.transaction(async (tx) => {
      const first = await recordEvent(tx, user.id, 'unread_msgs', { private: 1, support: 0 });
      const second = await recordEvent(tx, user.id, 'unread_msgs', { private: 2, support: 0 });
      expect(announced).toEqual([]);
      return [first, second];
    });
    expect(seqs).toEqual([1, 2]);
    expect(announced).toEqual([[user.id]]);
    announced.length = 0;
    await expect(
      ctx.db.transaction(async (tx) => {
        await recordEvent(tx, user.id, 'unread_msgs', { private: 3, support: 0 });
        throw new Error('changed my mind');
      }),
    ).rejects.toThrow('changed my mind');
    expect(announced).toEqual([]);
    // The rolled-back number is free again: no gap.
    expect(await ctx.db.transaction((tx) => recordEvent(tx, user.id, 'unread_msgs', { private: 4, support: 0 }))).toBe(3);
    const read = await readEvents(ctx.db, user.id, 1);
    expect(read).toEqual({
      kind: 'events',
      last: 3,
      events: [
        { seq: 2, type: 'unread_msgs', payload: { private: 2, support: 0 } },
        { seq: 3, type: 'unread_msgs', payload: { private: 4, support: 0 } },
      ],
    });
  });

  it("event_record_many numbers several users' events on from each one's last, in their order", async () => {
    const [aliceBefore, bobBefore] = [await events(alice), await events(bob)];
    await ctx.db.query(`SELECT event_record_many($1::bigint[], $2::text[], $3::jsonb[])`, [
      [bob.id, alice.id, bob.id, alice.id, bob.id],
      ['one', 'two', 'three', 'four', 'five'],
      [null, null, '{"n": 3}', null, null],
    ]);
    const next = (before: Array<{ seq: string }>, k: number) => String(Number(before.at(-1)?.seq ?? 0) + k);
    expect((await events(alice)).slice(aliceBefore.length)).toEqual([
      { seq: next(aliceBefore, 1), type: 'two' },
      { seq: next(aliceBefore, 2), type: 'four' },
    ]);
    expect((await events(bob)).slice(bobBefore.length)).toEqual([
      { seq: next(bobBefore, 1), type: 'one' },
      { seq: next(bobBefore, 2), type: 'three' },
      { seq: next(bobBefore, 3), type: 'five' },
    ]);
    const [three] = await ctx.db.query<{ payload: unknown }>(`SELECT payload FROM events WHERE user_id = $1 AND type = 'three'`, [bob.id]);
    expect(three!.payload).toEqual({ n: 3 });
  });

  it('a transfer records "wallets" for both users in its transaction', async () => {
    const [a0, b0] = [(await events(alice)).length, (await events(bob)).length];
    announced.length = 0;
    const res = await post(alice, '/api/transfer', { account_id: String(bob.accountId), currency: 'USDT', amount: '1' }, key());
    expect(res.statusCode).toBe(200);
    expect((await events(alice)).slice(a0).map((e) => e.type)).toEqual(['wallets']);
    expect((await events(bob)).slice(b0).map((e) => e.type)).toEqual(['wallets']);
    expect(announced.flat().sort()).toEqual([alice.id, bob.id].sort());
    // A refused transfer records nothing.
    const refused = await post(alice, '/api/transfer', { account_id: String(bob.accountId), currency: 'USDT', amount: '99999999' }, key());
    expect(refused.statusCode).toBe(422);
    expect((await events(bob)).length).toBe(b0 + 1);
  });

  it('an exchange records "wallets" for its user; a replay records nothing more', async () => {
    const before = (await events(alice)).length;
    const quote = (await post(alice, '/api/exchange/check', { src: 'USDT', dst: 'BTC', amount: '10' })).json().quote;
    const idem = key();
    expect((await post(alice, '/api/exchange/USDT/BTC', { quote: quote.token }, idem)).statusCode).toBe(200);
    expect((await post(alice, '/api/exchange/USDT/BTC', { quote: quote.token }, idem)).headers['idempotent-replayed']).toBe('true');
    expect((await events(alice)).slice(before).map((e) => e.type)).toEqual(['wallets']);
  });

  it('a notification for one user records "notifications"; one for everyone does not', async () => {
    const user = await createFixtureUser(ctx.db);
    const texts = [{ locale: 'en' as const, title: 'Hello' }];
    await sendNotification(ctx.db, { userId: user.id, display: 'inner', type: 'success', texts });
    await sendNotification(ctx.db, { userId: null, display: 'inner', type: 'success', texts });
    expect((await events(user)).map((e) => e.type)).toEqual(['notifications']);
  });

  it('refuses a sequence from the future and asks for a resync when the gap is no longer kept', async () => {
    const user = await createFixtureUser(ctx.db);
    expect(await readEvents(ctx.db, user.id, 0)).toEqual({ kind: 'events', events: [], last: 0 });
    expect(await readEvents(ctx.db, user.id, 1)).toEqual({ kind: 'future', last: 0 });
    for (let i = 0; i < 3; i++) await ctx.db.transaction((tx) => recordEvent(tx, user.id, 'unread_msgs', { private: i, support: 0 }));
    expect(await readEvents(ctx.db, user.id, 4)).toEqual({ kind: 'future', last: 3 });
    expect(await readEvents(ctx.db, user.id, 3)).toEqual({ kind: 'events', events: [], last: 3 });
    // The first two grow old and are purged: a reader at 0 or 1 missed what is gone; at 2, nothing.
    await ctx.db.query(`UPDATE events SET created_at = now() - interval '2 days' WHERE user_id = $1 AND seq <= 2`, [user.id]);
    await purgeEvents(ctx.db);
    expect(await readEvents(ctx.db, user.id, 0)).toEqual({ kind: 'resync', last: 3 });
    expect(await readEvents(ctx.db, user.id, 1)).toEqual({ kind: 'resync', last: 3 });
    expect((await readEvents(ctx.db, user.id, 2)).kind).toBe('events');
    // Numbering goes on after a purge.
    expect(await ctx.db.transaction((tx) => recordEvent(tx, user.id, 'unread_msgs', { private: 9, support: 0 }))).toBe(4);
  });

  it('reads several readers at once, each as it would alone, in the order asked (the hub: one query per delivery)', async () => {
    const [a, b, none] = [await createFixtureUser(ctx.db), await createFixtureUser(ctx.db), await createFixtureUser(ctx.db)];
    for (let i = 0; i < 3; i++) await ctx.db.transaction((tx) => recordEvent(tx, a.id, 'unread_msgs', { private: i, support: 0 }));
    await ctx.db.transaction((tx) => recordEvent(tx, b.id, 'unread_msgs', { private: 7, support: 0 }));
    const readers = [
      { userId: b.id, since: 0 },
      { userId: a.id, since: 1 },
      { userId: none.id, since: 0 },
      { userId: a.id, since: 9 },
      { userId: a.id, since: 3 },
    ];
    const together = await readEventsOf(ctx.db, readers);
    const alone = await Promise.all(readers.map((r) => readEvents(ctx.db, r.userId, r.since)));
    expect(together).toEqual(alone);
    expect(together.map((read) => (read.kind === 'events' ? read.events.map((e) => e.seq) : read.kind))).toEqual([[1], [2, 3], [], 'future', []]);
    expect(await readEventsOf(ctx.db, [])).toEqual([]);
  });
});
