import type { FastifyCompressOptions } from '@fastify/compress';
import type { IncomingMessage, OutgoingHttpHeaders, ServerResponse } from 'node:http';
import { promisify } from 'node:util';
import { toBuffer } from './page-cache/capture.ts';
import {
  brotliCompress,
  brotliCompressSync,
  constants as zlib,
  createBrotliCompress,
  createGzip,
  gzip,
  gzipSync,
  type BrotliCompress,
  type Gzip,
} from 'node:zlib';

/*
 * Compression. Answers made per request (JSON, pages rendered afresh) are compressed as they go
 * out, at a cost a request can bear (brotli quality 4); what is sent again and again (cached
 * pages, the API docs bundle) is compressed once, as hard as it goes, and kept. Site assets are
 * compressed at build (scripts/compress-site.ts) and sent as they are.
 */

/** Below this an answer goes out as it is: the bytes saved do not pay for the work. */
export const COMPRESS_MIN_BYTES = 1024;

/** Brotli for answers compressed per request: quality 4 costs about what gzip does and saves more. */
export const ONLINE_BROTLI_QUALITY = 4;

export type TEncoding = 'br' | 'gzip';

/** What is worth compressing: text, JSON, XML, JavaScript and SVG; never images, PDFs or event streams. */
export const COMPRESSIBLE_TYPE = /^(?:text\/(?!event-stream)|application\/(?:json|javascript|xml|manifest\+json)|image\/svg\+xml)|\+json(?:;|$)/;

/** @fastify/compress for what goes out through Fastify (proxied JSON, CSV exports, the docs page). */
export const ONLINE_COMPRESSION: FastifyCompressOptions = {
  encodings: ['br', 'gzip'],
  threshold: COMPRESS_MIN_BYTES,
  customTypes: COMPRESSIBLE_TYPE,
  brotliOptions: { params: { [zlib.BROTLI_PARAM_QUALITY]: ONLINE_BROTLI_QUALITY, [zlib.BROTLI_PARAM_MODE]: zlib.BROTLI_MODE_TEXT } },
  // Request bodies pass to the core as they came (the proxy streams them, headers and all).
  globalDecompression: false,
};

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

/** The encoding to answer with: brotli where taken, else gzip, else none. */
export function chooseEncoding(header: string | undefined): TEncoding | null {
  const accepted = acceptedEncodings(header);
  return accepted.br ? 'br' : accepted.gzip ? 'gzip' : null;
}

/** A Vary header that names Accept-Encoding (once), keeping what it named before. */
export function varyOnEncoding(vary: OutgoingHttpHeaders[string]): string {
  const names =
    vary === undefined
      ? []
      : String(vary)
          .split(',')
          .map((name) => name.trim());
  return names.some((name) => name.toLowerCase() === 'accept-encoding' || name === '*') ? names.join(', ') : [...names, 'Accept-Encoding'].join(', ');
}

/**
 * A whole body made per request (a proxied JSON answer), compressed at once as the client takes
 * it, or null when it goes out as it is (too small, or no encoding of ours taken). Small enough
 * to compress in one go on the event loop, as @fastify/compress does with such bodies.
 */
export function compressWhole(acceptEncoding: string | undefined, body: Buffer): { encoding: TEncoding; body: Buffer } | null {
  if (body.length < COMPRESS_MIN_BYTES) return null;
  const encoding = chooseEncoding(acceptEncoding);
  if (encoding === null) return null;
  return { encoding, body: encoding === 'br' ? brotliCompressSync(body, ONLINE_COMPRESSION.brotliOptions) : gzipSync(body) };
}

const gzipAsync = promisify(gzip);
const brotliAsync = promisify(brotliCompress);

/**
 * The gzip and brotli copies of a body sent many times, compressed once off the event loop, each
 * only where it is smaller. `brotliQuality` 11 is the smallest and slowest (about 1.4 MB/s).
 */
export async function precompress(body: Buffer, brotliQuality = 11): Promise<Partial<Record<TEncoding, Buffer>>> {
  if (body.length < COMPRESS_MIN_BYTES) return {};
  const [gz, br] = await Promise.all([
    gzipAsync(body, { level: 9 }),
    brotliAsync(body, {
      params: { [zlib.BROTLI_PARAM_QUALITY]: brotliQuality, [zlib.BROTLI_PARAM_MODE]: zlib.BROTLI_MODE_TEXT, [zlib.BROTLI_PARAM_SIZE_HINT]: body.length },
    }),
  ]);
  return { ...(gz.length < body.length ? { gzip: gz } : {}), ...(br.length < body.length ? { br } : {}) };
}

function onlineStream(encoding: TEncoding): BrotliCompress | Gzip {
  return encoding === 'br' ? createBrotliCompress(ONLINE_COMPRESSION.brotliOptions) : createGzip();
}

/**
 * Compresses what a handler writes straight to the raw response (Astro's renders: Fastify's
 * hooks never see those bytes). The head is held back until COMPRESS_MIN_BYTES of body have
 * been written or the answer ends, so a small answer goes out as it is, with its length.
 * Answers that are not compressible (status, type, already encoded) pass untouched.
 */
export function compressRawAnswer(req: IncomingMessage, res: ServerResponse): void {
  if (req.method === 'HEAD') return;
  const encoding = chooseEncoding(req.headers['accept-encoding']);
  const writeHead = res.writeHead;
  const write = res.write;
  const end = res.end;
  // The originals, called past the overloads of their types.
  const callOriginal = (method: unknown, ...args: unknown[]) => (method as (...a: unknown[]) => unknown).apply(res, args);
  const held: Buffer[] = [];
  let heldBytes = 0;
  let reason: string | undefined;
  let mode: 'holding' | 'plain' | 'compressing' = 'holding';
  let zipper: BrotliCompress | Gzip | null = null;

  const restore = () => {
    res.writeHead = writeHead;
    res.write = write;
    res.end = end;
  };

  /** Compress or not, now that the head and enough of the body (or all of it) are known. */
  const decide = (ended: boolean) => {
    const status = res.statusCode;
    const type = String(res.getHeader('content-type') ?? '');
    const length = Number(res.getHeader('content-length') ?? Number.NaN);
    const compressible = status >= 200 && status !== 204 && status !== 304 && COMPRESSIBLE_TYPE.test(type) && !res.hasHeader('content-encoding');
    if (compressible) res.setHeader('vary', varyOnEncoding(res.getHeader('vary')));
    const big = ended ? heldBytes >= COMPRESS_MIN_BYTES : !(length < COMPRESS_MIN_BYTES);
    if (!compressible || !big || encoding === null) {
      mode = 'plain';
      restore();
      if (reason === undefined) res.writeHead(status);
      else res.writeHead(status, reason);
      for (const chunk of held) res.write(chunk);
      return;
    }
    mode = 'compressing';
    res.removeHeader('content-length');
    res.setHeader('content-encoding', encoding);
    callOriginal(writeHead, status, ...(reason === undefined ? [] : [reason]));
    zipper = onlineStream(encoding);
    zipper.on('data', (chunk: Buffer) => callOriginal(write, chunk));
    zipper.once('end', () => callOriginal(end));
    zipper.once('error', (err) => res.destroy(err));
    // A client gone mid-answer: nothing more to compress.
    res.once('close', () => zipper?.destroy());
    for (const chunk of held) zipper.write(chunk);
  };

  const take = (chunk: unknown, chunkEncoding: unknown) => {
    if (chunk === undefined || chunk === null || typeof chunk === 'function') return;
    const buffer = toBuffer(chunk, chunkEncoding);
    if (mode === 'compressing') zipper!.write(buffer);
    else {
      held.push(buffer);
      heldBytes += buffer.length;
    }
  };
  const callbackOf = (args: unknown[]) => args.find((arg): arg is (err?: Error | null) => void => typeof arg === 'function');

  res.writeHead = function (this: ServerResponse, code: number, ...rest: unknown[]) {
    this.statusCode = code;
    reason = rest.find((arg): arg is string => typeof arg === 'string');
    const headers = rest.find((arg) => typeof arg === 'object' && arg !== null);
    if (Array.isArray(headers)) for (let i = 0; i + 1 < headers.length; i += 2) this.setHeader(String(headers[i]), headers[i + 1]);
    else if (headers) for (const [name, value] of Object.entries(headers as OutgoingHttpHeaders)) if (value !== undefined) this.setHeader(name, value);
    return this;
  } as ServerResponse['writeHead'];

  res.write = function (this: ServerResponse, chunk: unknown, ...rest: unknown[]) {
    take(chunk, rest[0]);
    if (mode === 'holding' && heldBytes >= COMPRESS_MIN_BYTES) decide(false);
    const callback = callbackOf(rest);
    if (callback) process.nextTick(callback);
    return true;
  } as ServerResponse['write'];

  res.end = function (this: ServerResponse, chunk?: unknown, ...rest: unknown[]) {
    take(chunk, rest[0]);
    if (mode === 'holding') decide(true);
    const callback = callbackOf(rest);
    if (mode === 'plain') return callOriginal(end, ...(callback ? [callback] : [])) as ServerResponse;
    if (callback) this.once('finish', callback);
    zipper!.end();
    return this;
  } as ServerResponse['end'];
}
