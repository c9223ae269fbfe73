import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { build, json } from './helpers.ts';

/** Uploads wait UPLOAD_UPSTREAM_TIMEOUT_MS for the core, every other call UPSTREAM_TIMEOUT_MS. */
describe('the upstream deadline of uploads', () => {
  let ctx: Awaited<ReturnType<typeof build>>;
  beforeAll(async () => {
    ctx = await build({ env: { UPSTREAM_TIMEOUT_MS: '300', UPLOAD_UPSTREAM_TIMEOUT_MS: '20000' } });
    // A core that takes 1.5 s for everything (five times the ordinary deadline).
    ctx.upstream.handle = (_req, res) => void setTimeout(() => json(res, 200, { status: 'ok' }), 1_500);
  });
  afterAll(() => ctx.close());

  const boundary = 'obmen-test-boundary';
  const multipart = [
    `--${boundary}`,
    'Content-Disposition: form-data; name="file0"; filename="a.png"',
    'Content-Type: image/png',
    '',
    'png-bytes',
    `--${boundary}--`,
    '',
  ].join('\r\n');

  it('a multipart upload gets the longer wait and its answer', async () => {
    const res = await ctx.app.inject({
      method: 'POST',
      url: '/api/verification/passport/upload',
      headers: { 'content-type': `multipart/form-data; boundary=${boundary}` },
      payload: multipart,
    });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({ status: 'ok' });
  });

  it('any other call still ends at UPSTREAM_TIMEOUT_MS with 504', async () => {
    const res = await ctx.app.inject({ method: 'POST', url: '/api/auth/login', headers: { 'content-type': 'application/json' }, payload: '{}' });
    expect(res.statusCode).toBe(504);
    expect(res.json().code).toBe('upstream_timeout');
  });
});
