import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SESSION_COOKIE, SOCKET_CLOSE } from '@obmen/shared';
import { buildBff, startRealCore } from './session-helpers.ts';
import { createFixtureUser, type TFixtureUser } from '../../core/test/fixtures.ts';
import { isSocket, mustOpen, openSocket, type TTestSocket } from './realtime-client.ts';
import { until } from '../../core/test/helpers.ts';

/** The default WS_MAX_PER_SESSION. */
const PER_SESSION = 10;
const PER_ADDRESS = 15;

/** The caps on realtime sockets (real sockets, real core): per session, oldest closed first; per client address, refused. */
describe('BFF /ws caps', () => {
  let core: Awaited<ReturnType<typeof startRealCore>>;
  let bff: Awaited<ReturnType<typeof buildBff>>;
  let base: string;
  const cookie = (user: TFixtureUser) => `${SESSION_COOKIE}=${user.token}`;
  const open = async (user: TFixtureUser) => {
    const socket = await mustOpen(base, { origin: base, cookie: cookie(user) });
    await socket.next((m) => m.type === 'hello');
    return socket;
  };

  beforeAll(async () => {
    core = await startRealCore();
    bff = await buildBff(core.url, { WS_MAX_PER_ADDRESS: String(PER_ADDRESS) });
    base = await bff.app.listen({ host: '127.0.0.1', port: 0 });
  }, 180_000);
  afterAll(async () => {
    await bff?.close();
    await core?.close();
  });

  it('the 11th socket of a session closes its oldest with 4409; an address beyond its cap is refused 429; all closed, nothing is tracked', async () => {
    const alice = await createFixtureUser(core.db);
    const bob = await createFixtureUser(core.db);
    const mine: TTestSocket[] = [];
    for (let i = 0; i < PER_SESSION; i++) mine.push(await open(alice));
    expect(bff.app.realtime.tracked()).toEqual({ sockets: PER_SESSION, sessions: 1, addresses: 1 });

    const eleventh = await open(alice);
    const oldest = await Promise.race([mine[0]!.closed, new Promise((resolve) => setTimeout(resolve, 3_000, { code: 'still open after 3 s' }))]);
    expect(oldest).toMatchObject({ code: SOCKET_CLOSE.replaced });
    // Only the oldest: the other nine and the newest stay open.
    expect(mine.slice(1).every((socket) => socket.ws.readyState === socket.ws.OPEN)).toBe(true);
    expect(eleventh.ws.readyState).toBe(eleventh.ws.OPEN);
    await until('the replaced socket to be let go', () => bff.app.realtime.tracked().sockets === PER_SESSION);

    // Another session from the same address: up to the address's cap, then 429 before the upgrade.
    const bobs: TTestSocket[] = [];
    for (let i = 0; i < PER_ADDRESS - PER_SESSION; i++) bobs.push(await open(bob));
    const refused = await openSocket(base, { origin: base, cookie: cookie(bob) });
    expect(refused).toMatchObject({ refused: 429 });
    expect(!isSocket(refused) && JSON.parse(refused.body)).toMatchObject({ status: 'error', code: 'rate_limited' });
    expect(bobs.every((socket) => socket.ws.readyState === socket.ws.OPEN)).toBe(true);

    for (const socket of [...mine.slice(1), eleventh, ...bobs]) socket.ws.close();
    await until('every socket to be let go', () => bff.app.realtime.tracked().sockets === 0);
    expect(bff.app.realtime.tracked()).toEqual({ sockets: 0, sessions: 0, addresses: 0 });
    // The address's slots came back: it may open again.
    (await open(bob)).ws.close();
    await until('the last socket to be let go', () => bff.app.realtime.tracked().addresses === 0);
  });
});
