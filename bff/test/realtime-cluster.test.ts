import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import Fastify from 'fastify';
import { SESSION_COOKIE, type TSocketMessage } from '@obmen/shared';
import app from '../../core/src/app.ts';
import { openTestDb, seedAsStarted, testConfig } from '../../core/test/helpers.ts';
import { createFixtureUser, fund, type TFixtureUser } from '../../core/test/fixtures.ts';
import { lastSequences, recordEvent } from '../../core/src/domains/events/service.ts';
import type { Db } from '../../core/src/db/index.ts';
import { buildBff } from './session-helpers.ts';
import { mustOpen, seqs, type TTestSocket } from './realtime-client.ts';
import { until } from '../../core/test/helpers.ts';

const NATS_URL = process.env.TEST_NATS_URL ?? 'nats://127.0.0.1:4222';

/**
 * Two cores and two BFFs on one PostgreSQL database: every user has a socket on each BFF, and
 * transfers and other events are made through both cores at once. Every socket must get each of
 * its user's events exactly once, in order: with LISTEN/NOTIFY, and with NATS.
 */
describe.skipIf(!process.env.TEST_DATABASE_URL).each([
  ['LISTEN/NOTIFY', {}],
  ['NATS', { NATS_URL }],
] as const)('realtime with two cores and two BFFs on PostgreSQL (%s)', (_name, busEnv) => {
  let database: Awaited<ReturnType<typeof openTestDb>>;
  const cores: Array<{ close: () => Promise<void>; url: string }> = [];
  const bffs: Array<{ base: string; close: () => Promise<void>; inject: (o: object) => Promise<{ statusCode: number }> }> = [];
  let users: TFixtureUser[];
  let db: Db;

  beforeAll(async () => {
    database = await openTestDb('postgres');
    db = database.db;
    for (let i = 0; i < 2; i++) {
      const config = testConfig({ DATABASE_URL: database.url!, EVENTS_CHECK_MS: '60000', ...busEnv });
      const core = Fastify({ logger: false, pluginTimeout: 120_000 });
      await core.register(app, { config });
      const url = await core.listen({ host: '127.0.0.1', port: 0 });
      cores.push({ url, close: () => core.close() });
      const bff = await buildBff(url);
      const base = await bff.app.listen({ host: '127.0.0.1', port: 0 });
      bffs.push({
        base,
        close: bff.close,
        inject: (o) => bff.app.inject({ ...o, headers: { ...(o as { headers?: object }).headers, host: new URL(base).host, origin: base } }),
      });
    }
    await seedAsStarted(db, testConfig());
    users = [];
    for (let i = 0; i < 4; i++) users.push(await createFixtureUser(db));
    for (const user of users) await fund(db, user.id, 'USDT', 1_000_000_000n);
  }, 180_000);
  afterAll(async () => {
    for (const bff of bffs) await bff.close();
    for (const core of cores) await core.close();
    await database?.drop();
  });

  it('delivers every event exactly once, in order, to every socket of its user', async () => {
    const sockets: Array<{ user: TFixtureUser; socket: TTestSocket; from: number }> = [];
    for (const user of users) {
      for (const bff of bffs) {
        const socket = await mustOpen(bff.base, { origin: bff.base, cookie: `${SESSION_COOKIE}=${user.token}` });
        const hello = (await socket.next((m) => m.type === 'hello')) as Extract<TSocketMessage, { type: 'hello' }>;
        sockets.push({ user, socket, from: hello.seq });
      }
    }
    let n = 0;
    const transfer = (bff: (typeof bffs)[number], from: TFixtureUser, to: TFixtureUser) =>
      bff.inject({
        method: 'POST',
        url: '/api/transfer',
        headers: { cookie: `${SESSION_COOKIE}=${from.token}`, 'content-type': 'application/json', 'idempotency-key': `cluster-${++n}-${Date.now()}` },
        payload: { account_id: String(to.accountId), currency: 'USDT', amount: '0.1' },
      });
    // Transfers in every direction through both cores at once, and chat-like events written beside them.
    const work: Array<Promise<unknown>> = [];
    for (let round = 0; round < 10; round++) {
      users.forEach((from, i) => {
        const to = users[(i + 1 + (round % 3)) % users.length]!;
        work.push(transfer(bffs[(i + round) % 2]!, from, to).then((res) => expect(res.statusCode, (res as { body?: string }).body).toBe(200)));
      });
      work.push(db.transaction((tx) => recordEvent(tx, users[round % users.length]!.id, 'unread_msgs', { private: round, support: 0 })));
    }
    await Promise.all(work);
    const newest = await lastSequences(
      db,
      users.map((u) => u.id),
    );
    for (const { user, socket, from } of sockets) {
      const last = newest.get(user.id)!;
      await until(`user ${user.id} up to ${last}`, () => seqs(socket).at(-1) === last, 15_000);
      expect(seqs(socket)).toEqual(Array.from({ length: last - from }, (_, i) => from + i + 1));
    }
    // Nothing more arrives afterwards (no duplicate from the other core).
    await new Promise((resolve) => setImmediate(resolve));
    for (const { user, socket } of sockets) expect(seqs(socket).at(-1)).toBe(newest.get(user.id));
    for (const { socket } of sockets) socket.ws.close();
  });
});
