import fp from 'fastify-plugin';
import type { IncomingHttpHeaders, ServerResponse } from 'node:http';
import { LOCALE_COOKIE, SESSION_COOKIE, THEME_COOKIE, pickLocale, redactUrl, themeOf } from '@obmen/shared';
import { systemClock, type TClock } from '../clock.ts';
import type { TFrontDoor } from '../front-door.ts';
import { captureAnswer } from './capture.ts';
import { createPageStore, writeStoredPage, type TFill, type TPageEntry } from './store.ts';
import { createVersionPoller } from './version-poller.ts';

/*
 * The BFF's cache of signed-out article pages.
 *
 * What:   GET/HEAD /article/{name} (a valid article name, no query string) from a visitor with
 *         no remember_token cookie, keyed by (path, i18n_redirected locale, theme: the page's
 *         <html data-theme> comes from that cookie). Only complete 200
 *         text/html answers without Set-Cookie are stored, with every header Astro wrote (the
 *         page's CSP carries hashes of this very HTML) and the BFF's security headers.
 * Parts:  store.ts keeps the pages (gzip and brotli variants, ETags, byte bound, renders under
 *         way); version-poller.ts keeps them true to the core's content; capture.ts tees what
 *         Astro writes; this file decides per request, through one serveOrWait() for both ways in:
 * How:    a hit on a real socket is answered by the front door (front-door.ts, the http server
 *         Fastify gets through its serverFactory option), before Fastify (no routing, hooks,
 *         handler, Astro or core call: about half the CPU per request of going through
 *         Fastify); requests that path does not handle (proxied, odd cookies, inject) use an
 *         onRequest hook with the same cache. A miss goes on to the Astro handler
 *         (plugins/site.ts) and is stored once it ends. 304 for a matching If-None-Match.
 *         Hits carry `x-page-cache: hit`, rendered pages `x-page-cache: miss`.
 * Never:  a signed-in visitor (any remember_token cookie) is neither served from nor fills the
 *         cache; the request passes untouched.
 * Fresh:  entries live PAGE_CACHE_TTL_MS (30 s); the core's content version, polled every
 *         PAGE_CACHE_POLL_MS (1 s) while pages are wanted, drops them all when it changes (an
 *         article, a menu, a footer image, a site setting such as site_blocked, a notification
 *         for everyone). A page is stored only if the version it was rendered under is still
 *         the current one when it is stored, so a change during a render is never cached.
 */

export type TPageCacheOptions = {
  ttlMs: number;
  pollMs: number;
  maxBytes: number;
  /** The polling stops after this long without a cacheable request. */
  idleMs?: number;
  /** Which paths are cacheable; default: /article/{valid article name}. */
  cacheable?: RegExp;
  /** Where hits are answered before Fastify; without it every request takes the hook. */
  frontDoor?: TFrontDoor;
  /** Write an access line for front-door hits too (LOG_REQUESTS). */
  logRequests?: boolean;
  /** Every visitor comes over https (an https PUBLIC_URL): front-door hits carry HSTS too. */
  publicHttps?: boolean;
  clock?: TClock;
};

export type TPageCacheStats = {
  hits: number;
  fastHits: number;
  misses: number;
  stored: number;
  bypassed: number;
  invalidations: number;
  entries: number;
  bytes: number;
  version: string | undefined;
};

export type TPageCacheHandle = {
  stats: () => TPageCacheStats;
  clear: () => void;
  pollNow: () => Promise<void>;
  /** Resolves when the pages being stored (compressed) are in. */
  settled: () => Promise<void>;
};

declare module 'fastify' {
  interface FastifyInstance {
    /** The page cache's statistics and controls (diagnostics, tests); absent when it is off. */
    pageCache?: TPageCacheHandle;
  }
}

export const ARTICLE_PAGE = /^\/article\/[a-z0-9][a-z0-9_-]{0,63}$/;
const SESSION_IN_COOKIE = new RegExp(`(?:^|;)\\s*${SESSION_COOKIE}=`);
const LOCALE_IN_COOKIE = new RegExp(`(?:^|;)\\s*${LOCALE_COOKIE}=([^;\\s]*)`);
const VERSION_PATH = '/api/content/version';

const THEME_IN_COOKIE = new RegExp(`(?:^|;)\\s*${THEME_COOKIE}=([^;\\s]*)`);
const keyOf = (locale: string | undefined, theme: string | undefined, path: string) => `${pickLocale(locale)} ${themeOf(theme)} ${path}`;

export default fp<TPageCacheOptions>(
  async (app, options) => {
    const clock = options.clock ?? systemClock;
    const idleMs = options.idleMs ?? 60_000;
    const cacheable = options.cacheable ?? ARTICLE_PAGE;
    const store = createPageStore({ ttlMs: options.ttlMs, maxBytes: options.maxBytes, idleMs, clock });
    const poller = createVersionPoller({
      store,
      pollMs: options.pollMs,
      idleMs,
      clock,
      fetchVersion: async () => {
        const answer = await app.core.request({ path: VERSION_PATH, method: 'GET', headersTimeout: 2_000, bodyTimeout: 2_000 });
        const body = (await answer.body.json()) as { version?: unknown };
        return answer.statusCode === 200 && typeof body.version === 'string' ? body.version : undefined;
      },
      onError: (err) => app.log.debug({ err }, 'content version poll failed'),
    });
    const stats = { hits: 0, fastHits: 0, misses: 0, bypassed: 0 };
    const pending = new Set<Promise<unknown>>();

    app.addHook('onClose', () => poller.stop());

    /**
     * The one decision for both ways in: serve the stored page, or wait for the render of this
     * key under way and serve its result, and return true; or return false at once when there
     * is neither (the caller renders). `otherwise` runs when the awaited render stored nothing.
     * One render per key at a time: no key renders 50 times after an invalidation.
     */
    function serveOrWait(key: string, serve: (entry: TPageEntry) => void, otherwise: () => void): boolean {
      const { entry, wait } = store.peek(key);
      if (entry) serve(entry);
      else if (wait)
        void wait.then(() => {
          const ready = store.peek(key).entry;
          if (ready) serve(ready);
          else otherwise();
        });
      return entry !== undefined || wait !== undefined;
    }

    /** Stores what Astro writes for this key once the answer has ended. */
    function fillFromRender(res: ServerResponse, key: string, fill: TFill): void {
      const startedIn = store.generation();
      let finished = false;
      const finish = (stored: boolean) => {
        if (finished) return;
        finished = true;
        store.finishFill(key, fill, stored);
      };
      captureAnswer(
        res,
        ({ status, headers, chunks }) => {
          const storing = store
            .put(key, startedIn, status, headers, chunks)
            .catch((err) => {
              app.log.warn({ err }, 'page cache store failed');
              return false;
            })
            .then(finish)
            .finally(() => pending.delete(storing));
          pending.add(storing);
        },
        () => finish(false),
      );
    }

    const hitCounted = (write: (entry: TPageEntry) => void) => (entry: TPageEntry) => {
      stats.hits++;
      write(entry);
    };

    // Through Fastify (inject, and whatever the front door leaves alone): an onRequest hook.
    app.addHook('onRequest', (request, reply, done) => {
      if ((request.method !== 'GET' && request.method !== 'HEAD') || !cacheable.test(request.url)) return done();
      const cookies = request.cookies;
      if (cookies[SESSION_COOKIE] !== undefined) {
        stats.bypassed++;
        return done();
      }
      poller.wanted();
      const key = keyOf(cookies[LOCALE_COOKIE], cookies[THEME_COOKIE], request.url);
      const hit = hitCounted((entry) => {
        reply.hijack();
        writeStoredPage(request.method, request.headers, request.https, reply.raw, entry);
      });
      const render = () => {
        stats.misses++;
        // The page renders as usual (site.ts); it is stored only under a known content version.
        reply.raw.setHeader('x-page-cache', 'miss');
        if (request.method === 'GET' && poller.version() !== undefined && !store.isFilling(key)) fillFromRender(reply.raw, key, store.startFill(key));
        done();
      };
      if (!serveOrWait(key, hit, render)) render();
    });

    /*
     * The front door: a hit on a real socket is answered before Fastify sees the request, which
     * is what lets the BFF keep up with a static file server. Only the plainest requests take
     * it: GET/HEAD of a cacheable path, a Cookie header this parser understands, no proxy
     * headers (behind a proxy the protocol needs Fastify's trustProxy, so those go the hook
     * path above, cached all the same). Shutting down, Fastify answers (and closes kept-alive
     * connections) itself.
     */
    const frontDoor = options.frontDoor;
    if (frontDoor) {
      const leave = frontDoor.use((req, res, toFastify) => {
        const method = req.method;
        if ((method !== 'GET' && method !== 'HEAD') || !cacheable.test(req.url ?? '')) return false;
        const headers: IncomingHttpHeaders = req.headers;
        if (headers['x-forwarded-proto'] !== undefined || headers.forwarded !== undefined) return false;
        let locale: string | undefined;
        let theme: string | undefined;
        const cookie = headers.cookie;
        if (cookie !== undefined) {
          if (SESSION_IN_COOKIE.test(cookie) || cookie.includes('%') || cookie.includes('"')) return false;
          locale = LOCALE_IN_COOKIE.exec(cookie)?.[1];
          theme = THEME_IN_COOKIE.exec(cookie)?.[1];
        }
        const key = keyOf(locale, theme, req.url!);
        const hit = hitCounted((entry) => {
          stats.fastHits++;
          writeStoredPage(method, headers, options.publicHttps === true || (req.socket as { encrypted?: boolean }).encrypted === true, res, entry);
          if (options.logRequests)
            app.log.info({ req: { method, url: redactUrl(req.url ?? '') }, res: { statusCode: res.statusCode }, pageCache: 'hit' }, 'request completed');
        });
        const taken = serveOrWait(key, hit, toFastify);
        if (taken) poller.wanted();
        return taken;
      });
      app.addHook('preClose', (done) => {
        leave();
        done();
      });
    }

    app.decorate('pageCache', {
      stats: () => ({ ...stats, ...store.stats(), invalidations: poller.invalidations(), version: poller.version() }),
      clear: store.clear,
      pollNow: poller.pollNow,
      settled: async () => {
        while (pending.size) await Promise.all(pending);
      },
    } satisfies TPageCacheHandle);
  },
  { name: 'page-cache', dependencies: ['@fastify/cookie', 'upstream'] },
);
