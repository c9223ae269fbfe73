import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AddressInfo } from 'node:net';
import { build } from '../../helpers.ts';
import { nonLoopbackAddress, rawRequest } from '../../raw-http.ts';

const REMOTE = nonLoopbackAddress();

/** A request over a real socket; a POST carries a valid body, so that only where it comes from decides. */
function get(port: number, host: string, path: string, options: { localAddress?: string; method?: string; headers?: Record<string, string> } = {}) {
  return rawRequest(`http://${host}:${port}`, path, { ...options, body: options.method === 'POST' ? JSON.stringify({ auth_type: 'email' }) : undefined });
}

describe.skipIf(REMOTE === undefined)('core development helpers answer loopback clients only (real sockets)', () => {
  let ctx: Awaited<ReturnType<typeof build>>;
  let port: number;
  beforeAll(async () => {
    ctx = await build('pglite');
    await ctx.app.listen({ host: '0.0.0.0', port: 0 });
    port = (ctx.app.server.address() as AddressInfo).port;
  });
  afterAll(() => ctx?.close());

  it('answers a peer on another interface 404, like a route that does not exist, whatever it forwards', async () => {
    const missing = await get(port, REMOTE!, '/api/no-such-route', { localAddress: REMOTE! });
    for (const [method, path] of [
      ['GET', '/api/dev/mailbox'],
      ['POST', '/api/dev/auth_type'],
      ['POST', '/api/dev/notify'],
    ] as const) {
      const res = await get(port, REMOTE!, path, {
        method,
        localAddress: REMOTE!,
        headers: { 'x-forwarded-for': '127.0.0.1', 'content-type': 'application/json' },
      });
      expect(res.status, path).toBe(404);
      expect(res.body, path).toBe(missing.body);
    }
  });

  it('answers the BFF on loopback, but not for a remote client it forwards', async () => {
    expect((await get(port, '127.0.0.1', '/api/dev/mailbox')).status).toBe(200);
    expect((await get(port, '127.0.0.1', '/api/dev/mailbox', { headers: { 'x-forwarded-for': '203.0.113.9' } })).status).toBe(404);
  });
});
