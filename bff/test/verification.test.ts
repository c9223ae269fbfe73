import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SESSION_COOKIE } from '@obmen/shared';
import { buildBff, startRealCore, uploadToNewPassport } from './session-helpers.ts';
import { freshEmail, signUp } from '../../core/test/auth-helpers.ts';
import { jpegWithGps, png } from '../../core/test/storage/upload-fixtures.ts';

const HOST = 'obmen.test';
const ORIGIN = `http://${HOST}`;

/** Identity documents through the BFF: uploads stream to the real core, files come back private. */
describe('BFF: verification uploads and private files (real core)', () => {
  let core: Awaited<ReturnType<typeof startRealCore>>;
  let bff: Awaited<ReturnType<typeof buildBff>>;
  let filesDir: string;

  beforeAll(async () => {
    filesDir = await mkdtemp(path.join(tmpdir(), 'obmen-bff-kyc-'));
    core = await startRealCore({ FILES_DIR: filesDir, DOCUMENT_KEY: Buffer.alloc(32, 3).toString('base64') });
    bff = await buildBff(core.url);
  });
  afterAll(async () => {
    await bff?.close();
    await core?.close();
    await rm(filesDir, { recursive: true, force: true });
  });

  async function session() {
    const token = await signUp(core.app, core.db, freshEmail('bff-kyc'), 'correct horse battery', 'en');
    return { host: HOST, origin: ORIGIN, cookie: `${SESSION_COOKIE}=${token}` };
  }

  it('uploads through the proxy, and serves the file to its owner only: inline, nosniff, private no-store', async () => {
    const owner = await session();
    const { upload: up } = await uploadToNewPassport(bff.app, owner, [{ side: 'front', filename: 'IMG.jpg', content: await jpegWithGps() }]);
    expect(up.statusCode, up.body).toBe(200);
    expect(up.json().fv).toBeDefined();
    const file = up.json().verification.current.files[0] as { url: string };

    const got = await bff.app.inject({ method: 'GET', url: file.url, headers: owner });
    expect(got.statusCode).toBe(200);
    expect(got.headers['content-type']).toBe('image/jpeg');
    expect(got.headers['content-disposition']).toBe('inline; filename="front.jpg"');
    expect(got.headers['x-content-type-options']).toBe('nosniff');
    expect(got.headers['cache-control']).toBe('private, no-store');
    // Re-encoded by the core: no EXIF block, none of the camera's words.
    expect(got.rawPayload.includes('Exif\0')).toBe(false);
    expect(got.rawPayload.includes('SpyPhone')).toBe(false);

    const stranger = await session();
    const theirs = await bff.app.inject({ method: 'GET', url: file.url, headers: stranger });
    const missing = await bff.app.inject({ method: 'GET', url: '/api/verification/file/6a0e7f0c-5d8b-4c1e-9c7e-0d6f2b9b1a11', headers: stranger });
    expect(theirs.statusCode).toBe(404);
    expect(theirs.body).toBe(missing.body);
    const anonymous = await bff.app.inject({ method: 'GET', url: file.url, headers: { host: HOST } });
    expect(anonymous.statusCode).toBe(401);
  });

  it('passes the core refusal of an oversized file through, localized', async () => {
    const owner = await session();
    const { upload: res } = await uploadToNewPassport(
      bff.app,
      owner,
      [{ side: 'selfie', filename: 'big.png', content: Buffer.concat([await png(), Buffer.alloc(11 * 1024 * 1024)]) }],
      { ...owner, cookie: `${owner.cookie}; i18n_redirected=ru` },
    );
    expect(res.statusCode).toBe(413);
    expect(res.json()).toMatchObject({ status: 'error', code: 'file_too_large', message: 'Файл больше 10 МБ.' });
  });
});
