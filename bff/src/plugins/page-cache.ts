import fp from 'fastify-plugin';
import { createHash } from 'node:crypto';
import { promisify } from 'node:util';
import { brotliCompress, constants as zlib, gzip } from 'node:zlib';
import type { IncomingHttpHeaders, IncomingMessage, OutgoingHttpHeaders, Server, ServerResponse } from 'node:http';
import { LOCALE_COOKIE, SESSION_COOKIE, pickLocale } from '@obmen/shared';

/*
 * The BFF's cache of signed-out article pages (issue 4 point 2).
 *
 * What:   GET/HEAD /article/{name} (a valid article name, no query string) from a visitor with
 *         no remember_token cookie, keyed by (path, i18n_redirected locale). Only complete 200
 *         text/html answers without Set-Cookie are stored, with every header Astro wrote (the
 *         page's CSP carries hashes of this very HTML) and the BFF's security headers.
 * How:    a hit on a real socket is answered from the http server's request event, before
 *         Fastify (no routing, hooks, handler, Astro or core call: about half the CPU per
 *         request of going through Fastify); requests that path does not handle (proxied, odd
 *         cookies, inject) use an onRequest hook with the same cache. A miss goes on to the
 *         Astro handler (plugins/site.ts) and the hook tees what Astro writes; when the answer
 *         ends it is stored with gzip and brotli variants compressed once (off the event loop),
 *         a strong ETag per variant, Vary: Accept-Encoding, and 304 for a matching If-None-Match.
 *         Hits carry `x-page-cache: hit`, rendered pages `x-page-cache: miss`.
 * Never:  a signed-in visitor (any remember_token cookie) is neither served from nor fills the
 *         cache; the request passes untouched.
 * Fresh:  entries live PAGE_CACHE_TTL_MS (30 s). While pages are being cached, the BFF asks the
 *         core for GET /api/content/version every PAGE_CACHE_POLL_MS (1 s), one call per BFF
 *         instance whatever the traffic, and drops the whole cache when it changes (an
 *         article, a menu, a footer image, a site setting such as site_blocked, a notification
 *         for everyone). A page is stored only if the version it was rendered under is still
 *         the current one when it is stored, so a change during a render is never cached.
 *         Without traffic for a minute the polling stops; the next visitor starts it again
 *         (that first page is rendered but not stored until a version is known).
 */

export type TPageCacheOptions = {
  ttlMs: number;
  pollMs: number;
  maxBytes: number;
  /** The polling stops after this long without a cacheable request. */
  idleMs?: number;
  /** Which paths are cacheable; default: /article/{valid article name}. */
  cacheable?: RegExp;
  /** Answer hits from the http server's request event, before Fastify (default true). */
  fastPath?: boolean;
  /** Write an access line for fast-path hits too (LOG_REQUESTS). */
  logRequests?: boolean;
  /** Every visitor comes over https (an https PUBLIC_URL): fast-path hits carry HSTS too. */
  publicHttps?: boolean;
};

type TEncoding = 'br' | 'gzip' | 'identity';

type TVariant = { body: Buffer; etag: string; headers: OutgoingHttpHeaders; httpsHeaders: OutgoingHttpHeaders | null };

type TEntry = {
  expiresAt: number;
  bytes: number;
  variants: Record<TEncoding, TVariant | undefined>;
  etags: Set<string>;
};

export type TPageCacheStats = { hits: number; fastHits: number; misses: number; stored: number; bypassed: number; invalidations: number; entries: number; bytes: number; version: string | undefined };

export type TPageCacheHandle = {
  stats: () => TPageCacheStats;
  clear: () => void;
  pollNow: () => Promise<void>;
  /** Resolves when the pages being stored (compressed) are in. */
  settled: () => Promise<void>;
};

/** Per server (the app runs as an encapsulated plugin): for tests and diagnostics. */
const handles = new WeakMap<object, TPageCacheHandle>();
export function pageCacheOf(server: object): TPageCacheHandle | undefined {
  return handles.get(server);
}

export const ARTICLE_PAGE = /^\/article\/[a-z0-9][a-z0-9_-]{0,63}$/;
const SESSION_IN_COOKIE = new RegExp(`(?:^|;)\\s*${SESSION_COOKIE}=`);
const LOCALE_IN_COOKIE = new RegExp(`(?:^|;)\\s*${LOCALE_COOKIE}=([^;\\s]*)`);
const VERSION_PATH = '/api/content/version';
const MIN_COMPRESS_BYTES = 1024;
/** Not part of a stored answer: per connection or per response. */
const DROPPED_HEADERS = new Set(['date', 'connection', 'keep-alive', 'transfer-encoding', 'content-length', 'strict-transport-security', 'x-page-cache']);
const HSTS = 'max-age=31536000; includeSubDomains';

const gzipAsync = promisify(gzip);
const brotliAsync = promisify(brotliCompress);

/** Which of our encodings the client takes (Accept-Encoding; q=0 refuses, * takes both). */
export function acceptedEncodings(header: string | undefined): { br: boolean; gzip: boolean } {
  const accepted = { br: false, gzip: false };
  if (!header) return accepted;
  for (const part of header.split(',')) {
    const [rawName = '', ...params] = part.split(';');
    const name = rawName.trim().toLowerCase();
    const q = params.map((p) => p.trim()).find((p) => p.startsWith('q='));
    if (q !== undefined && !(Number(q.slice(2)) > 0)) continue;
    if (name === 'br') accepted.br = true;
    else if (name === 'gzip' || name === 'x-gzip') accepted.gzip = true;
    else if (name === '*') accepted.br = accepted.gzip = true;
  }
  return accepted;
}

function matchesEtag(ifNoneMatch: string, etags: Set<string>): boolean {
  if (ifNoneMatch.trim() === '*') return true;
  for (const tag of ifNoneMatch.split(',')) {
    const value = tag.trim().replace(/^W\//, '');
    if (etags.has(value)) return true;
  }
  return false;
}

function headerName(name: string): string {
  return name.toLowerCase();
}

export default fp<TPageCacheOptions>(
  async (app, options) => {
    const { ttlMs, pollMs, maxBytes } = options;
    const idleMs = options.idleMs ?? 60_000;
    const cacheable = options.cacheable ?? ARTICLE_PAGE;
    const cache = new Map<string, TEntry>();
    type TFill = { promise: Promise<void>; resolve: () => void };
    /** The renders under way that will be stored, per key. */
    const filling = new Map<string, TFill>();
    let totalBytes = 0;
    let version: string | undefined;
    /** Bumped at every invalidation: a render that started in another generation is not stored. */
    let generation = 0;
    let lastWanted = 0;
    let poller: NodeJS.Timeout | null = null;
    let polling: Promise<void> | null = null;
    const stats = { hits: 0, fastHits: 0, misses: 0, stored: 0, bypassed: 0, invalidations: 0 };
    const pending = new Set<Promise<unknown>>();

    function clear(): void {
      cache.clear();
      totalBytes = 0;
      generation++;
      // Renders under way belong to the old content: later visitors do not wait for them.
      filling.clear();
    }

    async function pollOnce(): Promise<void> {
      try {
        const answer = await app.core.request({ path: VERSION_PATH, method: 'GET', headersTimeout: 2_000, bodyTimeout: 2_000 });
        const body = (await answer.body.json()) as { version?: unknown };
        if (answer.statusCode !== 200 || typeof body.version !== 'string') return;
        if (version !== undefined && body.version !== version) {
          stats.invalidations++;
          clear();
        }
        version = body.version;
      } catch (err) {
        // The core is away: keep what we have (entries still expire by TTL).
        app.log.debug({ err }, 'content version poll failed');
      }
    }

    function poll(): Promise<void> {
      polling ??= pollOnce().finally(() => {
        polling = null;
      });
      return polling;
    }

    function tick(): void {
      // Expired copies are kept for a while to be served during a refresh; not forever.
      const now = Date.now();
      for (const [key, entry] of cache) {
        if (entry.expiresAt + idleMs < now && !filling.has(key)) {
          cache.delete(key);
          totalBytes -= entry.bytes;
        }
      }
      if (now - lastWanted > idleMs && cache.size === 0) {
        // Idle: stop asking; the next visitor starts again from an unknown version.
        if (poller) clearInterval(poller);
        poller = null;
        version = undefined;
        generation++;
        return;
      }
      void poll();
    }

    function wanted(): void {
      lastWanted = Date.now();
      if (poller) return;
      poller = setInterval(tick, pollMs);
      poller.unref();
      void poll();
    }

    app.addHook('onClose', async () => {
      if (poller) clearInterval(poller);
      poller = null;
      await polling;
    });

    function evictFor(bytes: number): void {
      for (const [key, entry] of cache) {
        if (totalBytes + bytes <= maxBytes) break;
        cache.delete(key);
        totalBytes -= entry.bytes;
      }
    }

    async function store(key: string, startedIn: number, status: number, headers: OutgoingHttpHeaders, chunks: Buffer[]): Promise<boolean> {
      if (status !== 200) return false;
      const type = String(headers['content-type'] ?? '');
      if (!type.startsWith('text/html') || headers['set-cookie'] !== undefined || headers['content-encoding'] !== undefined) return false;
      const body = Buffer.concat(chunks);
      const base: OutgoingHttpHeaders = {};
      for (const [name, value] of Object.entries(headers)) {
        if (value !== undefined && !DROPPED_HEADERS.has(name)) base[name] = value;
      }
      const vary = base.vary ? `${String(base.vary)}, Accept-Encoding` : 'Accept-Encoding';
      const hash = createHash('sha1').update(body).digest('base64url').slice(0, 22);
      const [gz, br] =
        body.length >= MIN_COMPRESS_BYTES
          ? await Promise.all([
              gzipAsync(body, { level: 9 }),
              brotliAsync(body, { params: { [zlib.BROTLI_PARAM_QUALITY]: 11, [zlib.BROTLI_PARAM_MODE]: zlib.BROTLI_MODE_TEXT, [zlib.BROTLI_PARAM_SIZE_HINT]: body.length } }),
            ])
          : [undefined, undefined];
      if (startedIn !== generation) return false; // content changed while rendering or compressing
      const variant = (encoded: Buffer, etag: string, encoding?: string): TVariant => {
        const variantHeaders: OutgoingHttpHeaders = { ...base, vary, etag, 'content-length': encoded.length, 'x-page-cache': 'hit' };
        if (encoding) variantHeaders['content-encoding'] = encoding;
        return { body: encoded, etag, headers: variantHeaders, httpsHeaders: null };
      };
      const entry: TEntry = {
        expiresAt: Date.now() + ttlMs,
        bytes: 0,
        variants: {
          identity: variant(body, `"${hash}"`),
          gzip: gz && gz.length < body.length ? variant(gz, `"${hash}-gz"`, 'gzip') : undefined,
          br: br && br.length < body.length ? variant(br, `"${hash}-br"`, 'br') : undefined,
        },
        etags: new Set(),
      };
      for (const v of Object.values(entry.variants)) {
        if (!v) continue;
        entry.bytes += v.body.length;
        entry.etags.add(v.etag);
      }
      if (entry.bytes > maxBytes) return false;
      const previous = cache.get(key);
      if (previous) {
        cache.delete(key);
        totalBytes -= previous.bytes;
      }
      evictFor(entry.bytes);
      cache.set(key, entry);
      totalBytes += entry.bytes;
      stats.stored++;
      return true;
    }

    /*
     * One render per key at a time: while a page is being rendered and stored, other visitors
     * of the same key wait for it (no key renders 50 times after an invalidation), or, when the
     * entry only expired, get the expired copy meanwhile (stale-while-revalidate: the content
     * version, not the TTL, is what keeps pages fresh).
     */
    function startFill(key: string): TFill {
      let resolve!: () => void;
      const fill: TFill = { promise: new Promise<void>((r) => (resolve = r)), resolve };
      filling.set(key, fill);
      return fill;
    }

    function finishFill(key: string, fill: TFill, stored: boolean): void {
      if (filling.get(key) === fill) filling.delete(key);
      if (!stored) {
        // The refresh did not give a storable page (404, 503, maintenance): no stale copy either.
        const stale = cache.get(key);
        if (stale && stale.expiresAt <= Date.now()) {
          cache.delete(key);
          totalBytes -= stale.bytes;
        }
      }
      fill.resolve();
    }

    /** What a request for this key gets without rendering: a page, a render to wait for, or nothing. */
    function peek(key: string): { entry?: TEntry; wait?: Promise<void> } {
      const entry = cache.get(key);
      const fill = filling.get(key);
      if (entry && (entry.expiresAt > Date.now() || fill)) return { entry };
      if (!entry && fill) return { wait: fill.promise };
      return {};
    }

    /** Tees what the Astro handler writes to the socket; stores it once the answer has ended. */
    function capture(res: ServerResponse, key: string, fill: TFill): void {
      const startedIn = generation;
      let finished = false;
      const finish = (stored: boolean) => {
        if (finished) return;
        finished = true;
        finishFill(key, fill, stored);
      };
      let ended = false;
      // An answer that never ends (client gone, render failed) releases the waiters too.
      res.once('close', () => {
        if (!ended) finish(false);
      });
      const chunks: Buffer[] = [];
      let status = 0;
      let written: OutgoingHttpHeaders = {};
      const toBuffer = (chunk: unknown, encoding?: unknown) =>
        Buffer.isBuffer(chunk) ? chunk : typeof chunk === 'string' ? Buffer.from(chunk, (typeof encoding === 'string' ? encoding : 'utf8') as BufferEncoding) : Buffer.from(chunk as Uint8Array);
      const writeHead = res.writeHead;
      const write = res.write;
      const end = res.end;
      res.writeHead = function (this: ServerResponse, code: number, ...rest: unknown[]) {
        status = code;
        const headers = rest.find((arg) => typeof arg === 'object' && arg !== null);
        if (headers && !Array.isArray(headers)) {
          written = {};
          for (const [name, value] of Object.entries(headers as OutgoingHttpHeaders)) written[headerName(name)] = value;
        }
        return (writeHead as (...args: unknown[]) => ServerResponse).call(this, code, ...rest);
      } as ServerResponse['writeHead'];
      let ending = false;
      res.write = function (this: ServerResponse, chunk: unknown, ...rest: unknown[]) {
        // Some response implementations (light-my-request) end() through write(): count once.
        if (!ending && chunk !== undefined && chunk !== null && typeof chunk !== 'function') chunks.push(toBuffer(chunk, rest[0]));
        return (write as (...args: unknown[]) => boolean).call(this, chunk, ...rest);
      } as ServerResponse['write'];
      res.end = function (this: ServerResponse, chunk?: unknown, ...rest: unknown[]) {
        if (chunk !== undefined && chunk !== null && typeof chunk !== 'function') chunks.push(toBuffer(chunk, rest[0]));
        ending = true;
        ended = true;
        const result = (end as (...args: unknown[]) => ServerResponse).call(this, chunk, ...rest);
        const headers: OutgoingHttpHeaders = { ...res.getHeaders(), ...written };
        const storing = store(key, startedIn, status || res.statusCode, headers, chunks)
          .catch((err) => {
            app.log.warn({ err }, 'page cache store failed');
            return false;
          })
          .then(finish)
          .finally(() => pending.delete(storing));
        pending.add(storing);
        return result;
      } as ServerResponse['end'];
    }

    /** Writes a stored page (or 304) straight to the response. */
    function respond(method: string, headers: IncomingHttpHeaders, https: boolean, res: ServerResponse, entry: TEntry): void {
      const accepted = acceptedEncodings(headers['accept-encoding']);
      const { variants } = entry;
      const chosen = (accepted.br && variants.br) || (accepted.gzip && variants.gzip) || variants.identity!;
      const out = https ? (chosen.httpsHeaders ??= { ...chosen.headers, 'strict-transport-security': HSTS }) : chosen.headers;
      const ifNoneMatch = headers['if-none-match'];
      if (ifNoneMatch !== undefined && matchesEtag(ifNoneMatch, entry.etags)) {
        const notModified: OutgoingHttpHeaders = { ...out };
        delete notModified['content-length'];
        delete notModified['content-encoding'];
        delete notModified['content-type'];
        res.writeHead(304, notModified);
        res.end();
        return;
      }
      res.writeHead(200, out);
      if (method === 'HEAD') res.end();
      else res.end(chosen.body);
    }

    const keyOf = (locale: string | undefined, path: string) => `${pickLocale(locale)} ${path}`;

    // Through Fastify (inject, and whatever the fast path below leaves alone): an onRequest hook.
    app.addHook('onRequest', (request, reply, done) => {
      if ((request.method !== 'GET' && request.method !== 'HEAD') || !cacheable.test(request.url)) return done();
      const cookies = request.cookies;
      if (cookies[SESSION_COOKIE] !== undefined) {
        stats.bypassed++;
        return done();
      }
      wanted();
      const key = keyOf(cookies[LOCALE_COOKIE], request.url);
      const hit = (entry: TEntry) => {
        stats.hits++;
        reply.hijack();
        respond(request.method, request.headers, request.https, reply.raw, entry);
      };
      const render = () => {
        stats.misses++;
        // The page renders as usual (site.ts); it is stored only under a known content version.
        reply.raw.setHeader('x-page-cache', 'miss');
        if (request.method === 'GET' && version !== undefined && !filling.has(key)) capture(reply.raw, key, startFill(key));
        done();
      };
      const { entry, wait } = peek(key);
      if (entry) return hit(entry);
      if (wait) {
        void wait.then(() => {
          const ready = peek(key).entry;
          if (ready) hit(ready);
          else render();
        });
        return;
      }
      render();
    });

    /*
     * The fast path: a hit on a real socket is answered before Fastify sees the request (no
     * routing, no request/reply objects, no hooks), which is what lets the BFF keep up with a
     * static file server. Only the plainest requests take it: GET/HEAD of a cacheable path, a
     * Cookie header this parser understands, no proxy headers (behind a proxy the protocol needs
     * Fastify's trustProxy, so those go the hook path above, cached all the same).
     */
    let closing = false;
    let fastifyHandle: ((req: IncomingMessage, res: ServerResponse) => void) | null = null;
    const server = app.server as Server | undefined;
    const fastifyListeners = server?.listeners('request') ?? [];
    if (options.fastPath !== false && server && fastifyListeners.length === 1) {
      const handle = fastifyListeners[0] as (req: IncomingMessage, res: ServerResponse) => void;
      fastifyHandle = handle;
      server.removeListener('request', handle);
      server.on('request', (req: IncomingMessage, res: ServerResponse) => {
        if (!tryFast(req, res)) handle.call(server, req, res);
      });
      // Shutting down, Fastify answers (and closes kept-alive connections) itself.
      app.addHook('preClose', (done) => {
        closing = true;
        done();
      });
      app.addHook('onClose', async () => {
        server.removeAllListeners('request');
        server.on('request', handle);
      });
    }

    function tryFast(req: IncomingMessage, res: ServerResponse): boolean {
      if (closing) return false;
      const method = req.method;
      if ((method !== 'GET' && method !== 'HEAD') || !cacheable.test(req.url ?? '')) return false;
      const headers = req.headers;
      if (headers['x-forwarded-proto'] !== undefined || headers.forwarded !== undefined) return false;
      let locale: string | undefined;
      const cookie = headers.cookie;
      if (cookie !== undefined) {
        if (SESSION_IN_COOKIE.test(cookie) || cookie.includes('%') || cookie.includes('"')) return false;
        locale = LOCALE_IN_COOKIE.exec(cookie)?.[1];
      }
      const key = keyOf(locale, req.url!);
      const { entry, wait } = peek(key);
      if (!entry && !wait) return false;
      lastWanted = Date.now();
      const hit = (found: TEntry) => {
        stats.hits++;
        stats.fastHits++;
        respond(method, headers, options.publicHttps === true || (req.socket as { encrypted?: boolean }).encrypted === true, res, found);
        if (options.logRequests) app.log.info({ req: { method, url: req.url }, res: { statusCode: res.statusCode }, pageCache: 'hit' }, 'request completed');
      };
      if (entry) hit(entry);
      else
        void wait!.then(() => {
          const ready = peek(key).entry;
          if (ready) hit(ready);
          else fastifyHandle!.call(server, req, res);
        });
      return true;
    }

    handles.set(app.server, {
      stats: () => ({ ...stats, entries: cache.size, bytes: totalBytes, version }),
      clear,
      pollNow: poll,
      settled: async () => {
        while (pending.size) await Promise.all(pending);
      },
    });
  },
  { name: 'page-cache', dependencies: ['@fastify/cookie', 'upstream'] },
);
