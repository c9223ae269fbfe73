import type { FastifyPluginAsync } from 'fastify';
import fp from 'fastify-plugin';
import cookie from '@fastify/cookie';
import compress from '@fastify/compress';
import type { TConfig } from './config.ts';
import { readFrontendVersion } from './frontend-version.ts';
import { ONLINE_COMPRESSION } from './compression.ts';
import securityHeaders from './plugins/security-headers.ts';
import scheme from './plugins/scheme.ts';
import ownErrors from './plugins/own-errors.ts';
import loadShedding from './plugins/load-shedding.ts';
import csrf from './plugins/csrf.ts';
import devGuard from './plugins/dev-guard.ts';
import apiProxy, { watchOwnApiRoutes } from './plugins/api-proxy.ts';
import upstream from './plugins/upstream.ts';
import health from './plugins/health.ts';
import language from './plugins/language.ts';
import i18n from './plugins/i18n.ts';
import site from './plugins/site.ts';
import siteDev from './plugins/site-dev.ts';
import frontLogger from './plugins/logger.ts';
import requestId from './request-id.ts';
import pageCache from './page-cache/plugin.ts';
import type { TClock } from './clock.ts';
import type { TFrontDoor } from './front-door.ts';
import apiDocs from './plugins/api-docs.ts';
import realtime from './realtime/plugin.ts';

export type TAppOptions = {
  config: TConfig;
  frontendVersion?: string;
  /** The http server's front door (Fastify's serverFactory): page-cache hits and plain /api calls answered there. */
  frontDoor?: TFrontDoor;
  /** The page cache's time (tests move it). */
  clock?: TClock;
};

/**
 * The BFF as a plugin: server.ts listens, tests inject. Not encapsulated, so what it decorates
 * (the page cache's statistics) is visible on the instance that registered it.
 */
const app: FastifyPluginAsync<TAppOptions> = async (fastify, { config, frontendVersion, frontDoor, clock }) => {
  // The dev server's pages say "dev" too (site middleware), so no answer asks them to reload.
  const fv = frontendVersion ?? (config.SITE_DEV_URL ? 'dev' : readFrontendVersion(config.SITE_DIST));
  // Before any route: the /api paths the BFF answers itself, which the proxy's front door leaves alone.
  const ownApiPaths = watchOwnApiRoutes(fastify);
  await fastify.register(requestId);
  const publicHttps = config.PUBLIC_URL?.startsWith('https:') ?? false;
  await fastify.register(cookie);
  // Before every route: answers sent through Fastify are compressed (pages rendered by Astro in site.ts).
  await fastify.register(compress, ONLINE_COMPRESSION);
  // First of all: http or https, once per request (cookies and HSTS read it).
  await fastify.register(scheme, { publicHttps });
  await fastify.register(ownErrors, { notFoundPerMinute: config.NOT_FOUND_PER_MINUTE });
  // Overloaded: 503 + Retry-After before any work; /local/livez answers regardless.
  await fastify.register(loadShedding, { maxEventLoopDelayMs: config.SHED_EVENT_LOOP_DELAY_MS, maxUpstreamPending: config.SHED_UPSTREAM_PENDING });
  await fastify.register(securityHeaders);
  // Before every route: a cross-site state-changing request is refused before anything runs.
  await fastify.register(csrf, { allowedOrigins: config.PUBLIC_URL ? [config.PUBLIC_URL] : [] });
  // Development helpers (/api/dev/*, /dev/*) for loopback clients only, before the proxy and pages.
  await fastify.register(devGuard);
  await fastify.register(upstream, { config });
  await fastify.register(health);
  await fastify.register(language);
  await fastify.register(i18n);
  // BFF-owned, never proxied: POST /api/logger/front (a specific route wins over the /api/* proxy).
  await fastify.register(frontLogger, { perMinute: config.FRONT_LOG_PER_MINUTE });
  // BFF-owned too: GET /api/openapi.json (the core's document plus the BFF's calls), /api/docs/.
  await fastify.register(apiDocs);
  // The browser's realtime socket /ws, relaying the core's event stream (and a 404 for /api/internal/*).
  await fastify.register(realtime, {
    upstreamUrl: config.UPSTREAM_URL,
    ...(config.PUBLIC_URL ? { publicUrl: config.PUBLIC_URL } : {}),
    heartbeatMs: config.WS_HEARTBEAT_MS,
    maxBufferedBytes: config.WS_MAX_BUFFERED_BYTES,
    maxPerSession: config.WS_MAX_PER_SESSION,
    maxPerAddress: config.WS_MAX_PER_ADDRESS,
  });
  await fastify.register(apiProxy, { config, frontendVersion: fv, frontDoor, ownApiPaths });
  if (config.SITE_DEV_URL) {
    // Development: the Astro dev server renders every page afresh, so no page cache either.
    await fastify.register(siteDev, { devServerUrl: config.SITE_DEV_URL });
    return;
  }
  // Signed-out article pages from memory: at the front door, else before the Astro handler.
  if (config.PAGE_CACHE_TTL_MS > 0) {
    await fastify.register(pageCache, {
      ttlMs: config.PAGE_CACHE_TTL_MS,
      pollMs: config.PAGE_CACHE_POLL_MS,
      maxBytes: config.PAGE_CACHE_MAX_BYTES,
      logRequests: config.LOG_REQUESTS,
      frontDoor,
      clock,
      publicHttps,
    });
  }
  await fastify.register(site, { config, frontendVersion: fv });
};

export default fp(app, { name: 'bff' });
