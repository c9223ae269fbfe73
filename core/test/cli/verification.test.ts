import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { build, ENGINES, testConfig } from '../helpers.ts';
import { call, freshEmail, signUp } from '../auth-helpers.ts';
import { jpegWithGps, multipart, png } from '../storage/upload-fixtures.ts';
import { startS3 } from '../storage/s3-helpers.ts';
import { makeVerificationCommands } from '../../src/cli/verification.ts';

/** The passport a test user submits (a specimen's data). */
const PASSPORT = {
  number: 'C01X00T47',
  issuing_country: 'DE',
  issue_date: '2021-03-01',
  expiry_date: '2031-02-28',
  first_name: 'Erika',
  last_name: 'Mustermann',
  birth_date: '1984-08-12',
};

const KEY = Buffer.alloc(32, 9).toString('base64');

/** The operator commands against a core whose files live in S3-compatible storage. */
describe.each(ENGINES)('kyc operator commands on %s, files in S3', (engine) => {
  let ctx: Awaited<ReturnType<typeof build>>;
  let s3: Awaited<ReturnType<typeof startS3>>;
  let out: string;
  let commands: ReturnType<typeof makeVerificationCommands>;

  beforeAll(async () => {
    s3 = await startS3();
    out = await mkdtemp(path.join(tmpdir(), 'obmen-kyc-out-'));
    const overrides = { S3_URL: s3.url, S3_BUCKET: s3.bucket, S3_ACCESS_KEY_ID: 'S3RVER', S3_SECRET_ACCESS_KEY: 'S3RVER', DOCUMENT_KEY: KEY };
    ctx = await build(engine, overrides);
    commands = makeVerificationCommands(() => testConfig(overrides));
  });
  afterAll(async () => {
    await ctx?.close();
    await s3?.close();
    await rm(out, { recursive: true, force: true });
  });

  async function submittedPassport() {
    const email = freshEmail('ops');
    const token = await signUp(ctx.app, ctx.db, email, 'correct horse battery', 'en');
    const id = (await call(ctx.app, '/api/verification/passport/new', { token })).json().verification.current.id as string;
    const { payload, headers } = multipart([
      { name: 'id', value: id },
      { name: 'side0', value: 'front' },
      { name: 'file0', filename: 'front.jpg', content: await jpegWithGps() },
      { name: 'side1', value: 'selfie' },
      { name: 'file1', filename: 'selfie.png', content: await png() },
    ]);
    const up = await ctx.app.inject({
      method: 'POST',
      url: '/api/verification/passport/upload',
      payload,
      headers: { ...headers, authorization: `Bearer ${token}` },
    });
    expect(up.statusCode, up.body).toBe(200);
    const submit = await call(ctx.app, '/api/verification/passport/submit', {
      token,
      payload: { id, ...PASSPORT },
    });
    expect(submit.statusCode, submit.body).toBe(200);
    return { token, id };
  }

  it('queue, show, file, reject with retry, approve: each audited under the operator name', async () => {
    const { token, id } = await submittedPassport();
    const queue = (await commands['kyc:queue']!(ctx.db, ['--operator', 'dana'])) as Array<{ id: string }>;
    expect(queue.map((item) => item.id)).toContain(id);

    const shown = (await commands['kyc:show']!(ctx.db, [id, '--as', 'dana'])) as {
      document: { number: string };
      files: Array<{ id: string; side: string }>;
    };
    expect(shown.document.number).toBe('C01X00T47');
    const front = shown.files.find((file) => file.side === 'front')!;
    const saved = path.join(out, 'front.jpg');
    await commands['kyc:file']!(ctx.db, [front.id, saved, '--operator', 'dana']);
    const meta = await sharp(await readFile(saved)).metadata();
    expect(meta.format).toBe('jpeg');
    expect(meta.exif).toBeUndefined();

    await expect(commands['kyc:reject']!(ctx.db, [id, '--file', 'selfie=blurry'])).rejects.toThrow(/--retry \| --final/);
    await expect(commands['kyc:reject']!(ctx.db, [id, '--file', 'selfie', '--retry'])).rejects.toThrow(/<side>=<reason>/);
    await expect(commands['kyc:reject']!(ctx.db, [id, '--file', 'selfie=ugly', '--retry', '--operator', 'dana'])).rejects.toThrow();
    expect(await commands['kyc:reject']!(ctx.db, [id, '--file', 'selfie=other:face hidden by a hat', '--retry', '--operator', 'dana'])).toMatchObject({
      retry: true,
      files: ['selfie'],
    });

    const state = (await call(ctx.app, '/api/verification', { token })).json().verification;
    expect(state.current.files.find((f: { side: string }) => f.side === 'selfie')).toMatchObject({
      reject_reason: 'other',
      reject_note: 'face hidden by a hat',
    });
    const { payload, headers } = multipart([
      { name: 'id', value: id },
      { name: 'side0', value: 'selfie' },
      { name: 'file0', filename: 's.png', content: await png(240, 240) },
    ]);
    expect(
      (await ctx.app.inject({ method: 'POST', url: '/api/verification/passport/upload', payload, headers: { ...headers, authorization: `Bearer ${token}` } }))
        .statusCode,
    ).toBe(200);
    const resubmit = await call(ctx.app, '/api/verification/passport/submit', {
      token,
      payload: { id, ...PASSPORT },
    });
    expect(resubmit.statusCode).toBe(200);
    expect(await commands['kyc:approve']!(ctx.db, [id, '--operator', 'dana'])).toMatchObject({ approved: id, level: 1 });
    expect((await call(ctx.app, '/api/verification', { token })).json().verification.level).toBe(1);

    const actions = await ctx.db.query<{ action: string }>(`SELECT action FROM operator_audit WHERE operator = 'cli:dana' ORDER BY id`);
    expect(actions.map((row) => row.action)).toEqual([
      'verification.queue',
      'verification.show',
      'verification.file',
      'verification.reject',
      'verification.approve',
    ]);
  });

  it('refuses unknown ids and missing arguments with their usage', async () => {
    await expect(commands['kyc:show']!(ctx.db, [])).rejects.toThrow(/usage: kyc:show/);
    await expect(commands['kyc:approve']!(ctx.db, ['not-a-uuid', '--operator', 'x'])).rejects.toThrow(/document_not_found/);
    await expect(commands['kyc:approve']!(ctx.db, ['2b4c1f39-38f5-4bd4-a0f9-34c9d04ec0a5', '--operator', 'x'])).rejects.toThrow(/document_not_found/);
    expect(await commands['kyc:limits']!(ctx.db, [])).toHaveLength(6);
  });

  it("kyc:limits:set changes one level's limits through the screen's service, audited as the named operator with before and after", async () => {
    await expect(commands['kyc:limits:set']!(ctx.db, ['2', 'deposit', 'USD', '1', '2'])).rejects.toThrow(/usage: kyc:limits:set/);
    await expect(commands['kyc:limits:set']!(ctx.db, ['0', 'deposit', 'USD', '5000'])).rejects.toThrow(/usage: kyc:limits:set/);
    await expect(commands['kyc:limits:set']!(ctx.db, ['0', 'deposit', 'USD', '5000', '10', '--as', 'erin'])).rejects.toThrow(/validation/);
    const after = await commands['kyc:limits:set']!(ctx.db, ['0', 'deposit', 'eur', '2000', '5000.5', '--as', 'erin']);
    const changed = { level: 0, operation: 'deposit', currency: 'EUR', per_24h: '2000', per_30d: '5000.5' };
    expect(after).toEqual(changed);
    expect(
      ((await commands['kyc:limits']!(ctx.db, [])) as Array<{ level: number; operation: string }>).find(
        (row) => row.level === 0 && row.operation === 'deposit',
      ),
    ).toEqual(changed);
    const rows = await ctx.db.query<{ subject: string; before: unknown; after: unknown }>(
      "SELECT subject, before, after FROM operator_audit WHERE operator = 'cli:erin' AND action = 'config.limits'",
    );
    expect(rows).toEqual([
      { subject: 'limits:0:deposit', before: { level: 0, operation: 'deposit', currency: 'USD', per_24h: '1000', per_30d: '3000' }, after: changed },
    ]);
  });
});
