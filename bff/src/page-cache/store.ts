import { createHash } from 'node:crypto';
import type { IncomingHttpHeaders, OutgoingHttpHeaders, ServerResponse } from 'node:http';
import type { TClock } from '../clock.ts';
import { acceptedEncodings, precompress, varyOnEncoding } from '../compression.ts';

/*
 * The page cache's memory: stored pages with their precompressed variants and ETags, byte-bounded
 * (oldest out first), and the renders under way per key, so one key renders once at a time.
 * Time comes from the injected clock only.
 */

type TEncoding = 'br' | 'gzip' | 'identity';

type TVariant = { body: Buffer; etag: string; headers: OutgoingHttpHeaders; httpsHeaders: OutgoingHttpHeaders | null };

export type TPageEntry = {
  expiresAt: number;
  bytes: number;
  variants: Record<TEncoding, TVariant | undefined>;
  etags: Set<string>;
};

/** A render under way whose answer will be stored: visitors of its key wait for it. */
export type TFill = { promise: Promise<void>; resolve: () => void };

export type TPageStoreOptions = {
  ttlMs: number;
  maxBytes: number;
  /** Expired copies are kept this long to be served during a refresh. */
  idleMs: number;
  clock: TClock;
};

/** Not part of a stored answer: per connection or per response. */
const DROPPED_HEADERS = new Set(['date', 'connection', 'keep-alive', 'transfer-encoding', 'content-length', 'strict-transport-security', 'x-page-cache']);
const HSTS = 'max-age=31536000; includeSubDomains';

function matchesEtag(ifNoneMatch: string, etags: Set<string>): boolean {
  if (ifNoneMatch.trim() === '*') return true;
  for (const tag of ifNoneMatch.split(',')) {
    const value = tag.trim().replace(/^W\//, '');
    if (etags.has(value)) return true;
  }
  return false;
}

/** Writes a stored page (or 304 to a matching If-None-Match) straight to the response. */
export function writeStoredPage(method: string, headers: IncomingHttpHeaders, https: boolean, res: ServerResponse, entry: TPageEntry): void {
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

export type TPageStore = ReturnType<typeof createPageStore>;

export function createPageStore({ ttlMs, maxBytes, idleMs, clock }: TPageStoreOptions) {
  const cache = new Map<string, TPageEntry>();
  const filling = new Map<string, TFill>();
  let totalBytes = 0;
  let stored = 0;
  /** Bumped at every invalidation: a render that started in another generation is not stored. */
  let generation = 0;

  function remove(key: string, entry: TPageEntry): void {
    cache.delete(key);
    totalBytes -= entry.bytes;
  }

  function evictFor(bytes: number): void {
    for (const [key, entry] of cache) {
      if (totalBytes + bytes <= maxBytes) break;
      remove(key, entry);
    }
  }

  return {
    generation: () => generation,
    /** Renders under way now can no longer be stored (their content may be outdated). */
    invalidate(): void {
      generation++;
    },
    /** Drops every page and forgets the renders under way (later visitors do not wait for them). */
    clear(): void {
      cache.clear();
      totalBytes = 0;
      generation++;
      filling.clear();
    },
    /** Drops expired copies nobody has refreshed for idleMs. */
    sweep(): void {
      const now = clock.now();
      for (const [key, entry] of cache) {
        if (entry.expiresAt + idleMs < now && !filling.has(key)) remove(key, entry);
      }
    },
    stats: () => ({ stored, entries: cache.size, bytes: totalBytes }),

    /**
     * What a request for this key gets without rendering: a page (fresh, or expired while its
     * refresh is under way: stale-while-revalidate), a render to wait for, or nothing.
     */
    peek(key: string): { entry?: TPageEntry; wait?: Promise<void> } {
      const entry = cache.get(key);
      const fill = filling.get(key);
      if (entry && (entry.expiresAt > clock.now() || fill)) return { entry };
      if (!entry && fill) return { wait: fill.promise };
      return {};
    },
    isFilling: (key: string) => filling.has(key),
    startFill(key: string): TFill {
      let resolve!: () => void;
      const fill: TFill = { promise: new Promise<void>((r) => (resolve = r)), resolve };
      filling.set(key, fill);
      return fill;
    },
    finishFill(key: string, fill: TFill, wasStored: boolean): void {
      if (filling.get(key) === fill) filling.delete(key);
      if (!wasStored) {
        // The refresh did not give a storable page (404, 503, maintenance): no stale copy either.
        const stale = cache.get(key);
        if (stale && stale.expiresAt <= clock.now()) remove(key, stale);
      }
      fill.resolve();
    },

    /**
     * Stores a complete 200 text/html answer without Set-Cookie, with gzip and brotli variants
     * compressed once (off the event loop) and a strong ETag per variant; false when the answer
     * is not storable or the content changed (another generation) meanwhile.
     */
    async put(key: string, startedIn: number, status: number, headers: OutgoingHttpHeaders, chunks: Buffer[]): Promise<boolean> {
      if (status !== 200) return false;
      const type = String(headers['content-type'] ?? '');
      if (!type.startsWith('text/html') || headers['set-cookie'] !== undefined || headers['content-encoding'] !== undefined) return false;
      const body = Buffer.concat(chunks);
      const base: OutgoingHttpHeaders = {};
      for (const [name, value] of Object.entries(headers)) {
        if (value !== undefined && !DROPPED_HEADERS.has(name)) base[name] = value;
      }
      const vary = varyOnEncoding(base.vary);
      const hash = createHash('sha1').update(body).digest('base64url').slice(0, 22);
      const { gzip: gz, br } = await precompress(body);
      if (startedIn !== generation) return false;
      const variant = (encoded: Buffer, etag: string, encoding?: string): TVariant => {
        const variantHeaders: OutgoingHttpHeaders = { ...base, vary, etag, 'content-length': encoded.length, 'x-page-cache': 'hit' };
        if (encoding) variantHeaders['content-encoding'] = encoding;
        return { body: encoded, etag, headers: variantHeaders, httpsHeaders: null };
      };
      const entry: TPageEntry = {
        expiresAt: clock.now() + ttlMs,
        bytes: 0,
        variants: {
          identity: variant(body, `"${hash}"`),
          gzip: gz && variant(gz, `"${hash}-gz"`, 'gzip'),
          br: br && variant(br, `"${hash}-br"`, 'br'),
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
      if (previous) remove(key, previous);
      evictFor(entry.bytes);
      cache.set(key, entry);
      totalBytes += entry.bytes;
      stored++;
      return true;
    },
  };
}
