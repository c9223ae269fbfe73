import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHash } from 'node:crypto';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Duplex } from 'node:stream';
import { HMR_PATH } from '@obmen/shared';
import { loadConfig } from '../src/config.ts';
import { build, json } from './helpers.ts';

const WS_GUID = '258EAFA5-E914-47DA-95CA-C5AB0DC85B11';

type TFakeDevServer = { url: string; seen: Array<{ url: string; headers: IncomingHttpHeaders }>; close: () => Promise<void> };

/**
 * A stand-in for the Astro dev server: pages echo the Host they were asked with, and the HMR
 * path accepts a websocket with Vite's subprotocol and greets it with one text frame.
 */
async function startFakeDevServer(): Promise<TFakeDevServer> {
  const seen: TFakeDevServer['seen'] = [];
  const upgraded = new Set<Duplex>();
  const server: Server = createServer((req, res) => {
    seen.push({ url: req.url ?? '', headers: req.headers });
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
    res.end(`<!doctype html><p data-host="${req.headers.host}">dev page ${req.url}</p><script type="module" src="/@vite/client"></script>`);
  });
  server.on('upgrade', (req, socket) => {
    seen.push({ url: req.url ?? '', headers: req.headers });
    if (!req.url?.startsWith(HMR_PATH) || req.headers['sec-websocket-protocol'] !== 'vite-hmr') return socket.destroy();
    upgraded.add(socket);
    const accept = createHash('sha1').update(`${req.headers['sec-websocket-key']}${WS_GUID}`).digest('base64');
    socket.write(
      `HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: ${accept}\r\nSec-WebSocket-Protocol: vite-hmr\r\n\r\n`,
    );
    const greeting = Buffer.from('{"type":"connected"}');
    socket.write(Buffer.concat([Buffer.from([0x81, greeting.length]), greeting]));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    seen,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        for (const socket of upgraded) socket.destroy();
        server.close(() => resolve());
      }),
  };
}

/** The first message a websocket through the BFF gets, or why it closed. */
function firstMessage(url: string, protocol: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = new WebSocket(url, protocol);
    socket.onmessage = (event) => {
      resolve(String(event.data));
      socket.close();
    };
    socket.onerror = () => reject(new Error('websocket failed'));
  });
}

describe('BFF in development (SITE_DEV_URL: pages from the Astro dev server)', () => {
  let devServer: TFakeDevServer;
  let ctx: Awaited<ReturnType<typeof build>>;
  let origin: string;
  beforeAll(async () => {
    devServer = await startFakeDevServer();
    ctx = await build({ env: { SITE_DEV_URL: devServer.url } });
    const address = await ctx.app.listen({ host: '127.0.0.1', port: 0 });
    origin = address;
  });
  afterAll(async () => {
    // The dev server first: its websockets closing close the BFF's side of them.
    await devServer.close();
    await ctx.close();
  });

  it('serves pages from the dev server with the browser Host and without the production script policy', async () => {
    const res = await ctx.app.inject({ url: '/login?next=%2F', headers: { host: 'localhost:3000' } });
    expect(res.statusCode).toBe(200);
    expect(res.body).toContain('data-host="localhost:3000"');
    expect(res.body).toContain('dev page /login?next=%2F');
    expect(res.headers['content-security-policy']).toBeUndefined();
    expect(res.headers['x-frame-options']).toBe('DENY');
  });

  it('keeps /api, /i18n and the health check its own, and tells the islands the build is "dev"', async () => {
    ctx.upstream.handle = (_req, res) => json(res, 200, { status: 'ok' });
    const before = devServer.seen.length;
    const api = await ctx.app.inject({ url: '/api/exchange/list' });
    expect(JSON.parse(api.body)).toEqual({ fv: 'dev', status: 'ok' });
    expect((await ctx.app.inject({ url: '/i18n/en' })).json()).toHaveProperty(['site.name']);
    expect((await ctx.app.inject({ url: '/local/healthcheck' })).statusCode).toBe(200);
    expect(devServer.seen.length).toBe(before);
  });

  it('passes the hot-reload websocket through to the dev server', async () => {
    const message = await firstMessage(`${origin.replace('http', 'ws')}${HMR_PATH}?token=t1`, 'vite-hmr');
    expect(message).toBe('{"type":"connected"}');
    expect(devServer.seen.at(-1)?.url).toBe(`${HMR_PATH}?token=t1`);
  });

  it('proxies no other websocket to the dev server', async () => {
    const before = devServer.seen.length;
    await expect(firstMessage(`${origin.replace('http', 'ws')}/somewhere`, 'vite-hmr')).rejects.toThrow('websocket failed');
    expect(devServer.seen.length).toBe(before);
  });

  it('refuses a dev server in production', () => {
    expect(() => loadConfig({ NODE_ENV: 'production', SITE_DEV_URL: devServer.url })).toThrow(/SITE_DEV_URL/);
  });
});
