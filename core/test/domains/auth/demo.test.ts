import { describe, expect, it } from 'vitest';
import Fastify from 'fastify';
import { Writable } from 'node:stream';
import app from '../../../src/app.ts';
import { testConfig } from '../../helpers.ts';
import { openDb } from '../../../src/db/index.ts';
import { DEMO, call, sessionToken } from '../../auth-helpers.ts';

/** The core as server.ts starts it, with its log captured. */
async function start(nodeEnv: 'development' | 'production') {
  const lines: Array<{ msg: string; [key: string]: unknown }> = [];
  const stream = new Writable({
    write(chunk: Buffer, _encoding, done) {
      for (const line of chunk.toString('utf8').split('\n').filter(Boolean)) lines.push(JSON.parse(line));
      done();
    },
  });
  const db = await openDb({ DATA_DIR: 'memory://', DB_POOL_SIZE: 1 }, { error: () => {}, warn: () => {}, info: () => {} });
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

describe('demo account', () => {
  it('development: printed once at start-up with its password, and it signs in', async () => {
    const core = await start('development');
    try {
      const printed = core.lines.filter((line) => line.msg.includes('demo account'));
      expect(printed).toHaveLength(1);
      expect(printed[0]).toMatchObject({ email: DEMO.email, password: DEMO.password });
      expect(printed[0]!.msg).toContain(`${DEMO.email} / ${DEMO.password}`);
      const res = await call(core.app, '/api/auth/login_by_password', { payload: DEMO });
      expect(res.statusCode).toBe(200);
      expect(res.json().user.account_id).toBe(printed[0]!.account_id);
      // Verified, so the demo can show withdrawals and cards.
      const limits = await call(core.app, '/api/withdraw/ps', { token: sessionToken(res) });
      expect(limits.json().limits).toMatchObject({ level: 1 });
    } finally {
      await core.close();
    }
  });

  it('production: no demo account and nothing printed', async () => {
    const core = await start('production');
    try {
      expect(core.lines.some((line) => JSON.stringify(line).includes(DEMO.password))).toBe(false);
      expect((await call(core.app, '/api/auth/login_by_password', { payload: DEMO })).statusCode).toBe(401);
    } finally {
      await core.close();
    }
  });
});
