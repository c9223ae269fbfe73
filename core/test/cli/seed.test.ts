import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import Fastify from 'fastify';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Writable } from 'node:stream';
import app from '../../src/app.ts';
import { testConfig } from '../helpers.ts';
import { openDb } from '../../src/db/index.ts';
import { DEMO, call, sessionToken } from '../auth-helpers.ts';
import type { TSeedAnswer } from '../../src/seed/demo.ts';

const CLI = fileURLToPath(new URL('../../src/cli.ts', import.meta.url));

/** `ops seed` as the start scripts run it, on its own PGlite directory. */
/** What `ops seed` prints. */
function opsSeed(dataDir: string, nodeEnv: 'development' | 'production') {
  const env: NodeJS.ProcessEnv = { PATH: process.env.PATH ?? '', DATA_DIR: dataDir, NODE_ENV: nodeEnv, LOG_LEVEL: 'silent' };
  const run = spawnSync(process.execPath, [CLI, 'seed'], { env, encoding: 'utf8', timeout: 120_000 });
  expect(run.stderr).toBe('');
  expect(run.status).toBe(0);
  return JSON.parse(run.stdout) as TSeedAnswer;
}

/** The core as server.ts starts it after the seed, on that directory, with its log captured. */
async function start(dataDir: string, nodeEnv: 'development' | 'production') {
  const lines: Array<{ msg: string; [key: string]: unknown }> = [];
  const stream = new Writable({
    write(chunk: Buffer, _encoding, done) {
      for (const line of chunk.toString('utf8').split('\n').filter(Boolean)) lines.push(JSON.parse(line));
      done();
    },
  });
  const db = await openDb({ DATA_DIR: dataDir, DB_POOL_SIZE: 1 }, { error: () => {}, warn: () => {}, info: () => {} });
  const config = testConfig({ NODE_ENV: nodeEnv, LOG_LEVEL: 'info' });
  const fastify = Fastify({ logger: { level: 'info', stream }, trustProxy: config.TRUST_PROXY });
  await fastify.register(app, { config, db });
  await fastify.ready();
  return {
    app: fastify,
    lines,
    async close() {
      await fastify.close();
      await db.close();
    },
  };
}

describe('ops seed and the demo account', () => {
  let dir: string;
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'obmen-seed-'));
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('development: the seed answers the demo sign-in, the core never logs it, and it signs in', async () => {
    const data = join(dir, 'development');
    const first = opsSeed(data, 'development');
    expect(first.seeded).toEqual([
      'currencies, site settings, menus, articles',
      'rates and transfer limits',
      'withdrawal auto-approval limits',
      'withdrawal four-eyes amounts',
      'sandbox payment systems',
      'card products (sandbox issuer)',
      'verified demo user',
      'demo balances (development only)',
    ]);
    expect(first.demo_account).toMatchObject({ email: DEMO.email, password: DEMO.password });
    // The back office's demo operator, every role, with the secret for an authenticator app.
    expect(first.demo_operator).toMatchObject({ email: 'ops@obmen.local', password: expect.any(String), totp_secret: expect.stringMatching(/^[A-Z2-7]{32}$/) });
    // Every start runs it: the second finds everything there and still says how to sign in.
    expect(opsSeed(data, 'development')).toEqual({ seeded: [], demo_account: first.demo_account, demo_operator: first.demo_operator });

    const core = await start(data, 'development');
    try {
      expect(core.lines.some((line) => JSON.stringify(line).includes(DEMO.password))).toBe(false);
      expect(core.lines.some((line) => JSON.stringify(line).includes(first.demo_operator!.password))).toBe(false);
      const res = await call(core.app, '/api/auth/login_by_password', { payload: DEMO });
      expect(res.statusCode).toBe(200);
      expect(res.json().user.account_id).toBe(first.demo_account!.account_id);
      // Verified, so the demo can show withdrawals and cards.
      const limits = await call(core.app, '/api/withdraw/ps', { token: sessionToken(res) });
      expect(limits.json().limits).toMatchObject({ level: 1 });
    } finally {
      await core.close();
    }
  });

  it('production: no demo account and nothing printed', async () => {
    const data = join(dir, 'production');
    const seed = opsSeed(data, 'production');
    expect(seed).toEqual({
      seeded: ['currencies, site settings, menus, articles', 'rates and transfer limits', 'withdrawal auto-approval limits', 'withdrawal four-eyes amounts'],
    });
    const core = await start(data, 'production');
    try {
      expect(core.lines.some((line) => JSON.stringify(line).includes(DEMO.password))).toBe(false);
      expect((await call(core.app, '/api/auth/login_by_password', { payload: DEMO })).statusCode).toBe(401);
    } finally {
      await core.close();
    }
  });
});
