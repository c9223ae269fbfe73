import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DICTIONARIES, isDevPath, isLoopbackAddress } from '@obmen/shared';
import { build, requireRealSiteBuild } from './helpers.ts';
import { nonLoopbackAddress, rawRequest } from '../../core/test/raw-http.ts';

const REMOTE = nonLoopbackAddress();

/**
 * Every development helper, and spellings a router might still take for one; `page`: the BFF's
 * router gives the path to the site (refused with its 404 page), else to the proxy (JSON).
 */
const DEV_ROUTES: { method: string; path: string; page?: true }[] = [
  { method: 'GET', path: '/api/dev/mailbox?to=victim%40example.test' },
  { method: 'POST', path: '/api/dev/auth_type' },
  { method: 'POST', path: '/api/dev/notify' },
  { method: 'GET', path: '/dev/mailbox?to=victim%40example.test', page: true },
  { method: 'GET', path: '/api//dev/mailbox' },
  { method: 'GET', path: '/api/%64ev/mailbox' },
  { method: 'GET', path: '/API/DEV/mailbox', page: true },
  { method: 'GET', path: '/api/x/../dev/mailbox' },
  { method: 'GET', path: '/api/%2e%2e/api/dev/mailbox' },
  { method: 'GET', path: '/dev//mailbox', page: true },
];

describe('which paths are development helpers', () => {
  it('reads the path as strictly as any router', () => {
    for (const { path } of DEV_ROUTES) expect(isDevPath(path), path).toBe(true);
    for (const path of ['/api/devices', '/article/dev-notes', '/developer', '/api/auth/check?x=/dev/', '/']) expect(isDevPath(path), path).toBe(false);
  });

  it('knows loopback addresses', () => {
    for (const address of ['127.0.0.1', '127.8.9.10', '::1', '::ffff:127.0.0.1']) expect(isLoopbackAddress(address), address).toBe(true);
    for (const address of ['192.0.2.2', '::ffff:192.0.2.2', 'fd00::2', '0.0.0.0', '::', undefined])
      expect(isLoopbackAddress(address), String(address)).toBe(false);
  });
});

describe.skipIf(REMOTE === undefined)('development helpers over the network (real sockets)', () => {
  let ctx: Awaited<ReturnType<typeof build>>;
  let origin: string;
  let proxied: Awaited<ReturnType<typeof build>>;
  let proxiedOrigin: string;
  beforeAll(async () => {
    ctx = await build({ siteDist: requireRealSiteBuild() });
    await ctx.app.listen({ host: '0.0.0.0', port: 0 });
    origin = `http://${REMOTE}:${(ctx.app.server.address() as { port: number }).port}`;
    // Behind a proxy the BFF trusts: the socket is loopback, the client it forwards is not.
    proxied = await build({ fastifyOptions: { trustProxy: '127.0.0.1' } });
    proxiedOrigin = await proxied.app.listen({ host: '127.0.0.1', port: 0 });
  });
  afterAll(async () => {
    await ctx?.close();
    await proxied?.close();
  });

  const devHits = (hits: { url: string }[]) => hits.filter((hit) => /dev/i.test(hit.url));

  it('answers a client on another interface 404 from every dev route, and never asks the core', async () => {
    const pages: { path: string; body: string }[] = [];
    const errors: { path: string; body: string }[] = [];
    for (const { method, path, page } of DEV_ROUTES) {
      const res = await rawRequest(origin, path, {
        method,
        localAddress: REMOTE!,
        // A header cannot make a remote client local.
        headers: { 'x-forwarded-for': '127.0.0.1', 'content-type': 'application/json' },
        body: method === 'POST' ? JSON.stringify({ auth_type: 'email' }) : undefined,
      });
      expect(res.status, `${method} ${path}`).toBe(404);
      expect(String(res.headers['content-type']), path).toMatch(page ? /^text\/html/ : /^application\/json/);
      (page ? pages : errors).push({ path, body: res.body });
    }
    // Paths the router gives to the site get the 404 page; the others the JSON error.
    for (const { path, body } of pages) expect(body, path).toContain(DICTIONARIES.ru['not_found.title']);
    for (const { path, body } of errors)
      expect(JSON.parse(body), path).toEqual({ status: 'error', code: 'not_found', message: DICTIONARIES.ru['error.not_found'] });
    expect(devHits(ctx.upstream.hits)).toEqual([]);
  });

  it('still serves a loopback client (the helpers work where they are meant to)', async () => {
    const res = await rawRequest(`http://127.0.0.1:${new URL(origin).port}`, '/api/dev/mailbox?to=a%40b.test');
    expect(res.status).toBe(200);
    expect(devHits(ctx.upstream.hits)).toHaveLength(1);
    ctx.upstream.hits.length = 0;
  });

  it('refuses a remote client forwarded by a trusted proxy on loopback', async () => {
    const res = await rawRequest(proxiedOrigin, '/api/dev/mailbox', { headers: { 'x-forwarded-for': '203.0.113.7' } });
    expect(res.status).toBe(404);
    const local = await rawRequest(proxiedOrigin, '/api/dev/mailbox', { headers: { 'x-forwarded-for': '127.0.0.1' } });
    expect(local.status).toBe(200);
    expect(devHits(proxied.upstream.hits)).toHaveLength(1);
  });
});
