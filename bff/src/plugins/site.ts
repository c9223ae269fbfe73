import fp from 'fastify-plugin';
import fastifyStatic from '@fastify/static';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { TPageLog } from '@obmen/shared';
import type { Pool } from 'undici';
import type { TConfig } from '../config.ts';
import { applySecurityHeaders } from './security-headers.ts';
import { errorBody } from '../errors.ts';
import { sendOverloaded } from './load-shedding.ts';
import { compressRawAnswer } from '../compression.ts';

type TAstroHandler = (req: IncomingMessage, res: ServerResponse, next: (err?: unknown) => void, locals: object) => Promise<void>;

/**
 * What every page render gets in Astro.locals (site/src/env.d.ts): the build version, the
 * client's address (for the core's per-IP limits), the scheme decided in onRequest (Secure
 * cookies), the BFF's validated configuration, its one pool to the core, the request's id (sent
 * on with the page's core calls) and its logger (pino, reqId bound: pages log through it).
 */
export type TPageLocals = { fv: string; clientIp: string; https: boolean; config: TConfig; core: Pool; requestId: string; log: TPageLog };

export const NOT_FOUND_PAGE = '/404';
/** The catch-all route of page renders. */
export const SITE_ROUTE = '/*';
const IMMUTABLE = 'public, max-age=31536000, immutable';
const SHORT = 'public, max-age=3600';
/** The service worker: the browser checks it for a new build on every visit (site/public/sw.js). */
const SERVICE_WORKER = '/sw.js';
const REVALIDATE = 'no-cache';
const PRECOMPRESSED_COPIES = ['**/*.br', '**/*.gz'];

/** The Astro build: hashed assets with long caching, other public files briefly, pages by SSR. */
export default fp<{ config: TConfig; frontendVersion: string }>(
  async (app, { config, frontendVersion }) => {
    const clientDir = join(config.SITE_DIST, 'client');
    const entry = join(config.SITE_DIST, 'server', 'entry.mjs');
    if (!existsSync(entry)) throw new Error(`No site build at ${config.SITE_DIST}: run "pnpm build" first`);
    const { handler } = (await import(pathToFileURL(entry).href)) as { handler: TAstroHandler };

    await app.register(fastifyStatic, {
      root: clientDir,
      // One route per built file, found at boot: no file-system lookups for page requests.
      wildcard: false,
      index: false,
      // The build's .br/.gz copies (scripts/compress-site.ts) go out for the file they sit beside,
      // as the client's Accept-Encoding allows; they have no routes of their own.
      preCompressed: true,
      globIgnore: PRECOMPRESSED_COPIES,
      // `path` is the file sent: a precompressed copy (sw.js.br) stands for the file it sits beside.
      setHeaders: (reply, path) =>
        reply.header('cache-control', path.includes('/_astro/') ? IMMUTABLE : path.replace(/\.(br|gz)$/, '').endsWith(SERVICE_WORKER) ? REVALIDATE : SHORT),
    });

    app.route({
      method: ['GET', 'HEAD'],
      url: SITE_ROUTE,
      handler: async (request, reply) => {
        // A render asks the core several times: with the core saturated, say so at once.
        if (app.upstreamSaturated()) return sendOverloaded(request, reply);
        reply.hijack();
        applySecurityHeaders(reply.raw, request.https);
        // A page the cache takes (x-page-cache) is stored as rendered and compressed there, once.
        if (!reply.raw.hasHeader('x-page-cache')) compressRawAnswer(request.raw, reply.raw);
        const locals: TPageLocals = {
          fv: frontendVersion,
          clientIp: request.ip,
          https: request.https,
          config,
          core: app.core,
          requestId: request.id,
          log: request.log,
        };
        const fail = (err: unknown) => {
          request.log.error({ err }, 'page render failed');
          if (!reply.raw.headersSent) reply.raw.writeHead(500, { 'content-type': 'text/plain; charset=utf-8' });
          reply.raw.end('Internal Server Error');
        };
        // Astro calls next() without an error when no page matches: render the 404 page instead,
        // unless this client has asked for too many missing pages (each render asks the core).
        await handler(
          request.raw,
          reply.raw,
          (err) => {
            if (err) return fail(err);
            const retryAfterS = app.notFoundWindow.hit(request.ip);
            if (retryAfterS > 0) {
              reply.raw.writeHead(429, { 'content-type': 'application/json; charset=utf-8', 'retry-after': String(retryAfterS) });
              return void reply.raw.end(JSON.stringify(errorBody(request, 'rate_limited', 'error.rate_limited')));
            }
            request.raw.url = NOT_FOUND_PAGE;
            handler(request.raw, reply.raw, fail, locals).catch(fail);
          },
          locals,
        );
      },
    });
  },
  { name: 'site', dependencies: ['upstream', 'scheme', 'own-errors', 'load-shedding'] },
);
