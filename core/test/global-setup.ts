import { PGlite } from '@electric-sql/pglite';
import pg from 'pg';
import { createHash, randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { readFile, readdir, rename, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TestProject } from 'vitest/node';
import type { Db, Queryable } from '../src/db/index.ts';
import { FUNCTIONS_DIR, MIGRATIONS_DIR, migrate } from '../src/db/migrate.ts';

/*
 * One migrated database per run, copied by every test that opens one (helpers.ts openTestDb):
 * an empty PGlite costs an initdb and 100-odd migrations, about 3 s of a CPU, and a test file
 * opens several. PGlite starts from a dump of the migrated data directory; PostgreSQL creates
 * each test database from a migrated template database. Both are named by a hash of the SQL,
 * so a changed migration makes a new one and a run never starts from stale SQL.
 */

declare module 'vitest' {
  export interface ProvidedContext {
    /** A tar of a migrated PGlite data directory. */
    pgliteTemplate: string;
    /** A migrated PostgreSQL database beside TEST_DATABASE_URL, to create test databases from; '' without TEST_DATABASE_URL. */
    postgresTemplate: string;
  }
}

async function sqlHash(): Promise<string> {
  const hash = createHash('sha256');
  for (const dir of [MIGRATIONS_DIR, FUNCTIONS_DIR])
    for (const file of (await readdir(dir)).filter((name) => name.endsWith('.sql')).sort()) hash.update(file).update(await readFile(join(dir, file)));
  return hash.digest('hex').slice(0, 16);
}

/** PGlite's own handle, as much of a Db as migrate() uses. */
function asDb(pglite: PGlite): Db {
  const queryable = (runner: Pick<PGlite, 'query' | 'exec'>): Queryable => ({
    query: async (sql, params) => (await runner.query(typeof sql === 'string' ? sql : sql.text, params)).rows as never,
    exec: async (sql) => void (await runner.exec(sql)),
    announce: () => {},
  });
  return { ...queryable(pglite), transaction: (work) => pglite.transaction((tx) => work(queryable(tx))) } as Db;
}

async function pgliteTemplate(hash: string): Promise<string> {
  const file = join(tmpdir(), `obmen-pglite-template-${hash}.tar`);
  if (existsSync(file)) return file;
  const pglite = await PGlite.create('memory://');
  await migrate(asDb(pglite));
  const dump = await pglite.dumpDataDir('none');
  await pglite.close();
  // Written aside and renamed: a run beside this one never reads half a file.
  const partial = `${file}.${randomBytes(4).toString('hex')}`;
  await writeFile(partial, Buffer.from(await dump.arrayBuffer()));
  await rename(partial, file);
  return file;
}

async function postgresTemplate(hash: string): Promise<string> {
  const admin = process.env.TEST_DATABASE_URL;
  if (!admin) return '';
  const name = `obmen_template_${hash}`;
  const client = new pg.Client({ connectionString: admin });
  await client.connect();
  try {
    const [exists] = (await client.query('SELECT 1 FROM pg_database WHERE datname = $1', [name])).rows;
    if (exists) return name;
    // Built under a name of its own and renamed: a run beside this one never copies half a template.
    const partial = `obmen_template_partial_${randomBytes(4).toString('hex')}`;
    await client.query(`CREATE DATABASE ${partial}`);
    const url = new URL(admin);
    url.pathname = `/${partial}`;
    const { openDb } = await import('../src/db/index.ts');
    const db = await openDb({ DATABASE_URL: url.href, DATA_DIR: '', DB_POOL_SIZE: 1 }, { error: () => {}, warn: () => {}, info: () => {} });
    await migrate(db);
    await db.close();
    try {
      await client.query(`ALTER DATABASE ${partial} RENAME TO ${name}`);
    } catch (err) {
      // Another run made it first.
      await client.query(`DROP DATABASE IF EXISTS ${partial} WITH (FORCE)`);
      if ((err as { code?: string }).code !== '42P04') throw err;
    }
    return name;
  } finally {
    await client.end();
  }
}

export default async function setup(project: TestProject) {
  const hash = await sqlHash();
  const [pglite, postgres] = await Promise.all([pgliteTemplate(hash), postgresTemplate(hash)]);
  project.provide('pgliteTemplate', pglite);
  project.provide('postgresTemplate', postgres);
}
