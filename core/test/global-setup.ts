import { PGlite } from '@electric-sql/pglite';
import pg from 'pg';
import { randomBytes } from 'node:crypto';
import { rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TestProject } from 'vitest/node';
import { openDb, type Db, type Queryable } from '../src/db/index.ts';
import { migrate } from '../src/db/migrate.ts';
import { seedDatabase } from '../src/seed/demo.ts';

/*
 * The databases every test starts from, made once per run (helpers.ts openTestDb copies them):
 * an empty PGlite costs an initdb and 100-odd migrations, and the seed another second or two,
 * about 5 s of a CPU per database, and a test file opens several. PGlite starts from a dump of
 * a data directory, PostgreSQL creates each test database from a template database. Made per
 * run, never kept: the SQL may have changed, and the seed's rows carry the time they were made.
 */

export type TTemplate = 'migrated' | 'seeded';

declare module 'vitest' {
  export interface ProvidedContext {
    /** Tars of PGlite data directories: migrated, and seeded as a test core's start seeds it. */
    pgliteTemplates: Record<TTemplate, string>;
    /** The same as PostgreSQL databases beside TEST_DATABASE_URL; '' without one. */
    postgresTemplates: Record<TTemplate, string>;
  }
}

/** What build() seeds: `ops seed` of a core with testConfig()'s NODE_ENV. */
const seedAsTests = (db: Db) => seedDatabase(db, { NODE_ENV: 'test', SANDBOX_PROVIDERS_IN_PRODUCTION: false });

/** PGlite's own handle, as much of a Db as migrate() and the seed use. */
function asDb(pglite: PGlite): Db {
  const queryable = (runner: Pick<PGlite, 'query' | 'exec'>): Queryable => ({
    query: async (sql, params) => (await runner.query(typeof sql === 'string' ? sql : sql.text, params)).rows as never,
    exec: async (sql) => void (await runner.exec(sql)),
    announce: () => {},
  });
  return { engine: 'pglite', ...queryable(pglite), transaction: (work) => pglite.transaction((tx) => work(queryable(tx))) } as Db;
}

async function pgliteTemplates(run: string): Promise<Record<TTemplate, string>> {
  const pglite = await PGlite.create('memory://');
  const db = asDb(pglite);
  const dump = async (template: TTemplate) => {
    const file = join(tmpdir(), `obmen-pglite-${template}-${run}.tar`);
    await writeFile(file, Buffer.from(await (await pglite.dumpDataDir('none')).arrayBuffer()));
    return file;
  };
  await migrate(db);
  const migrated = await dump('migrated');
  await seedAsTests(db);
  const seeded = await dump('seeded');
  await pglite.close();
  return { migrated, seeded };
}

async function postgresTemplates(admin: pg.Client, run: string): Promise<Record<TTemplate, string>> {
  const names = { migrated: `obmen_template_migrated_${run}`, seeded: `obmen_template_seeded_${run}` };
  const open = async (name: string) => {
    const url = new URL(process.env.TEST_DATABASE_URL!);
    url.pathname = `/${name}`;
    return openDb({ DATABASE_URL: url.href, DATA_DIR: '', DB_POOL_SIZE: 1 }, { error: () => {}, warn: () => {}, info: () => {} });
  };
  await admin.query(`CREATE DATABASE ${names.migrated}`);
  const migrated = await open(names.migrated);
  await migrate(migrated);
  await migrated.close();
  await admin.query(`CREATE DATABASE ${names.seeded} TEMPLATE ${names.migrated}`);
  const seeded = await open(names.seeded);
  await seedAsTests(seeded);
  await seeded.close();
  return names;
}

export default async function setup(project: TestProject) {
  const run = randomBytes(6).toString('hex');
  const admin = process.env.TEST_DATABASE_URL ? new pg.Client({ connectionString: process.env.TEST_DATABASE_URL }) : null;
  await admin?.connect();
  const [pglite, postgres] = await Promise.all([pgliteTemplates(run), admin ? postgresTemplates(admin, run) : { migrated: '', seeded: '' }]);
  project.provide('pgliteTemplates', pglite);
  project.provide('postgresTemplates', postgres);
  return async () => {
    await Promise.all(Object.values(pglite).map((file) => rm(file, { force: true })));
    if (admin) {
      for (const name of Object.values(postgres)) await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await admin.end();
    }
  };
}
