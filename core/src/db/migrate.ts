import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Db, Queryable } from './index.ts';

const MIGRATIONS_DIR = new URL('../../migrations/', import.meta.url).pathname;
export const FUNCTIONS_DIR = new URL('../../sql/functions/', import.meta.url).pathname;
/** Any constant: one migrator at a time across every core instance on one database. */
const MIGRATION_LOCK = 727_001;

/**
 * Applies every versioned .sql file not yet applied, in name order, then the current SQL
 * functions and triggers (core/sql/functions, every time: each file is idempotent), all in one
 * transaction. Returns the migrations applied.
 */
export async function migrate(db: Db, dir = MIGRATIONS_DIR, functionsDir = FUNCTIONS_DIR): Promise<string[]> {
  const files = await sqlFiles(dir);
  return db.transaction(async (tx) => {
    // A migration may rightly run longer than a request's statement timeout (DB_STATEMENT_TIMEOUT_MS).
    await tx.exec('SET LOCAL statement_timeout = 0');
    await tx.query('SELECT pg_advisory_xact_lock($1)', [MIGRATION_LOCK]);
    await tx.query(`CREATE TABLE IF NOT EXISTS schema_migrations (
      version text PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())`);
    const done = new Set((await tx.query<{ version: string }>('SELECT version FROM schema_migrations')).map((row) => row.version));
    const applied: string[] = [];
    for (const file of files) {
      if (done.has(file)) continue;
      await tx.exec(await readFile(join(dir, file), 'utf8'));
      await tx.query('INSERT INTO schema_migrations (version) VALUES ($1)', [file]);
      applied.push(file);
    }
    await applyFunctions(tx, functionsDir);
    return applied;
  });
}

/** The current definition of every SQL function and trigger, in name order. */
export async function applyFunctions(tx: Queryable, dir = FUNCTIONS_DIR): Promise<void> {
  for (const file of await sqlFiles(dir)) await tx.exec(await readFile(join(dir, file), 'utf8'));
}

async function sqlFiles(dir: string): Promise<string[]> {
  return (await readdir(dir)).filter((name) => name.endsWith('.sql')).sort();
}
