import { randomBytes } from 'node:crypto';
import { Writable } from 'node:stream';
import pino from 'pino';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../../src/config.ts';
import { build, testConfig } from '../../helpers.ts';
import { seedDatabase } from '../../../src/seed/demo.ts';

const SECRET = 'a-production-looking-sandbox-secret-0123456789';
const PRODUCTION = { NODE_ENV: 'production', DOCUMENT_KEY: randomBytes(32).toString('base64') } as const;

/** The app built as production on a fresh PGlite, with its log lines captured, then `ops seed`'s work and answer. */
async function buildProduction(overrides: Record<string, string>) {
  const lines: string[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _encoding, callback) {
      lines.push(...chunk.toString('utf8').split('\n').filter(Boolean));
      callback();
    },
  });
  const ctx = await build('pglite', { ...PRODUCTION, ...overrides, SEED: 'false' }, { loggerInstance: pino({ level: 'info' }, stream) });
  const seed = await seedDatabase(ctx.db, testConfig({ ...PRODUCTION, ...overrides }));
  const log = () => lines.map((line) => JSON.parse(line) as { level: number; msg: string });
  const count = async (table: string) => (await ctx.db.query<{ n: number }>(`SELECT count(*)::int AS n FROM ${table}`))[0]!.n;
  return { ctx, log, count, seed };
}

describe('sandbox providers in production', () => {
  it.each(['WEBHOOK_SECRET_SANDBOX_CARD', 'WEBHOOK_SECRET_SANDBOX_BANK', 'WEBHOOK_SECRET_SANDBOX_CHAIN', 'CARD_ISSUER_SECRET_SANDBOX'])(
    'production refuses to start with %s set (a sandbox enabled), unless the staging switch is set',
    (name) => {
      expect(() => loadConfig({ ...PRODUCTION, [name]: SECRET })).toThrow(
        new RegExp(`Invalid core configuration: ${name}: enables a sandbox provider .*SANDBOX_PROVIDERS_IN_PRODUCTION=true`),
      );
      expect(loadConfig({ ...PRODUCTION, [name]: SECRET, SANDBOX_PROVIDERS_IN_PRODUCTION: 'true' })[name as 'NODE_ENV']).toBe(SECRET);
      // Outside production a sandbox is what the secret is for.
      expect(() => loadConfig({ NODE_ENV: 'development', [name]: SECRET })).not.toThrow();
    },
  );

  it('the production seed has no sandbox payment system, no sandbox card product, no demo account, and its answer says what it seeded', async () => {
    const { ctx, log, count, seed } = await buildProduction({});
    try {
      expect(await count('payment_systems')).toBe(0);
      expect(await count('card_products')).toBe(0);
      expect(await count('users')).toBe(0);
      expect(await count('currencies')).toBeGreaterThan(0);
      expect(seed).toEqual({
        seeded: ['currencies, site settings, menus, articles', 'rates and transfer limits', 'withdrawal auto-approval limits', 'withdrawal four-eyes amounts'],
      });
      expect(log().some((line) => /demo|sandbox/i.test(line.msg))).toBe(false);
    } finally {
      await ctx.close();
    }
  });

  it('with SANDBOX_PROVIDERS_IN_PRODUCTION=true a production core starts with its sandboxes and catalogue, and says so as an error', async () => {
    const { ctx, log, count } = await buildProduction({ WEBHOOK_SECRET_SANDBOX_CARD: SECRET, SANDBOX_PROVIDERS_IN_PRODUCTION: 'true' });
    try {
      const warning = log().find((line) => line.msg.includes('SANDBOX_PROVIDERS_IN_PRODUCTION=true'));
      expect(warning?.level).toBe(50);
      expect(await count(`payment_systems WHERE provider LIKE 'sandbox-%'`)).toBeGreaterThan(0);
      expect(await count(`card_products WHERE issuer = 'sandbox'`)).toBeGreaterThan(0);
      expect(await count('users')).toBe(0);
    } finally {
      await ctx.close();
    }
  });
});
