import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OPS_COOKIE, SESSION_COOKIE, type TOpsSocketMessage, type TSocketMessage } from '@obmen/shared';
import { buildBff, startRealCore } from './session-helpers.ts';
import { createFixtureUser } from '../../core/test/fixtures.ts';
import { operatorWith, type TTestOperator } from '../../core/test/ops-helpers.ts';
import { mustOpen, openSocket } from './realtime-client.ts';

const isDesk = (message: TSocketMessage | TOpsSocketMessage): message is TOpsSocketMessage => message.type === 'ops.support';

/** The back office's desk on the same /ws: the operator's cookie, the desk's state live, nothing of it for customers. */
describe('BFF /ws?ops=1 (real core)', () => {
  let core: Awaited<ReturnType<typeof startRealCore>>;
  let bff: Awaited<ReturnType<typeof buildBff>>;
  let base: string;
  let clock = new Date();
  const clockOf = {
    now: () => clock,
    tick: (ms: number) => {
      clock = new Date(clock.getTime() + ms);
    },
  };
  let support: TTestOperator;

  beforeAll(async () => {
    core = await startRealCore({ EVENTS_CHECK_MS: '200', JOBS: 'realtime-check' }, { now: () => clock });
    bff = await buildBff(core.url);
    base = await bff.app.listen({ host: '127.0.0.1', port: 0 });
    support = await operatorWith(core, clockOf, ['support']);
  }, 180_000);
  afterAll(async () => {
    await bff?.close();
    await core?.close();
  });

  it("an operator's socket gets the desk's state and each change; a customer's socket never does", async () => {
    const customer = await createFixtureUser(core.db);
    const mine = await mustOpen(base, { origin: base, cookie: `${SESSION_COOKIE}=${customer.token}` });
    const desk = await mustOpen(base, { origin: base, cookie: `${OPS_COOKIE}=${support.token}`, ops: true });
    const first = (await desk.next((m) => isDesk(m))) as unknown as TOpsSocketMessage;
    const written = await bff.app.inject({
      method: 'POST',
      url: '/api/support',
      headers: { host: new URL(base).host, origin: base, cookie: `${SESSION_COOKIE}=${customer.token}`, 'content-type': 'application/json' },
      payload: { text: 'Is anyone there?' },
    });
    expect(written.statusCode, written.body).toBe(200);
    const next = (await desk.next((m) => isDesk(m) && (m as unknown as TOpsSocketMessage).last > first.last)) as unknown as TOpsSocketMessage;
    expect(next).toMatchObject({ type: 'ops.support', unread: first.unread + 1, waiting: first.waiting + 1 });
    await mine.next((m) => m.type === 'events');
    expect(mine.messages.some((m) => isDesk(m))).toBe(false);
    mine.ws.close();
    desk.ws.close();
  });

  it("refuses the desk without an operator's cookie: a customer's session opens nothing there", async () => {
    const customer = await createFixtureUser(core.db);
    expect(await openSocket(base, { origin: base, cookie: `${SESSION_COOKIE}=${customer.token}`, ops: true })).toMatchObject({ refused: 401 });
    expect(await openSocket(base, { origin: base, cookie: `${OPS_COOKIE}=${customer.token}`, ops: true })).toMatchObject({ refused: 401 });
    const compliance = await operatorWith(core, clockOf, ['finance']);
    expect(await openSocket(base, { origin: base, cookie: `${OPS_COOKIE}=${compliance.token}`, ops: true })).toMatchObject({ refused: 401 });
  });

  it("never passes the core's /metrics on, though the core would answer the BFF's loopback address", async () => {
    expect((await core.app.inject({ url: '/metrics' })).statusCode).toBe(200);
    for (const url of ['/metrics', '/api/../metrics', '/api/metrics']) {
      const res = await bff.app.inject({ url, headers: { cookie: `${OPS_COOKIE}=${support.token}` } });
      expect({ url, status: res.statusCode, prometheus: res.body.includes('obmen_queue') }).toEqual({ url, status: 404, prometheus: false });
    }
  });

  it('a signed-out operator loses the socket', async () => {
    const desk = await mustOpen(base, { origin: base, cookie: `${OPS_COOKIE}=${support.token}`, ops: true });
    await desk.next((m) => isDesk(m));
    await core.db.query('UPDATE ops_sessions SET revoked_at = now()');
    // The core's jobs run on its clock: the next session check is due once it moves on.
    clockOf.tick(1_000);
    expect((await desk.closed).code).toBe(4401);
  });
});
