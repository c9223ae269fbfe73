import { Writable } from 'node:stream';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REQUEST_ID_HEADER, SESSION_COOKIE, TOKEN_PATTERN, loggerOptions } from '@obmen/shared';
import { buildBff, linkBindingOf, parseSetCookies, startRealCore, uploadToNewPassport } from './session-helpers.ts';
import { requireRealSiteBuild } from './helpers.ts';
import { freshEmail, lastMailTo, linkToken } from '../../core/test/auth-helpers.ts';
import { jpegWithGps, png } from '../../core/test/storage/upload-fixtures.ts';
import { SPECIMEN_DOCUMENT } from '../../core/test/fixtures.ts';

const HOST = 'obmen.test';
const ORIGIN = `http://${HOST}`;
const PASSWORD = 'Seeded-Secret-Password-7131';
const NEW_PASSWORD = 'Seeded-Secret-Password-8242';
const DOCUMENT_NUMBER = 'XQ 987-6543';

type TLine = { reqId?: string; msg?: string; svc: string; req?: { url: string } };

/** Everything both services log, as they log it in production (levels, redactions, serializers). */
function captureLogs() {
  const raw: string[] = [];
  const logger = (svc: string) =>
    pino(
      { ...loggerOptions('trace', 'bff'), base: { svc } },
      new Writable({
        write(chunk: Buffer, _encoding, callback) {
          raw.push(chunk.toString('utf8'));
          callback();
        },
      }),
    );
  const text = () => raw.join('');
  const lines = () =>
    text()
      .split('\n')
      .filter(Boolean)
      .map((line) => JSON.parse(line) as TLine);
  return { core: logger('core'), bff: logger('bff'), text, lines };
}

/**
 * Real requests through BFF (with the real site) and core, both logging at trace level into
 * one capture: one request id across both, and none of the seeded secrets in any line.
 */
describe('logs: request ids across BFF and core, no secrets', () => {
  const logs = captureLogs();
  let core: Awaited<ReturnType<typeof startRealCore>>;
  let bff: Awaited<ReturnType<typeof buildBff>>;
  let filesDir: string;
  const secrets: string[] = [PASSWORD, NEW_PASSWORD, DOCUMENT_NUMBER, DOCUMENT_NUMBER.replace(/[ -]/g, '')];

  beforeAll(async () => {
    filesDir = await mkdtemp(path.join(tmpdir(), 'obmen-log-secrets-'));
    core = await startRealCore({ FILES_DIR: filesDir, DOCUMENT_KEY: Buffer.alloc(32, 5).toString('base64') }, { loggerInstance: logs.core });
    // The site's server code reads where the core is at its first import.
    process.env.UPSTREAM_URL = core.url;
    bff = await buildBff(core.url, { SITE_DIST: requireRealSiteBuild(), LOG_LEVEL: 'trace' }, { loggerInstance: logs.bff });
  });
  afterAll(async () => {
    await bff?.close();
    await core?.close();
    await rm(filesDir, { recursive: true, force: true });
  });

  const browser = (token?: string, extra: Record<string, string> = {}) => ({
    host: HOST,
    origin: ORIGIN,
    ...(token ? { cookie: `${SESSION_COOKIE}=${token}` } : {}),
    ...extra,
  });
  const cookieOf = (res: { headers: Record<string, unknown> }) => {
    const value = parseSetCookies(res.headers['set-cookie'] as string[] | string | undefined).find((cookie) => cookie.name === SESSION_COOKIE)?.value;
    expect(value).toMatch(TOKEN_PATTERN);
    secrets.push(value!);
    return value!;
  };

  it('keeps a sane client id, replaces an unsafe one, and both services log the request under it', async () => {
    const traced = await bff.app.inject({ url: '/api/auth/check', headers: browser(undefined, { [REQUEST_ID_HEADER]: 'trace-me.42' }) });
    expect(traced.statusCode).toBe(200);
    expect(traced.headers[REQUEST_ID_HEADER]).toBe('trace-me.42');
    const services = new Set(
      logs
        .lines()
        .filter((line) => line.reqId === 'trace-me.42')
        .map((line) => line.svc),
    );
    expect(services).toEqual(new Set(['bff', 'core']));

    for (const unsafe of ['has space', 'x'.repeat(65), 'line\u2028break', '']) {
      const res = await bff.app.inject({ url: '/api/auth/check', headers: browser(undefined, { [REQUEST_ID_HEADER]: unsafe }) });
      const id = res.headers[REQUEST_ID_HEADER];
      expect(id).toMatch(/^[0-9a-f-]{36}$/);
      expect(logs.lines().some((line) => line.svc === 'core' && line.reqId === id)).toBe(true);
    }
  });

  it('a page render sends its request id on every call it makes to the core', async () => {
    const page = await bff.app.inject({ url: '/', headers: browser() });
    expect(page.statusCode).toBe(200);
    const id = page.headers[REQUEST_ID_HEADER] as string;
    const coreLines = logs.lines().filter((line) => line.svc === 'core' && line.reqId === id);
    // The layout's calls (auth check, menu) and the landing page's pair list.
    const urls = coreLines.filter((line) => line.msg === 'request completed').map((line) => line.req?.url);
    expect(urls).toEqual(expect.arrayContaining(['/api/auth/check', '/api/content/menu', '/api/exchange/list']));
    expect(logs.lines().some((line) => line.svc === 'bff' && line.reqId === id && line.msg === 'request completed')).toBe(true);
  });

  it('sign-up, sign-in, password reset, a page with a token, identity documents: no secret reaches a log', async () => {
    const email = freshEmail('log-secrets');
    const registered = await bff.app.inject({ method: 'POST', url: '/api/auth/register', headers: browser(), payload: { email, password: PASSWORD } });
    expect(registered.statusCode, registered.body).toBe(200);
    const confirmToken = linkToken(await lastMailTo(core.db, email));
    const binding = linkBindingOf(registered);
    secrets.push(confirmToken, binding.split('=')[1]!);
    cookieOf(await bff.app.inject({ method: 'POST', url: `/api/auth/confirm/${confirmToken}`, headers: browser(undefined, { cookie: binding }) }));

    const signedIn = await bff.app.inject({ method: 'POST', url: '/api/auth/login_by_password', headers: browser(), payload: { email, password: PASSWORD } });
    expect(signedIn.statusCode, signedIn.body).toBe(200);
    const session = cookieOf(signedIn);
    // A wrong password is refused and must not be logged either.
    const wrong = await bff.app.inject({
      method: 'POST',
      url: '/api/auth/login_by_password',
      headers: browser(),
      payload: { email, password: `${PASSWORD}-wrong` },
    });
    expect(wrong.statusCode).toBe(401);

    expect((await bff.app.inject({ method: 'POST', url: '/api/auth/reset', headers: browser(), payload: { email } })).statusCode).toBe(200);
    const resetToken = linkToken(await lastMailTo(core.db, email));
    secrets.push(resetToken);
    const resetPage = await bff.app.inject({ url: `/reset-password?token=${resetToken}`, headers: browser() });
    expect(resetPage.statusCode).toBe(200);
    expect((await bff.app.inject({ url: `/api/auth/reset/${resetToken}`, headers: browser() })).statusCode).toBe(200);
    const reset = await bff.app.inject({ method: 'POST', url: `/api/auth/reset/${resetToken}`, headers: browser(), payload: { password: NEW_PASSWORD } });
    expect(reset.statusCode, reset.body).toBe(200);
    const fresh = cookieOf(reset);

    const { id, upload: up } = await uploadToNewPassport(bff.app, browser(fresh), [
      { side: 'front', filename: 'IMG.jpg', content: await jpegWithGps() },
      { side: 'selfie', filename: 'selfie.png', content: await png() },
    ]);
    expect(up.statusCode, up.body).toBe(200);
    const document = { id, ...SPECIMEN_DOCUMENT, number: DOCUMENT_NUMBER };
    const submitted = await bff.app.inject({ method: 'POST', url: '/api/verification/passport/submit', headers: browser(fresh), payload: document });
    expect(submitted.statusCode, submitted.body).toBe(200);
    // Signed-in page renders with the session cookie.
    expect((await bff.app.inject({ url: '/settings/verification', headers: browser(fresh) })).statusCode).toBeLessThan(500);
    expect((await bff.app.inject({ url: '/', headers: browser(session) })).statusCode).toBe(200);

    const text = logs.text();
    // The capture holds these requests (their URLs, masked where they carried a token).
    expect(text).toContain('/api/auth/login_by_password');
    expect(text).toContain('/api/auth/reset/[redacted]');
    expect(text).toContain('/reset-password?token=[redacted]');
    expect(text).toContain('/api/verification/passport/submit');
    expect(secrets.length).toBeGreaterThanOrEqual(8);
    for (const secret of secrets) expect(text.includes(secret), `a log line holds the secret ${secret}`).toBe(false);
  });
});
