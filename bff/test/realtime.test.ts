import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SESSION_COOKIE, SOCKET_CLOSE, type TSocketMessage } from '@obmen/shared';
import { buildBff, startRealCore } from './session-helpers.ts';
import { createFixtureUser, fund, type TFixtureUser } from '../../core/test/fixtures.ts';
import { noticeRates, purgeEvents, recordEvent } from '../../core/src/domains/events/service.ts';
import { sendNotification } from '../../core/src/domains/notifications/service.ts';
import { isSocket, mustOpen, openSocket, seqs } from './realtime-client.ts';
import { until } from '../../core/test/helpers.ts';

/** The browser's realtime socket through the BFF, against the real core (PGlite, LISTEN/NOTIFY). */
describe('BFF /ws (real core)', () => {
  let core: Awaited<ReturnType<typeof startRealCore>>;
  let bff: Awaited<ReturnType<typeof buildBff>>;
  let base: string;
  let origin: string;
  let alice: TFixtureUser;
  let bob: TFixtureUser;
  let n = 0;
  const cookie = (user: TFixtureUser) => `${SESSION_COOKIE}=${user.token}`;
  const transfer = (from: TFixtureUser, to: TFixtureUser, amount: string) =>
    bff.app.inject({
      method: 'POST',
      url: '/api/transfer',
      headers: { host: new URL(base).host, origin, cookie: cookie(from), 'content-type': 'application/json', 'idempotency-key': `rt-${++n}-${Date.now()}` },
      payload: { account_id: String(to.accountId), currency: 'USDT', amount },
    });
  const contentVersion = async () => Number((await core.db.query<{ v: string }>('SELECT version::text AS v FROM content_version'))[0]!.v);
  const record = (user: TFixtureUser, payload: unknown) => core.db.transaction((tx) => recordEvent(tx, user.id, 'unread_msgs', payload));
  let marks = 1_000;
  /** Runs the realtime check twice, then records an event for `user` and waits for it on `socket`. */
  const checkTwiceThenMark = async (user: TFixtureUser, socket: Awaited<ReturnType<typeof mustOpen>>) => {
    await core.app.jobs.runJob('realtime-check');
    await core.app.jobs.runJob('realtime-check');
    const mark = ++marks;
    await record(user, { private: mark, support: 0 });
    await socket.next((m) => m.type === 'events' && m.events.some((event) => (event.payload as { private?: number } | null)?.private === mark));
  };

  beforeAll(async () => {
    // This core's realtime checks run on their own, every 200 ms: logouts must close sockets by themselves.
    core = await startRealCore({ EVENTS_CHECK_MS: '200', JOBS: 'realtime-check' });
    bff = await buildBff(core.url);
    base = await bff.app.listen({ host: '127.0.0.1', port: 0 });
    origin = base;
    alice = await createFixtureUser(core.db);
    bob = await createFixtureUser(core.db);
    await fund(core.db, alice.id, 'USDT', 1_000_000_000n);
  }, 180_000);
  afterAll(async () => {
    await bff?.close();
    await core?.close();
  });

  it('refuses a forged or missing Origin (403), no or a malformed cookie (401), an unknown or expired session (401)', async () => {
    expect(await openSocket(base, { origin: 'http://evil.example', cookie: cookie(bob) })).toMatchObject({ refused: 403 });
    expect(await openSocket(base, { cookie: cookie(bob) })).toMatchObject({ refused: 403 });
    expect(await openSocket(base, { origin })).toMatchObject({ refused: 401 });
    expect(await openSocket(base, { origin, cookie: `${SESSION_COOKIE}=not-a-token` })).toMatchObject({ refused: 401 });
    expect(await openSocket(base, { origin, cookie: `${SESSION_COOKIE}=${'A'.repeat(43)}` })).toMatchObject({ refused: 401 });
    const expired = await createFixtureUser(core.db);
    await core.db.query(`UPDATE sessions SET expires_at = now() - interval '1 second' WHERE user_id = $1`, [expired.id]);
    const refused = await openSocket(base, { origin, cookie: cookie(expired) });
    expect(refused).toMatchObject({ refused: 401 });
    expect(!isSocket(refused) && JSON.parse(refused.body)).toMatchObject({ status: 'error', code: 'unauthorized' });
    // The token in the URL is no way in either.
    expect(await openSocket(`${base}/?remember_token=${bob.token}`, { origin })).toMatchObject({ refused: 401 });
  });

  it('refuses a sequence number from the future (409) and a malformed one (400)', async () => {
    const user = await createFixtureUser(core.db);
    await record(user, { private: 1, support: 0 });
    const future = await openSocket(base, { origin, cookie: cookie(user), since: 2 });
    expect(future).toMatchObject({ refused: 409 });
    expect(!isSocket(future) && JSON.parse(future.body).code).toBe('event_sequence_future');
    expect(await openSocket(base, { origin, cookie: cookie(user), since: '-1' })).toMatchObject({ refused: 400 });
    expect(await openSocket(base, { origin, cookie: cookie(user), bsince: 'x' })).toMatchObject({ refused: 400 });
    const ok = await mustOpen(base, { origin, cookie: cookie(user), since: 1 });
    expect(await ok.next((m) => m.type === 'hello')).toEqual({ type: 'hello', seq: 1, bseq: await contentVersion() });
    ok.ws.close();
  });

  it('never proxies the core stream', async () => {
    expect((await bff.app.inject({ url: '/api/internal/events' })).statusCode).toBe(404);
  });

  it('a transfer from A reaches B live: the wallets and the total balance, in order', async () => {
    const socket = await mustOpen(base, { origin, cookie: cookie(bob) });
    const hello = (await socket.next((m) => m.type === 'hello')) as Extract<TSocketMessage, { type: 'hello' }>;
    expect((await transfer(alice, bob, '2.5')).statusCode).toBe(200);
    const got = await socket.next((m) => m.type === 'events');
    expect(got).toMatchObject({
      type: 'events',
      events: [{ seq: hello.seq + 1, type: 'wallets', payload: { total_balance: { currency: 'USD' } } }],
    });
    const wallets = (got as Extract<TSocketMessage, { type: 'events' }>).events[0]!.payload as { wallets: Array<{ currency: string; balance: string }> };
    expect(wallets.wallets.find((w) => w.currency === 'USDT')?.balance).toBe('2.500000');
    socket.ws.close();
  });

  it('a reconnect with the last sequence number replays what was missed; a gap no longer kept is a resync', async () => {
    const user = await createFixtureUser(core.db);
    const first = await mustOpen(base, { origin, cookie: cookie(user) });
    await first.next((m) => m.type === 'hello');
    await record(user, { private: 1, support: 0 });
    await first.next((m) => m.type === 'events');
    first.ws.close();
    await first.closed;
    for (let i = 2; i <= 4; i++) await record(user, { private: i, support: 0 });
    const again = await mustOpen(base, { origin, cookie: cookie(user), since: 1 });
    await until('the replay', () => seqs(again).length === 3);
    expect(seqs(again)).toEqual([2, 3, 4]);
    expect(again.messages[0]).toEqual({ type: 'hello', seq: 1, bseq: await contentVersion() });
    again.ws.close();
    await core.db.query(`UPDATE events SET created_at = now() - interval '2 days' WHERE user_id = $1`, [user.id]);
    await purgeEvents(core.db);
    const late = await mustOpen(base, { origin, cookie: cookie(user), since: 1 });
    expect(await late.next((m) => m.type === 'resync')).toEqual({ type: 'resync', seq: 4 });
    late.ws.close();
  });

  it('a notification for everyone reaches every open socket live, one message each and no event rows; a reconnect from before it gets it', async () => {
    const carol = await createFixtureUser(core.db);
    const sockets = [await mustOpen(base, { origin, cookie: cookie(carol) }), await mustOpen(base, { origin, cookie: cookie(bob) })];
    const hellos = await Promise.all(sockets.map((s) => s.next((m) => m.type === 'hello')));
    const before = (hellos[0] as Extract<TSocketMessage, { type: 'hello' }>).bseq;
    const rows = async () => (await core.db.query<{ n: number }>('SELECT count(*)::int AS n FROM events'))[0]!.n;
    const eventRows = await rows();
    const id = await sendNotification(core.db, {
      userId: null,
      display: 'inner',
      type: 'success',
      texts: [
        { locale: 'ru', title: 'Для всех' },
        { locale: 'en', title: 'For everyone' },
      ],
    });
    for (const socket of sockets) {
      const got = (await socket.next((m) => m.type === 'broadcast')) as Extract<TSocketMessage, { type: 'broadcast' }>;
      expect(got.seq).toBeGreaterThan(before);
      expect((got.payload as { notifications: Array<{ notification_id: number; title: string }> }).notifications).toContainEqual(
        expect.objectContaining({ notification_id: id }),
      );
    }
    expect(await rows()).toBe(eventRows);
    // Later checks send nothing more: whatever two more checks sent would reach the socket before
    // an event recorded after them (one ordered link, one ordered socket).
    await checkTwiceThenMark(carol, sockets[0]!);
    expect(sockets[0]!.messages.filter((m) => m.type === 'broadcast')).toHaveLength(1);
    for (const socket of sockets) socket.ws.close();
    // A browser that was away since `before` gets the state on reconnect, one that is up to date nothing.
    const away = await mustOpen(base, { origin, cookie: cookie(carol), bsince: before });
    expect(await away.next((m) => m.type === 'broadcast')).toMatchObject({ type: 'broadcast', seq: await contentVersion() });
    const current = await mustOpen(base, { origin, cookie: cookie(carol), bsince: await contentVersion() });
    await current.next((m) => m.type === 'hello');
    await checkTwiceThenMark(carol, current);
    expect(current.messages.map((m) => m.type)).toEqual(['hello', 'events']);
    away.ws.close();
    current.ws.close();
  });

  it('a rates notice reaches every open socket live, a burst folded into at most two', async () => {
    const sockets = [await mustOpen(base, { origin, cookie: cookie(alice) }), await mustOpen(base, { origin, cookie: cookie(bob) })];
    await Promise.all(sockets.map((s) => s.next((m) => m.type === 'hello')));
    for (let i = 0; i < 5; i++) noticeRates(core.db);
    const firsts: TSocketMessage[] = [];
    for (const socket of sockets) firsts.push(await socket.next((m) => m.type === 'rates'));
    expect(firsts).toEqual([{ type: 'rates' }, { type: 'rates' }]);
    // The burst's tail: one more, a second later (a chart must not miss the last change).
    await sockets[0]!.next((m) => m.type === 'rates' && m !== firsts[0]);
    await checkTwiceThenMark(alice, sockets[0]!);
    expect(sockets[0]!.messages.filter((m) => m.type === 'rates')).toHaveLength(2);
    for (const socket of sockets) socket.ws.close();
  });

  it('logout closes that session’s sockets within 5 s (4401), and the cookie no longer opens one', async () => {
    const user = await createFixtureUser(core.db);
    const socket = await mustOpen(base, { origin, cookie: cookie(user) });
    await socket.next((m) => m.type === 'hello');
    const started = Date.now();
    const out = await bff.app.inject({ method: 'POST', url: '/api/auth/logout', headers: { host: new URL(base).host, origin, cookie: cookie(user) } });
    expect(out.statusCode).toBe(200);
    const closed = await Promise.race([socket.closed, new Promise<null>((resolve) => setTimeout(() => resolve(null), 5_000))]);
    expect(closed?.code).toBe(SOCKET_CLOSE.sessionEnded);
    expect(closed!.at - started).toBeLessThan(5_000);
    expect(await openSocket(base, { origin, cookie: cookie(user) })).toMatchObject({ refused: 401 });
  });

  it('drops a peer that stops answering heartbeats, and a slow reader instead of buffering for it', async () => {
    const strict = await buildBff(core.url, { WS_HEARTBEAT_MS: '150', WS_MAX_BUFFERED_BYTES: '65536' });
    const strictBase = await strict.app.listen({ host: '127.0.0.1', port: 0 });
    try {
      // Heartbeats: a client whose socket is paused cannot answer the ping.
      const silent = await mustOpen(strictBase, { origin: strictBase, cookie: cookie(alice) });
      await silent.next((m) => m.type === 'hello');
      expect(strict.app.realtime.sockets()).toBe(1);
      (silent.ws as unknown as { _socket: { pause(): void } })._socket.pause();
      await until('the silent peer dropped', () => strict.app.realtime.sockets() === 0, 5_000);
    } finally {
      await strict.close();
    }
    const slowBff = await buildBff(core.url, { WS_MAX_BUFFERED_BYTES: '65536' });
    const slowBase = await slowBff.app.listen({ host: '127.0.0.1', port: 0 });
    try {
      const user = await createFixtureUser(core.db);
      const slow = await mustOpen(slowBase, { origin: slowBase, cookie: cookie(user) });
      await slow.next((m) => m.type === 'hello');
      (slow.ws as unknown as { _socket: { pause(): void } })._socket.pause();
      const big = 'x'.repeat(200_000);
      for (let i = 0; i < 60 && slowBff.app.realtime.sockets() > 0; i++) await record(user, { big });
      await until('the slow reader dropped', () => slowBff.app.realtime.sockets() === 0, 10_000);
    } finally {
      await slowBff.close();
    }
  });
});
