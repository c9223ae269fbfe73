import Fastify, { LogController, type FastifyBaseLogger, type FastifyInstance, type RouteOptions } from 'fastify';
import { makeGenReqId } from '../src/request-id.ts';
import { oneLineRequestLogs } from '@obmen/shared';
import pg from 'pg';
import { randomBytes } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { inject } from 'vitest';
import app from '../src/app.ts';
import { loadConfig, type TConfig } from '../src/config.ts';
import { openDb, type Db } from '../src/db/index.ts';
import { openDocumentCipher, type TDocumentCipher } from '../src/domains/verification/cipher.ts';
import { seedDatabase } from '../src/seed/demo.ts';
import type { TTemplate } from './global-setup.ts';

export type TEngine = 'pglite' | 'postgres';

/** PGlite always; PostgreSQL too when TEST_DATABASE_URL names one (the test command sets it). */
export const ENGINES: TEngine[] = process.env.TEST_DATABASE_URL ? ['pglite', 'postgres'] : ['pglite'];

/**
 * Polls `probe` until it answers something truthy, and answers that; bounded, so a broken core
 * fails the test instead of hanging it. For what another process or connection does, which no
 * injected clock can drive.
 */
export async function until<T>(what: string, probe: () => T | null | undefined | false | Promise<T | null | undefined | false>, limitMs = 30_000): Promise<T> {
  const started = Date.now();
  for (;;) {
    const value = await probe();
    if (value) return value;
    if (Date.now() - started > limitMs) throw new Error(`${what}: not within ${limitMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/**
 * Holds the row locks `sql` (a SELECT … FOR UPDATE) takes, in a transaction of its own, until
 * release(); `waiting()` answers once some other statement of this database waits on a lock
 * (PostgreSQL: what a test stops a writer at).
 */
export async function holdRowLock(db: Db, sql: string, params: unknown[]) {
  let release!: () => void;
  let locked!: () => void;
  const isLocked = new Promise<void>((resolve) => {
    locked = resolve;
  });
  const holding = db.transaction(async (tx) => {
    await tx.query(sql, params);
    locked();
    await new Promise<void>((resolve) => {
      release = resolve;
    });
  });
  await isLocked;
  return {
    waiting: () =>
      until('a statement waiting on the lock', async () => {
        const [row] = await db.query<{ n: number }>(
          `SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock' AND query LIKE '%FOR UPDATE%'`,
        );
        return row!.n > 0;
      }),
    release: async () => {
      release();
      await holding;
    },
  };
}

const silent = { error: () => {}, warn: () => {}, info: () => {} };

const templates = new Map<TTemplate, Promise<Blob>>();
/** A PGlite data directory global-setup.ts dumped, read once per test file. */
function pgliteTemplate(template: TTemplate): Promise<Blob> {
  let blob = templates.get(template);
  if (!blob) templates.set(template, (blob = readFile(inject('pgliteTemplates')[template]).then((bytes) => new Blob([bytes]))));
  return blob;
}

/** Outside a vitest run (scripts/openapi-lint.ts builds a core too) there is no template: an empty database. */
const inVitest = () => process.env.VITEST === 'true';

/**
 * A fresh database, copied from a template global-setup.ts made (migrated, or also seeded as
 * build() seeds): PGlite in memory, or a new PostgreSQL database created beside TEST_DATABASE_URL
 * and dropped by `drop()`. Nothing is shared between test files.
 */
export async function openTestDb(
  engine: TEngine,
  poolSize = 16,
  timeouts: Partial<Pick<TConfig, 'DB_CONNECT_TIMEOUT_MS' | 'DB_STATEMENT_TIMEOUT_MS'>> = {},
  template: TTemplate = 'migrated',
): Promise<{ db: Db; url?: string; drop: () => Promise<void> }> {
  if (engine === 'pglite') {
    const db = await openDb({ DATA_DIR: 'memory://', DB_POOL_SIZE: 1 }, silent, inVitest() ? await pgliteTemplate(template) : undefined);
    return { db, drop: () => db.close() };
  }
  const admin = new URL(process.env.TEST_DATABASE_URL!);
  const name = `obmen_test_${randomBytes(6).toString('hex')}`;
  const adminClient = new pg.Client({ connectionString: admin.href });
  await adminClient.connect();
  await adminClient.query(`CREATE DATABASE ${name}${inVitest() ? ` TEMPLATE ${inject('postgresTemplates')[template]}` : ''}`);
  await adminClient.end();
  const url = new URL(admin.href);
  url.pathname = `/${name}`;
  const db = await openDb({ DATABASE_URL: url.href, DATA_DIR: '', DB_POOL_SIZE: poolSize, ...timeouts }, silent);
  return {
    db,
    url: url.href,
    async drop() {
      await db.close();
      const client = new pg.Client({ connectionString: admin.href });
      await client.connect();
      await client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await client.end();
    },
  };
}

export const TEST_SCRYPT_LN = 12;

/** The document key of test cores (unless a test brings its own): no key file is written into the checkout. */
const TEST_DOCUMENT_KEY = randomBytes(32).toString('base64');

export function testConfig(overrides: Partial<Record<keyof TConfig, string>> = {}): TConfig {
  // Generous database waits: a test machine under load must not turn a slow moment into a 503.
  const waits = { DB_CONNECT_TIMEOUT_MS: '30000', DB_STATEMENT_TIMEOUT_MS: '30000' };
  // Cheap password hashes: a sign-up and the demo account of every fresh database each cost a
  // full OWASP scrypt (~0.4 s of a core) otherwise. security.test.ts checks the production cost;
  // an app built as production or development keeps it (the config refuses less there).
  const cost = (overrides.NODE_ENV ?? 'test') === 'test' ? { PASSWORD_SCRYPT_LN: String(TEST_SCRYPT_LN) } : {};
  // No timed job runs on its own: a test drives the ones it needs (app.jobs.runDue/runJob) with its clock.
  return loadConfig({
    NODE_ENV: 'test',
    LOG_LEVEL: 'silent',
    DATA_DIR: 'memory://',
    DOCUMENT_KEY: TEST_DOCUMENT_KEY,
    JOBS: 'none',
    ...waits,
    ...cost,
    ...overrides,
  });
}

/** The document cipher of a core built by `build` without a DOCUMENT_KEY of its own (what payouts unseal card numbers with). */
export function testCipher(): TDocumentCipher {
  return openDocumentCipher(testConfig(), () => {});
}

/**
 * The database as the start scripts leave it before the core starts: `ops seed` (unless SEED=false),
 * so the catalogue, and outside production the demo account.
 */
export async function seedAsStarted(db: Db, config: TConfig): Promise<void> {
  if (config.SEED) await seedDatabase(db, config);
}

/** The real core app on a fresh database, seeded as a start seeds it (seedAsStarted), ready for `inject`. Close it with `close()`. */
export async function build(
  engine: TEngine,
  overrides: Partial<Record<keyof TConfig, string>> = {},
  options: { now?: () => Date; loggerInstance?: FastifyBaseLogger; onRoute?: (route: RouteOptions) => void } = {},
) {
  const { loggerInstance, onRoute, ...appOptions } = options;
  const config = testConfig(overrides);
  const { DB_CONNECT_TIMEOUT_MS, DB_STATEMENT_TIMEOUT_MS } = config;
  // A core seeded as the tests' template was is copied from it (its seed then finds everything there).
  const template = config.SEED && config.NODE_ENV === 'test' ? 'seeded' : 'migrated';
  const { db, url, drop } = await openTestDb(engine, 16, { DB_CONNECT_TIMEOUT_MS, DB_STATEMENT_TIMEOUT_MS }, template);
  // As server.ts: X-Forwarded-For and X-Request-Id count only from TRUST_PROXY (inject comes from 127.0.0.1).
  // A generous plugin timeout: migrations on a loaded shared machine may take longer than Fastify's 10 s.
  const logging = loggerInstance ? { loggerInstance } : { logger: false };
  const fastify = Fastify({
    ...logging,
    logController: oneLineRequestLogs(new LogController()),
    trustProxy: config.TRUST_PROXY,
    genReqId: makeGenReqId(config.TRUST_PROXY),
    pluginTimeout: 120_000,
  }) as unknown as FastifyInstance;
  if (onRoute) fastify.addHook('onRoute', onRoute);
  await fastify.register(app, { config, db, ...appOptions });
  await fastify.ready();
  // The app registers nothing that reads the catalogue at start, so seeding after it is as seeding before.
  await seedAsStarted(db, config);
  return {
    app: fastify,
    db,
    /** PostgreSQL: the database's URL (a second core's pool can open it). */
    url,
    async close() {
      await fastify.close();
      await drop();
    },
  };
}
