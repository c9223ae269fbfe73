import proxy from '@fastify/http-proxy';
import type { FastifyPluginAsync } from 'fastify';
import { WebSocket, type RawData } from 'ws';
import { HMR_PATH, REQUEST_ID_HEADER } from '@obmen/shared';

/**
 * Development (`pnpm dev`): pages, modules and assets come from the Astro dev server, and its
 * hot-reload websocket passes through, so the browser sees one origin (this BFF) for pages,
 * /api, /i18n and cookies alike. Routes the BFF owns (/api, /i18n, health) are more specific
 * and still win. Only the HMR path is proxied as a websocket: other upgrades stay the BFF's.
 */
const siteDev: FastifyPluginAsync<{ devServerUrl: string }> = async (app, { devServerUrl }) => {
  // The browser's Host reaches Astro, so Astro.url and cookies are those of the BFF's origin;
  // the client's address and scheme as the BFF decided them (site/src/lib/dev-locals.ts).
  const keepHost = {
    rewriteRequestHeaders: (request: { headers: { host?: string }; ip: string; https: boolean }, headers: Record<string, unknown>) => ({
      ...headers,
      host: request.headers.host,
      'x-forwarded-for': request.ip,
      'x-forwarded-proto': request.https ? 'https' : 'http',
    }),
  };
  // A page pulls a hundred modules: their lines would bury the /api ones (Astro logs each page itself).
  const logLevel = 'warn';
  // The hot-reload socket is piped by a route of the BFF's websocket server (@fastify/websocket,
  // registered app-wide by the realtime plugin), not by the proxy's own websocket support: two
  // 'upgrade' listeners on one server would both take the HMR upgrade and break it.
  app.get(HMR_PATH, { websocket: true }, (socket, request) => {
    const protocols = String(request.headers['sec-websocket-protocol'] ?? '')
      .split(',')
      .map((protocol) => protocol.trim())
      .filter(Boolean);
    const upstream = new WebSocket(`${devServerUrl.replace(/^http/, 'ws')}${request.url}`, protocols, { headers: { host: request.headers.host ?? '' } });
    const waiting: Array<[RawData, boolean]> = [];
    socket.on('message', (data: RawData, binary: boolean) => {
      if (upstream.readyState === WebSocket.OPEN) upstream.send(data, { binary });
      else waiting.push([data, binary]);
    });
    upstream.on('open', () => {
      for (const [data, binary] of waiting.splice(0)) upstream.send(data, { binary });
    });
    upstream.on('message', (data: RawData, binary: boolean) => socket.send(data, { binary }));
    upstream.on('close', () => socket.close());
    upstream.on('error', (err) => {
      request.log.warn({ err }, 'dev server hot-reload socket failed');
      socket.close();
    });
    socket.on('close', () => upstream.close());
  });
  await app.register(proxy, { upstream: devServerUrl, prefix: '/', replyOptions: keepHost, logLevel });
  // Without a websocket route of the BFF's own, every upgrade is routed here: only HMR's passes.
  app.addHook('onRequest', async (request, reply) => {
    if (request.headers.upgrade && request.url.split('?', 1)[0] !== HMR_PATH) return reply.callNotFound();
  });
  // Vite injects inline scripts the production policy (script-src 'self') would block; Astro
  // adds no hashed policy in dev. The other security headers stay.
  app.addHook('onSend', async (_request, reply) => {
    reply.removeHeader('content-security-policy');
  });
};

export default siteDev;
