import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawnSync } from 'node:child_process';
import { get, type IncomingHttpHeaders } from 'node:http';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import { acceptedEncodings, varyOnEncoding } from '../src/compression.ts';
import { DOCS_BUNDLE_PATH } from '../src/plugins/api-docs.ts';
import { build, json } from './helpers.ts';

const root = join(import.meta.dirname, '../..');

/** A JSON answer, an asset and a page well over the 1 KiB threshold, and small ones under it. */
const LIST = { status: 'ok', pairs: Array.from({ length: 200 }, (_, i) => ({ src: 'USD', dst: `C${i}`, rate: '1.2345', enabled: true })) };
const ASSET = `export const words = ${JSON.stringify(Array.from({ length: 400 }, (_, i) => `word number ${i}`))};\n`;
const PAGE_PART = `<section>${'<p>Обмен валют: курсы, условия и ответы на вопросы.</p>'.repeat(40)}</section>`;

/** A site build stand-in whose pages are streamed in parts, as Astro writes them; compressed as `pnpm build` does. */
function makeSite(): string {
  const dir = mkdtempSync(join(tmpdir(), 'obmen-compress-site-'));
  mkdirSync(join(dir, 'client', '_astro'), { recursive: true });
  mkdirSync(join(dir, 'server'), { recursive: true });
  writeFileSync(join(dir, 'client', '_astro', 'words.Xy12Zw.js'), ASSET);
  writeFileSync(join(dir, 'client', 'robots.txt'), 'User-agent: *\n');
  writeFileSync(
    join(dir, 'server', 'entry.mjs'),
    `export async function handler(req, res, next) {
  if (req.url === '/small') {
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
    return void res.end('<!doctype html><p>small</p>');
  }
  if (req.url === '/404') {
    res.writeHead(404, { 'content-type': 'text/html; charset=utf-8' });
    return void res.end('<!doctype html><p>not found</p>');
  }
  if (req.url !== '/big') return next();
  res.writeHead(200, { 'content-type': 'text/html; charset=utf-8', vary: 'Cookie' });
  res.write('<!doctype html><html><body>');
  for (let i = 0; i < 3; i++) res.write(${JSON.stringify(PAGE_PART)});
  res.end('</body></html>');
}
`,
  );
  const compressed = spawnSync(process.execPath, [join(root, 'scripts/compress-site.ts'), join(dir, 'client')], { encoding: 'utf8' });
  if (compressed.status !== 0) throw new Error(`compress-site failed: ${compressed.stderr}`);
  return dir;
}

type TAnswer = { status: number; headers: IncomingHttpHeaders; body: Buffer; text: string };

/** GET over a real socket, the body decoded as its Content-Encoding says (as a browser does). */
function fetchRaw(origin: string, path: string, acceptEncoding?: string): Promise<TAnswer> {
  return new Promise((resolve, reject) => {
    get(`${origin}${path}`, { headers: acceptEncoding ? { 'accept-encoding': acceptEncoding } : {}, agent: false }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () => {
        const body = Buffer.concat(chunks);
        const encoding = res.headers['content-encoding'];
        const decoded = encoding === 'br' ? brotliDecompressSync(body) : encoding === 'gzip' ? gunzipSync(body) : body;
        resolve({ status: res.statusCode ?? 0, headers: res.headers, body, text: decoded.toString('utf8') });
      });
      res.on('error', reject);
    }).on('error', reject);
  });
}

describe('compression over a real socket', () => {
  let ctx: Awaited<ReturnType<typeof build>>;
  let site: string;
  let origin: string;

  beforeAll(async () => {
    site = makeSite();
    // The page cache is off: every page here is rendered afresh ("uncached HTML").
    ctx = await build({ siteDist: site, env: { PAGE_CACHE_TTL_MS: '0' } });
    ctx.upstream.handle = (req, res) => (req.url === '/api/exchange/list' ? json(res, 200, LIST) : json(res, 200, { status: 'ok' }));
    await ctx.app.listen({ host: '127.0.0.1', port: 0 });
    origin = `http://127.0.0.1:${(ctx.app.server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    await ctx?.close();
    rmSync(site, { recursive: true, force: true });
  });

  it('the build leaves .br and .gz copies beside text assets over 1 KiB only', () => {
    const asset = join(site, 'client', '_astro', 'words.Xy12Zw.js');
    expect(brotliDecompressSync(readFileSync(`${asset}.br`)).toString()).toBe(ASSET);
    expect(gunzipSync(readFileSync(`${asset}.gz`)).toString()).toBe(ASSET);
    expect(existsSync(join(site, 'client', 'robots.txt.br'))).toBe(false);
  });

  it('JSON: brotli or gzip as the client takes it, with fv, Vary: Accept-Encoding; raw without Accept-Encoding or under 1 KiB', async () => {
    const br = await fetchRaw(origin, '/api/exchange/list', 'gzip, deflate, br');
    expect(br.headers['content-encoding']).toBe('br');
    expect(br.headers.vary).toMatch(/accept-encoding/i);
    expect(JSON.parse(br.text)).toEqual({ fv: expect.any(String), ...LIST });
    expect(br.body.length).toBeLessThan(br.text.length / 4);
    const gzip = await fetchRaw(origin, '/api/exchange/list', 'gzip');
    expect(gzip.headers['content-encoding']).toBe('gzip');
    expect(gzip.text).toBe(br.text);
    const plain = await fetchRaw(origin, '/api/exchange/list');
    expect(plain.headers['content-encoding']).toBeUndefined();
    expect(plain.text).toBe(br.text);
    const small = await fetchRaw(origin, '/api/site', 'br');
    expect(small.headers['content-encoding']).toBeUndefined();
    expect(JSON.parse(small.text)).toMatchObject({ status: 'ok' });
  });

  it('a rendered page: compressed as it streams, its Vary kept; a small one goes out whole, with its length', async () => {
    const page = await fetchRaw(origin, '/big', 'br');
    expect(page.status).toBe(200);
    expect(page.headers['content-encoding']).toBe('br');
    expect(page.headers['content-length']).toBeUndefined();
    expect(page.headers.vary).toBe('Cookie, Accept-Encoding');
    expect(page.headers['x-frame-options']).toBe('DENY');
    expect(page.text).toBe(`<!doctype html><html><body>${PAGE_PART.repeat(3)}</body></html>`);
    expect(page.body.length).toBeLessThan(page.text.length / 10);
    const gzip = await fetchRaw(origin, '/big', 'gzip');
    expect(gzip.headers['content-encoding']).toBe('gzip');
    expect(gzip.text).toBe(page.text);
    const plain = await fetchRaw(origin, '/big');
    expect(plain.headers['content-encoding']).toBeUndefined();
    expect(plain.text).toBe(page.text);
    const small = await fetchRaw(origin, '/small', 'br');
    expect(small.headers['content-encoding']).toBeUndefined();
    expect(small.text).toBe('<!doctype html><p>small</p>');
  });

  it('a hashed asset: its build copy, with Content-Encoding and immutable caching; the file itself to a client that takes neither', async () => {
    const br = await fetchRaw(origin, '/_astro/words.Xy12Zw.js', 'br, gzip');
    expect(br.status).toBe(200);
    expect(br.headers['content-encoding']).toBe('br');
    expect(br.headers['content-type']).toMatch(/javascript/);
    expect(br.headers['cache-control']).toBe('public, max-age=31536000, immutable');
    expect(br.headers.vary).toMatch(/accept-encoding/i);
    expect(br.body.equals(readFileSync(join(site, 'client', '_astro', 'words.Xy12Zw.js.br')))).toBe(true);
    expect(br.text).toBe(ASSET);
    const gzip = await fetchRaw(origin, '/_astro/words.Xy12Zw.js', 'gzip');
    expect(gzip.headers['content-encoding']).toBe('gzip');
    expect(gzip.text).toBe(ASSET);
    const plain = await fetchRaw(origin, '/_astro/words.Xy12Zw.js');
    expect(plain.headers['content-encoding']).toBeUndefined();
    expect(plain.text).toBe(ASSET);
    // The copies are no files of their own.
    expect((await fetchRaw(origin, '/_astro/words.Xy12Zw.js.br')).status).toBe(404);
  });

  it('the API docs bundle: compressed once, kept, and cached by the browser for a day', async () => {
    const first = await fetchRaw(origin, DOCS_BUNDLE_PATH, 'br');
    expect(first.status).toBe(200);
    expect(first.headers['content-encoding']).toBe('br');
    expect(first.headers['cache-control']).toBe('public, max-age=86400');
    expect(first.body.length).toBeLessThan(first.text.length / 3);
    const again = await fetchRaw(origin, DOCS_BUNDLE_PATH, 'br');
    expect(again.body.equals(first.body)).toBe(true);
    const plain = await fetchRaw(origin, DOCS_BUNDLE_PATH);
    expect(plain.headers['content-encoding']).toBeUndefined();
    expect(plain.text).toBe(first.text);
  });
});

describe('encoding negotiation', () => {
  it('parses Accept-Encoding', () => {
    expect(acceptedEncodings(undefined)).toEqual({ br: false, gzip: false });
    expect(acceptedEncodings('gzip, deflate, br')).toEqual({ br: true, gzip: true });
    expect(acceptedEncodings('br;q=0, gzip;q=0.5')).toEqual({ br: false, gzip: true });
    expect(acceptedEncodings('*')).toEqual({ br: true, gzip: true });
    expect(acceptedEncodings('identity')).toEqual({ br: false, gzip: false });
  });

  it('names Accept-Encoding in Vary once', () => {
    expect(varyOnEncoding(undefined)).toBe('Accept-Encoding');
    expect(varyOnEncoding('Cookie')).toBe('Cookie, Accept-Encoding');
    expect(varyOnEncoding('accept-encoding')).toBe('accept-encoding');
  });
});
