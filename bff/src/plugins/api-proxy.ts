import fp from 'fastify-plugin';
import type { FastifyInstance, HTTPMethods, RouteOptions } from 'fastify';
import { REQUEST_ID_HEADER, isDevPath, writeAccessLine } from '@obmen/shared';
import type { TConfig } from '../config.ts';
import type { TFrontDoor } from '../front-door.ts';
import { createProxy } from '../proxy.ts';
import { genRequestId } from '../request-id.ts';
import { crossSiteRule } from './csrf.ts';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** The route is the /api proxy's own (not a route the BFF answers itself). */
    apiProxy?: boolean;
  }
}

const PROXIED_METHODS: HTTPMethods[] = ['DELETE', 'GET', 'HEAD', 'OPTIONS', 'PATCH', 'POST', 'PUT'];
const PROXIED = new Set<string>(PROXIED_METHODS);

/**
 * The paths under /api the BFF answers itself (the front-end logger, /api/lang, the API docs, the
 * 404 of /api/internal/*), whatever plugin declares them: the app calls this before registering
 * any, and the front door leaves them to Fastify.
 */
export function watchOwnApiRoutes(app: FastifyInstance): readonly string[] {
  const prefixes: string[] = [];
  app.addHook('onRoute', (route: RouteOptions) => {
    if (route.url.startsWith('/api') && route.config?.apiProxy !== true) prefixes.push(route.url.split(/[*:]/, 1)[0]!);
  });
  return prefixes;
}

export type TApiProxyOptions = {
  config: TConfig;
  frontendVersion: string;
  /** Where the plain /api requests are proxied before Fastify; without it all go the route. */
  frontDoor?: TFrontDoor | undefined;
  /** From watchOwnApiRoutes. */
  ownApiPaths: readonly string[];
};

/**
 * /api/* → the core (proxy.ts), two ways in to the one proxy:
 *   the front door: a request on a real socket that Fastify's hooks would only let pass (a
 *     proxied method, not a path the BFF answers itself or a development helper, not cross-site,
 *     not under pressure, no trusted proxy in front) is proxied from the server's `request`
 *     event: its id, cookies and access line made here, at about half the CPU of Fastify's way;
 *   a Fastify route for everything else (inject, TRUST_PROXY, a request the hooks refuse or
 *     answer), which hands its raw request and response to the same proxy after the hooks ran.
 */
export default fp<TApiProxyOptions>(
  async (app, { config, frontendVersion, frontDoor, ownApiPaths }) => {
    const proxy = createProxy({
      core: app.core,
      upstreamUrl: config.UPSTREAM_URL,
      frontendVersion,
      timeoutMs: config.UPSTREAM_TIMEOUT_MS,
      uploadTimeoutMs: config.UPLOAD_UPSTREAM_TIMEOUT_MS,
      saturated: () => app.upstreamSaturated(),
      notFoundWindow: app.notFoundWindow,
    });

    app.route({
      method: PROXIED_METHODS,
      url: '/api/*',
      config: { apiProxy: true },
      // After the app's hooks, before any body is read: the body streams on to the core.
      onRequest: (request, reply, _done) => {
        reply.hijack();
        proxy({
          req: request.raw,
          res: reply.raw,
          url: request.url,
          headers: request.headers,
          cookies: request.cookies,
          id: request.id,
          ip: request.ip,
          https: request.https,
          warn: (obj, msg) => request.log.warn(obj, msg),
        });
      },
      handler: () => {
        throw new Error('the /api proxy answers in onRequest');
      },
    });

    // Behind a trusted proxy the client's address and scheme take Fastify's trustProxy rules.
    if (!frontDoor || config.TRUST_PROXY !== undefined) return;
    const publicHttps = config.PUBLIC_URL?.startsWith('https:') ?? false;
    const isCrossSite = crossSiteRule(config.PUBLIC_URL ? [config.PUBLIC_URL] : []);
    // Shedding (load-shedding.ts) answers through Fastify; with SHED_EVENT_LOOP_DELAY_MS=0 it is not there.
    const underPressure = app.hasDecorator('isUnderPressure') ? () => app.isUnderPressure() : () => false;
    const isOwn = (url: string) => ownApiPaths.some((path) => url.startsWith(path)) || isDevPath(url);
    const leave = frontDoor.use((req, res) => {
      const url = req.url ?? '';
      const method = req.method ?? '';
      if (!url.startsWith('/api/') || !PROXIED.has(method) || isOwn(url)) return false;
      const headers = req.headers;
      const encrypted = (req.socket as { encrypted?: boolean }).encrypted === true;
      if (isCrossSite(method, { headers, protocol: encrypted ? 'https' : 'http', host: headers.host ?? '' })) return false;
      if (underPressure()) return false;
      const started = performance.now();
      const id = genRequestId(req);
      const ip = req.socket.remoteAddress ?? '';
      res.setHeader(REQUEST_ID_HEADER, id);
      if (config.LOG_REQUESTS) {
        res.once('finish', () =>
          writeAccessLine(app.log, { reqId: id, req: { method, url, host: headers.host, ip }, res, responseTime: performance.now() - started }),
        );
      }
      proxy({
        req,
        res,
        url,
        headers,
        cookies: headers.cookie === undefined ? {} : app.parseCookie(headers.cookie),
        id,
        ip,
        https: publicHttps || encrypted,
        warn: (obj, msg) => app.log.warn({ reqId: id, ...obj }, msg),
      });
      return true;
    });
    app.addHook('preClose', (done) => {
      leave();
      done();
    });
  },
  { name: 'api-proxy', dependencies: ['@fastify/cookie', 'upstream', 'scheme', 'own-errors', 'load-shedding'] },
);
