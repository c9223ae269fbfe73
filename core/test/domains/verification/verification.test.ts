import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import http from 'node:http';
import { randomUUID } from 'node:crypto';
import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TVerificationState } from '@obmen/shared';
import { build, ENGINES, until } from '../../helpers.ts';
import { call, freshEmail, mailsTo, signUp } from '../../auth-helpers.ts';
import {
  activeContentOf,
  heicHeader,
  hugeWebp,
  jpegHtmlPolyglot,
  jpegWithGps,
  multipart,
  pageTextOf,
  pdfActionInObjectStream,
  pdfEncrypted,
  pdfEscapedEmbeddedFile,
  pdfEscapedJavaScript,
  pdfEscapedLaunch,
  pdfOfPages,
  png,
  pngZipPolyglot,
  webp,
  windowsExecutable,
  type TPart,
} from '../../storage/upload-fixtures.ts';
import { approveSubmission, listQueue, rejectSubmission, showSubmission } from '../../../src/domains/verification/operator.ts';
import { openDocumentCipher } from '../../../src/domains/verification/cipher.ts';
import { fileWork } from '../../../src/storage/inspect.ts';
import { openLocalStorage } from '../../../src/storage/local.ts';
import type { TVerificationContext } from '../../../src/domains/verification/service.ts';
import { SPECIMEN_DOCUMENT } from '../../fixtures.ts';

const KEY = Buffer.alloc(32, 7).toString('base64');
const TODAY = new Date('2026-11-23T12:00:00Z');
const DOCUMENT = SPECIMEN_DOCUMENT;

async function filesUnder(dir: string): Promise<string[]> {
  try {
    return (await readdir(dir, { recursive: true, withFileTypes: true })).filter((entry) => entry.isFile()).map((entry) => entry.name);
  } catch {
    return [];
  }
}

describe.each(ENGINES)('verification on %s', (engine) => {
  let ctx: Awaited<ReturnType<typeof build>>;
  let filesDir: string;
  let operatorCtx: TVerificationContext;

  beforeAll(async () => {
    filesDir = await mkdtemp(path.join(tmpdir(), 'obmen-kyc-'));
    ctx = await build(engine, { FILES_DIR: filesDir, DOCUMENT_KEY: KEY }, { now: () => TODAY });
    operatorCtx = {
      db: ctx.db,
      storage: openLocalStorage(filesDir),
      cipher: openDocumentCipher({ DOCUMENT_KEY: KEY, DOCUMENT_KEY_FILE: '/nonexistent', NODE_ENV: 'test' }, () => {}),
      publicUrl: 'http://localhost:3000',
      now: () => TODAY,
    };
  });
  afterAll(async () => {
    await ctx?.close();
    await rm(filesDir, { recursive: true, force: true });
  });

  async function newUser(locale: 'ru' | 'en' = 'en') {
    const email = freshEmail('kyc');
    return { email, token: await signUp(ctx.app, ctx.db, email, 'correct horse battery', locale) };
  }

  const state = (res: { json: () => unknown }) => (res.json() as { verification: TVerificationState }).verification;

  async function openPassport(token: string): Promise<string> {
    const res = await call(ctx.app, '/api/verification/passport/new', { token });
    expect(res.statusCode, res.body).toBe(200);
    return state(res).current!.id;
  }

  function upload(token: string, type: string, parts: TPart[], locale: 'ru' | 'en' = 'en') {
    const { payload, headers } = multipart(parts);
    return ctx.app.inject({
      method: 'POST',
      url: `/api/verification/${type}/upload`,
      payload,
      headers: { ...headers, authorization: `Bearer ${token}`, 'x-obmen-locale': locale },
    });
  }

  async function uploadPassport(token: string, id: string) {
    const res = await upload(token, 'passport', [
      { name: 'id', value: id },
      { name: 'side0', value: 'front' },
      { name: 'file0', filename: 'IMG_0001.jpg', content: await jpegWithGps(), type: 'image/jpeg' },
      { name: 'side1', value: 'selfie' },
      { name: 'file1', filename: 'selfie.png', content: await png(), type: 'image/png' },
    ]);
    expect(res.statusCode, res.body).toBe(200);
    return state(res);
  }

  async function submitted(locale: 'ru' | 'en' = 'en') {
    const user = await newUser(locale);
    const id = await openPassport(user.token);
    await uploadPassport(user.token, id);
    const res = await call(ctx.app, '/api/verification/passport/submit', { token: user.token, payload: { id, ...DOCUMENT } });
    expect(res.statusCode, res.body).toBe(200);
    return { ...user, id };
  }

  /** The core on a real socket (listening from the first test that needs one on). */
  async function serverAddress(): Promise<string> {
    return ctx.app.server.listening
      ? `http://127.0.0.1:${(ctx.app.server.address() as { port: number }).port}`
      : await ctx.app.listen({ port: 0, host: '127.0.0.1' });
  }

  async function userIdOf(email: string): Promise<string> {
    const [row] = await ctx.db.query<{ id: string }>('SELECT id::text FROM users WHERE email = $1', [email]);
    return row!.id;
  }

  async function counts() {
    const [row] = await ctx.db.query<{ files: string }>('SELECT count(*)::text AS files FROM verification_files');
    return { rows: Number(row!.files), stored: (await filesUnder(filesDir)).length };
  }

  it('asks for a session', async () => {
    for (const url of ['/api/verification', '/api/verification/passport/new', `/api/verification/file/${randomUUID()}`]) {
      expect((await call(ctx.app, url)).statusCode).toBe(401);
    }
  });

  it('starts at level 0 with the limits of every level', async () => {
    const { token } = await newUser();
    const res = await call(ctx.app, '/api/verification', { token });
    expect(res.statusCode).toBe(200);
    const body = state(res);
    expect(body.level).toBe(0);
    expect(body.current).toBeNull();
    expect(body.types).toEqual({ passport: null, id_card: null, driver_license: null });
    expect(body.limits).toHaveLength(6);
    expect(body.limits.find((l) => l.level === 0 && l.operation === 'withdrawal')).toMatchObject({ per_24h: '0', per_30d: '0', currency: 'USD' });
    expect(body.limits.find((l) => l.level === 1 && l.operation === 'withdrawal')).toMatchObject({ per_24h: '20000', per_30d: '100000' });
  });

  it('opens one draft per account: the same one again, another type refused, unknown type refused', async () => {
    const { token } = await newUser();
    const id = await openPassport(token);
    expect(await openPassport(token)).toBe(id);
    const other = await call(ctx.app, '/api/verification/id_card/new', { token, locale: 'en' });
    expect(other.statusCode).toBe(409);
    expect(other.json().message).toMatch(/another document/);
    const unknown = await call(ctx.app, '/api/verification/visa/new', { token, locale: 'ru' });
    expect(unknown.statusCode).toBe(400);
    expect(unknown.json().fields.type).toMatch(/Неизвестный тип документа/);
    const [{ n }] = (await ctx.db.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM verifications v JOIN users u ON u.id = v.user_id WHERE u.id = (SELECT user_id FROM verifications WHERE public_id = $1)`,
      [id],
    )) as [{ n: number }];
    expect(n).toBe(1);
  });

  it('stores uploads re-encoded: no EXIF or GPS survives, served privately to the owner', async () => {
    const { token } = await newUser();
    const id = await openPassport(token);
    const body = await uploadPassport(token, id);
    expect(body.current!.files.map((f) => [f.side, f.mime])).toEqual([
      ['front', 'image/jpeg'],
      ['selfie', 'image/png'],
    ]);
    expect(body.current!.uploadable_sides).toEqual(['front', 'selfie']);
    const front = body.current!.files[0]!;
    const res = await call(ctx.app, front.url, { token });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toBe('image/jpeg');
    expect(res.headers['content-disposition']).toBe('inline; filename="front.jpg"');
    expect(res.headers['x-content-type-options']).toBe('nosniff');
    expect(res.headers['cache-control']).toBe('private, no-store');
    const bytes = res.rawPayload;
    const meta = await sharp(bytes).metadata();
    expect(meta.format).toBe('jpeg');
    expect(meta.width).toBe(320);
    expect(meta.exif).toBeUndefined();
    expect(meta.xmp).toBeUndefined();
    expect(bytes.includes('SECRET-OWNER-NAME')).toBe(false);
    expect(bytes.includes('SpyPhone')).toBe(false);
    // Stored names are ours, never the user's.
    const names = await filesUnder(filesDir);
    expect(names.some((name) => name.includes('IMG_0001') || name.includes('selfie'))).toBe(false);
  });

  it('replaces a draft file of the same side and removes the old one from storage', async () => {
    const { token } = await newUser();
    const id = await openPassport(token);
    const first = await uploadPassport(token, id);
    const before = await counts();
    const res = await upload(token, 'passport', [
      { name: 'id', value: id },
      { name: 'side0', value: 'front' },
      { name: 'file0', filename: 'scan.webp', content: await webp() },
    ]);
    expect(res.statusCode, res.body).toBe(200);
    const files = state(res).current!.files;
    expect(files.map((f) => [f.side, f.mime])).toEqual([
      ['front', 'image/webp'],
      ['selfie', 'image/png'],
    ]);
    expect(files[0]!.id).not.toBe(first.current!.files[0]!.id);
    expect(await counts()).toEqual(before);
    expect((await call(ctx.app, first.current!.files[0]!.url, { token })).statusCode).toBe(404);
  });

  it('rebuilds every PDF: scripts, launch actions and attachments gone however they are written, the page kept', async () => {
    const { token } = await newUser();
    const id = await openPassport(token);
    for (const make of [pdfEscapedJavaScript, pdfEscapedLaunch, pdfEscapedEmbeddedFile, pdfActionInObjectStream]) {
      const sent = make();
      expect(await activeContentOf(sent)).not.toEqual([]);
      const res = await upload(token, 'passport', [
        { name: 'id', value: id },
        { name: 'side0', value: 'front' },
        { name: 'file0', filename: 'passport.pdf', content: sent },
      ]);
      expect(res.statusCode, res.body).toBe(200);
      const file = state(res).current!.files[0]!;
      const got = await call(ctx.app, file.url, { token });
      expect(got.headers['content-disposition']).toBe('attachment; filename="front.pdf"');
      expect(got.rawPayload.equals(sent)).toBe(false);
      expect(await activeContentOf(got.rawPayload), make.name).toEqual([]);
      expect(await pageTextOf(got.rawPayload)).toEqual([expect.stringContaining('(PASSPORT 4567) Tj')]);
    }
  });

  it('a flood of uploads by one user: theirs gets 503 overloaded, another user is served at once', async () => {
    const flooder = await newUser();
    const other = await newUser();
    const [floodId, otherId] = [await openPassport(flooder.token), await openPassport(other.token)];
    // Two file checks of the flooder's are under way and never end during this test: they take
    // the slots one user may hold (every CPU but one; this machine has two or more).
    let release!: () => void;
    const gate = new Promise<void>((resolve) => {
      release = resolve;
    });
    let started = 0;
    const flooderUserId = await userIdOf(flooder.email);
    const holding = [0, 1].map(() =>
      fileWork.run(flooderUserId, undefined, async () => {
        started++;
        await gate;
      }),
    );
    await until('the flood holds its slots', async () => started === Math.min(2, fileWork.stats().concurrency - 1));
    const image = await png();
    const refused = await upload(
      flooder.token,
      'passport',
      [
        { name: 'id', value: floodId },
        { name: 'side0', value: 'front' },
        { name: 'file0', filename: 'a.png', content: image },
      ],
      'ru',
    );
    expect(refused.statusCode).toBe(503);
    expect(refused.headers['retry-after']).toBe('5');
    expect(refused.json()).toMatchObject({ code: 'overloaded', message: 'Сейчас проверяется слишком много файлов. Попробуйте через несколько секунд.' });
    const served = await upload(other.token, 'passport', [
      { name: 'id', value: otherId },
      { name: 'side0', value: 'front' },
      { name: 'file0', filename: 'a.png', content: image },
    ]);
    expect(served.statusCode, served.body).toBe(200);
    // …while the flood's two checks are still there.
    expect(fileWork.stats().running + fileWork.stats().waiting).toBe(2);
    release();
    await Promise.all(holding);
  });

  it('a client that goes away while its files wait: their check never starts, nothing is kept', async () => {
    const { token } = await newUser();
    const id = await openPassport(token);
    const before = await counts();
    const held: Array<() => void> = [];
    const holding: Promise<unknown>[] = [];
    for (let i = 0; i < fileWork.stats().concurrency; i++) {
      const gate = new Promise<void>((resolve) => held.push(resolve));
      holding.push(fileWork.run(`filler-${i}`, undefined, () => gate));
    }
    const address = await serverAddress();
    const { payload, headers } = multipart([
      { name: 'id', value: id },
      { name: 'side0', value: 'front' },
      { name: 'file0', filename: 'a.jpg', content: await jpegWithGps() },
    ]);
    const req = http.request(`${address}/api/verification/passport/upload`, {
      method: 'POST',
      headers: { ...headers, authorization: `Bearer ${token}`, 'x-forwarded-for': '10.9.9.7' },
    });
    req.on('error', () => {});
    req.end(payload);
    await until('the upload waits for a slot', async () => fileWork.stats().waiting === 1);
    req.destroy();
    await until('the check leaves the queue', async () => fileWork.stats().waiting === 0);
    for (const open of held) open();
    await Promise.all(holding);
    expect(fileWork.stats()).toMatchObject({ running: 0, waiting: 0 });
    expect(await counts()).toEqual(before);
  });

  it('limits uploads per user: the 21st in ten minutes is 429 with Retry-After, localized', async () => {
    const { token } = await newUser();
    const id = await openPassport(token);
    const image = await png();
    const parts: TPart[] = [
      { name: 'id', value: id },
      { name: 'side0', value: 'front' },
      { name: 'file0', filename: 'a.png', content: image },
    ];
    for (let i = 0; i < 20; i++) expect((await upload(token, 'passport', parts)).statusCode).toBe(200);
    const res = await upload(token, 'passport', parts, 'ru');
    expect(res.statusCode).toBe(429);
    expect(res.json()).toMatchObject({ code: 'rate_limited', message: expect.stringMatching(/^Слишком много попыток. Попробуйте снова через \d+ мин.$/) });
    expect(Number(res.headers['retry-after'])).toBeGreaterThan(0);
  });

  it('a file over the cap: 413 names the limit in the message and under the field, in ru and en', async () => {
    const { token } = await newUser();
    const id = await openPassport(token);
    for (const [locale, message] of [
      ['en', 'This file is larger than 10 MB.'],
      ['ru', 'Файл больше 10 МБ.'],
    ] as const) {
      const res = await upload(
        token,
        'passport',
        [
          { name: 'id', value: id },
          { name: 'side0', value: 'front' },
          { name: 'file0', filename: 'big.png', content: Buffer.alloc(10 * 1024 * 1024 + 1, 0xff) },
        ],
        locale,
      );
      expect(res.statusCode).toBe(413);
      expect(res.json()).toMatchObject({ code: 'file_too_large', message, fields: { file0: message } });
    }
  });

  describe('refuses bad files with a localized reason, keeping nothing', () => {
    const cases: Array<[string, () => Promise<Buffer> | Buffer, number, string, RegExp]> = [
      ['a renamed executable', windowsExecutable, 415, 'file_refused', /Only JPEG, PNG, WebP/],
      ['a JPEG with a web page inside', jpegHtmlPolyglot, 415, 'file_refused', /something besides/],
      ['a PNG with a ZIP archive appended', pngZipPolyglot, 415, 'file_refused', /something besides/],
      ['a 49-megapixel WebP', hugeWebp, 415, 'file_refused', /at most 24 megapixels/],
      ['a password-protected PDF', pdfEncrypted, 415, 'file_refused', /protected by a password/],
      ['a PDF of 51 pages', () => pdfOfPages(51), 415, 'file_refused', /at most 50/],
      ['a zero-byte file', () => Buffer.alloc(0), 415, 'file_refused', /empty/],
      ['a HEIC photo', heicHeader, 415, 'file_refused', /HEIC/],
      ['a truncated JPEG', async () => (await jpegWithGps()).subarray(0, 400), 415, 'file_refused', /damaged/],
      ['a 50 MB file', () => Buffer.alloc(50 * 1024 * 1024, 0xff), 413, 'file_too_large', /larger than 10 MB/],
    ];
    it.each(cases)('%s', async (_name, make, status, code, message) => {
      const { token } = await newUser();
      const id = await openPassport(token);
      const before = await counts();
      const res = await upload(token, 'passport', [
        { name: 'id', value: id },
        { name: 'side0', value: 'selfie' },
        { name: 'file1', filename: 'ok.png', content: await png() },
        { name: 'side1', value: 'front' },
        { name: 'file0', filename: 'photo.jpg', content: await make(), type: 'image/jpeg' },
      ]);
      expect(res.statusCode, res.body).toBe(status);
      expect(res.json().code).toBe(code);
      expect(res.json().message).toMatch(message);
      expect(Object.keys(res.json().fields ?? { file0: 1 })).toEqual(['file0']);
      expect(await counts()).toEqual(before);
    });

    it('eleven files: 413 before any is kept', async () => {
      const { token } = await newUser();
      const id = await openPassport(token);
      const before = await counts();
      const image = await png();
      const parts: TPart[] = [{ name: 'id', value: id }];
      for (let i = 0; i < 11; i++) parts.push({ name: `file${i}`, filename: `${i}.png`, content: image });
      const res = await upload(token, 'passport', parts, 'ru');
      expect(res.statusCode).toBe(413);
      expect(res.json().message).toBe('Не больше 6 файлов за раз.');
      expect(await counts()).toEqual(before);
    });

    it('over the cap on a real socket: 413 arrives while the rest of the body is still unsent', async () => {
      const { token } = await newUser();
      const id = await openPassport(token);
      const before = await counts();
      const address = await serverAddress();
      const boundary = 'obmenboundary';
      const head = Buffer.from(
        `--${boundary}\r\nContent-Disposition: form-data; name="id"\r\n\r\n${id}\r\n` +
          `--${boundary}\r\nContent-Disposition: form-data; name="side0"\r\n\r\nfront\r\n` +
          `--${boundary}\r\nContent-Disposition: form-data; name="file0"; filename="big.jpg"\r\nContent-Type: image/jpeg\r\n\r\n`,
      );
      // Declares 50 MB, sends 11 MB and waits: the answer must not need the other 39 MB.
      const declared = head.length + 50 * 1024 * 1024;
      const answer = await new Promise<{ status: number; body: string }>((resolve, reject) => {
        const req = http.request(`${address}/api/verification/passport/upload`, {
          method: 'POST',
          headers: {
            authorization: `Bearer ${token}`,
            'content-type': `multipart/form-data; boundary=${boundary}`,
            'content-length': declared,
            'x-forwarded-for': '10.9.9.9',
          },
        });
        req.on('response', (res) => {
          let body = '';
          res.on('data', (chunk) => (body += chunk));
          res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
        });
        req.on('error', reject);
        req.write(head);
        req.write(Buffer.alloc(11 * 1024 * 1024, 0xff));
      });
      expect(answer.status).toBe(413);
      expect(JSON.parse(answer.body).code).toBe('file_too_large');
      expect(await counts()).toEqual(before);
    });

    it('a declared length beyond every valid upload: 413 before a byte is read', async () => {
      const { token } = await newUser();
      const address = await serverAddress();
      const answer = await new Promise<number>((resolve, reject) => {
        const req = http.request(`${address}/api/verification/passport/upload`, {
          method: 'POST',
          headers: {
            authorization: `Bearer ${token}`,
            'content-type': 'multipart/form-data; boundary=x',
            'content-length': 200 * 1024 * 1024,
            'x-forwarded-for': '10.9.9.8',
          },
        });
        req.on('response', (res) => {
          res.resume();
          resolve(res.statusCode ?? 0);
        });
        req.on('error', reject);
        req.flushHeaders();
      });
      expect(answer).toBe(413);
    });

    it('bad forms: no side, a side twice, a side the document lacks, no files, JSON instead of files', async () => {
      const { token } = await newUser();
      const id = await openPassport(token);
      const image = await png();
      const noSide = await upload(token, 'passport', [
        { name: 'id', value: id },
        { name: 'file0', filename: 'a.png', content: image },
      ]);
      expect(noSide.statusCode).toBe(400);
      expect(noSide.json().fields).toEqual({ side0: 'Say which side this file is: front, back or selfie.' });
      const twice = await upload(token, 'passport', [
        { name: 'id', value: id },
        { name: 'side0', value: 'front' },
        { name: 'side1', value: 'front' },
        { name: 'file0', filename: 'a.png', content: image },
        { name: 'file1', filename: 'b.png', content: image },
      ]);
      expect(twice.json().fields).toEqual({ side1: 'Each side once per upload.' });
      const back = await upload(token, 'passport', [
        { name: 'id', value: id },
        { name: 'side0', value: 'back' },
        { name: 'file0', filename: 'a.png', content: image },
      ]);
      expect(back.statusCode).toBe(400);
      expect(back.json().fields).toEqual({ back: 'This document does not need that side.' });
      const none = await upload(token, 'passport', [{ name: 'id', value: id }]);
      expect(none.json().fields).toEqual({ file0: 'Choose a file to upload.' });
      const json = await call(ctx.app, '/api/verification/passport/upload', { token, payload: { id }, locale: 'en' });
      expect(json.statusCode).toBe(415);
      expect(json.json().code).toBe('not_multipart');
      expect((await counts()).rows).toBeGreaterThanOrEqual(0);
    });
  });

  it("another user's draft and files answer exactly like missing ones", async () => {
    const owner = await newUser();
    const id = await openPassport(owner.token);
    const file = (await uploadPassport(owner.token, id)).current!.files[0]!;
    const stranger = await newUser();
    await openPassport(stranger.token);
    const theirs = await call(ctx.app, file.url, { token: stranger.token });
    const missing = await call(ctx.app, `/api/verification/file/${randomUUID()}`, { token: stranger.token });
    const garbage = await call(ctx.app, '/api/verification/file/..%2F..%2Fetc', { token: stranger.token });
    expect(theirs.statusCode).toBe(404);
    expect(theirs.body).toBe(missing.body);
    expect(garbage.body).toBe(missing.body);
    const image = await png();
    const upOther = await upload(stranger.token, 'passport', [
      { name: 'id', value: id },
      { name: 'side0', value: 'front' },
      { name: 'file0', filename: 'a.png', content: image },
    ]);
    const upMissing = await upload(stranger.token, 'passport', [
      { name: 'id', value: randomUUID() },
      { name: 'side0', value: 'front' },
      { name: 'file0', filename: 'a.png', content: image },
    ]);
    expect(upOther.statusCode).toBe(404);
    expect(upOther.body).toBe(upMissing.body);
    const subOther = await call(ctx.app, '/api/verification/passport/submit', { token: stranger.token, payload: { id, ...DOCUMENT } });
    const subMissing = await call(ctx.app, '/api/verification/passport/submit', { token: stranger.token, payload: { id: randomUUID(), ...DOCUMENT } });
    expect(subOther.statusCode).toBe(404);
    expect(subOther.body).toBe(subMissing.body);
  });

  it('submit: files missing, bad and expired fields refused; then read-only, the number encrypted and masked', async () => {
    const { token } = await newUser();
    const id = await openPassport(token);
    const early = await call(ctx.app, '/api/verification/passport/submit', { token, payload: { id, ...DOCUMENT } });
    expect(early.statusCode).toBe(400);
    expect(early.json().fields).toEqual({ front: 'Upload this side of the document.', selfie: 'Upload this side of the document.' });
    await uploadPassport(token, id);
    const expired = await call(ctx.app, '/api/verification/passport/submit', { token, locale: 'ru', payload: { id, ...DOCUMENT, expiry_date: '2026-11-22' } });
    expect(expired.statusCode).toBe(400);
    expect(expired.json().fields).toEqual({ expiry_date: 'Срок действия документа истёк: пройдите верификацию с действующим.' });
    const bad = await call(ctx.app, '/api/verification/passport/submit', {
      token,
      payload: {
        id,
        number: '1',
        issuing_country: 'Germany',
        issue_date: '2020-02-30',
        expiry_date: '2030-01-01',
        first_name: '<b>',
        last_name: '',
        birth_date: '2015-01-01',
      },
    });
    expect(Object.keys(bad.json().fields).sort()).toEqual(['birth_date', 'first_name', 'issue_date', 'issuing_country', 'last_name', 'number']);
    const ok = await call(ctx.app, '/api/verification/passport/submit', { token, payload: { id, ...DOCUMENT } });
    expect(ok.statusCode, ok.body).toBe(200);
    const current = state(ok).current!;
    expect(current.status).toBe('submitted');
    expect(current.uploadable_sides).toEqual([]);
    expect(current.document).toMatchObject({ number_masked: '••••4567', issuing_country: 'DE', first_name: 'Anna' });
    expect(ok.body).not.toContain('AB1234567');
    const [row] = await ctx.db.query<{ number_enc: Buffer }>('SELECT number_enc FROM verifications WHERE public_id = $1', [id]);
    expect(row!.number_enc.includes('AB1234567')).toBe(false);
    expect(row!.number_enc.length).toBe(12 + 16 + 9);
    // Read-only now: no upload, no second submit, no new draft.
    const again = await upload(token, 'passport', [
      { name: 'id', value: id },
      { name: 'side0', value: 'front' },
      { name: 'file0', filename: 'a.png', content: await png() },
    ]);
    expect(again.statusCode).toBe(409);
    expect(again.json().message).toMatch(/sent for checking/);
    expect((await call(ctx.app, '/api/verification/passport/submit', { token, payload: { id, ...DOCUMENT } })).statusCode).toBe(409);
    expect((await call(ctx.app, '/api/verification/passport/new', { token })).json().message).toMatch(/being checked/);
  });

  it('operator approves: level 1, proven fields locked, mail and notification in the user language, audited', async () => {
    const user = await submitted('en');
    const shown = await showSubmission(operatorCtx, { actor: 'cli:alice' }, user.id);
    expect(shown.document?.number).toBe('AB1234567');
    expect(shown.files.map((f) => f.side)).toEqual(['front', 'selfie']);
    expect(await approveSubmission(operatorCtx, { actor: 'cli:alice' }, user.id)).toMatchObject({ level: 1 });
    await expect(approveSubmission(operatorCtx, { actor: 'cli:alice' }, user.id)).rejects.toThrow(/decided already/);

    const body = state(await call(ctx.app, '/api/verification', { token: user.token }));
    expect(body.level).toBe(1);
    expect(body.current).toMatchObject({ status: 'approved', uploadable_sides: [] });
    expect(body.types.passport).toBe('approved');
    const mail = (await mailsTo(ctx.db, user.email)).at(-1)!;
    expect(mail.kind).toBe('verification_approved');
    expect(mail.subject).toBe('Your identity is verified');
    expect(mail.text_body).toContain('http://localhost:3000/settings/verification_success');
    const [notice] = await ctx.db.query<{ title: string; locale: string }>(
      'SELECT t.title, t.locale FROM notifications n JOIN notification_texts t ON t.notification_id = n.id JOIN users u ON u.id = n.user_id WHERE lower(u.email) = lower($1)',
      [user.email],
    );
    expect(notice).toEqual({ title: 'Your identity is verified', locale: 'en' });

    const info = await call(ctx.app, '/api/user/info', { token: user.token });
    expect(info.json().info).toMatchObject({ first_name: 'Anna', last_name: 'Schmidt', birth_date: '1990-05-01', country: 'DE', verification_level: 1 });
    const change = await call(ctx.app, '/api/user/info', { token: user.token, payload: { first_name: 'Eve', city: 'Berlin' } });
    expect(change.statusCode).toBe(409);
    expect(Object.keys(change.json().fields)).toEqual(['first_name']);
    expect((await call(ctx.app, '/api/user/info', { token: user.token, payload: { first_name: 'Anna', city: 'Berlin' } })).statusCode).toBe(200);

    const upload2 = await upload(user.token, 'passport', [
      { name: 'id', value: user.id },
      { name: 'side0', value: 'front' },
      { name: 'file0', filename: 'a.png', content: await png() },
    ]);
    expect(upload2.statusCode).toBe(409);
    expect(upload2.json().message).toMatch(/already verified/);
    expect((await call(ctx.app, '/api/verification/id_card/new', { token: user.token })).statusCode).toBe(409);

    const actions = await ctx.db.query<{ operator: string; action: string }>('SELECT operator, action FROM operator_audit WHERE subject = $1 ORDER BY id', [
      user.id,
    ]);
    expect(actions).toEqual([
      { operator: 'cli:alice', action: 'verification.show' },
      { operator: 'cli:alice', action: 'verification.approve' },
    ]);
    await expect(ctx.db.query('DELETE FROM operator_audit')).rejects.toThrow(/append-only/);
  });

  it('queue lists waiting submissions oldest first, and the look is audited', async () => {
    const first = await submitted();
    const second = await submitted();
    const queue = await listQueue(ctx.db, { actor: 'cli:bob' });
    const ids = queue.map((item) => item.id);
    expect(ids.indexOf(first.id)).toBeLessThan(ids.indexOf(second.id));
    expect(queue.find((item) => item.id === first.id)).toMatchObject({ type: 'passport', files: 2, resubmitted: false });
    const [audit] = await ctx.db.query<{ details: { shown: string[] } }>(
      `SELECT details FROM operator_audit WHERE operator = 'cli:bob' AND action = 'verification.queue'`,
    );
    expect(audit!.details.shown).toEqual(ids);
  });

  it('rejection with retry: only the rejected file can be uploaded again, then it goes back to the queue', async () => {
    const user = await submitted('ru');
    await expect(rejectSubmission(operatorCtx, { actor: 'cli:carol' }, user.id, { files: [{ side: 'selfie', reason: 'other' }], retry: true })).rejects.toThrow(
      /ops\.kyc\.note_needed/,
    );
    await rejectSubmission(operatorCtx, { actor: 'cli:carol' }, user.id, { files: [{ side: 'selfie', reason: 'blurry' }], retry: true });
    const body = state(await call(ctx.app, '/api/verification', { token: user.token }));
    expect(body.current).toMatchObject({ status: 'rejected', retry_allowed: true, uploadable_sides: ['selfie'] });
    expect(body.current!.files.map((f) => [f.side, f.reject_reason])).toEqual([
      ['front', null],
      ['selfie', 'blurry'],
    ]);
    const mail = (await mailsTo(ctx.db, user.email)).at(-1)!;
    expect(mail.subject).toBe('Нужны новые фото документов');
    expect(mail.text_body).toContain('Селфи с документом: размыто или нечитаемо');

    expect((await call(ctx.app, '/api/verification/passport/new', { token: user.token })).json().verification.current.id).toBe(user.id);
    const front = await upload(user.token, 'passport', [
      { name: 'id', value: user.id },
      { name: 'side0', value: 'front' },
      { name: 'file0', filename: 'a.png', content: await png() },
    ]);
    expect(front.statusCode).toBe(400);
    expect(front.json().fields).toEqual({ front: 'Only the rejected files can be uploaded again.' });
    const early = await call(ctx.app, '/api/verification/passport/submit', { token: user.token, locale: 'en', payload: { id: user.id, ...DOCUMENT } });
    expect(early.json().fields).toEqual({ selfie: 'This file was rejected: upload a new one.' });
    const selfie = await upload(user.token, 'passport', [
      { name: 'id', value: user.id },
      { name: 'side0', value: 'selfie' },
      { name: 'file0', filename: 'b.png', content: await png(300, 300) },
    ]);
    expect(selfie.statusCode, selfie.body).toBe(200);
    expect(state(selfie).current!.files.map((f) => [f.side, f.reject_reason])).toEqual([
      ['front', null],
      ['selfie', null],
    ]);
    expect(state(selfie).current!.uploadable_sides).toEqual(['selfie']);
    const resubmit = await call(ctx.app, '/api/verification/passport/submit', { token: user.token, payload: { id: user.id, ...DOCUMENT } });
    expect(resubmit.statusCode, resubmit.body).toBe(200);
    expect(state(resubmit).current!.status).toBe('submitted');
    expect((await listQueue(ctx.db, { actor: 'cli:carol' })).find((item) => item.id === user.id)).toMatchObject({ resubmitted: true });
    // The rejected selfie stays on record for the operator, out of the current set.
    const [{ n }] = (await ctx.db.query<{ n: number }>(
      'SELECT count(*)::int AS n FROM verification_files f JOIN verifications v ON v.id = f.verification_id WHERE v.public_id = $1',
      [user.id],
    )) as [{ n: number }];
    expect(n).toBe(3);
  });

  it('a final rejection closes the way to a new draft', async () => {
    const user = await submitted();
    await rejectSubmission(operatorCtx, { actor: 'cli:carol' }, user.id, {
      files: [{ side: 'front', reason: 'name_mismatch' }],
      retry: false,
      note: 'photo does not match',
    });
    const res = await call(ctx.app, '/api/verification/passport/new', { token: user.token });
    expect(res.statusCode).toBe(409);
    expect(res.json().message).toMatch(/declined for good/);
    expect(state(await call(ctx.app, '/api/verification', { token: user.token })).current).toMatchObject({
      status: 'rejected',
      retry_allowed: false,
      uploadable_sides: [],
    });
  });

  if (engine === 'postgres') {
    it('concurrent draft requests open one draft', async () => {
      const { token } = await newUser();
      const answers = await Promise.all(Array.from({ length: 8 }, () => call(ctx.app, '/api/verification/passport/new', { token })));
      const ids = new Set(answers.map((res) => state(res).current!.id));
      expect(ids.size).toBe(1);
    });
  }
});
