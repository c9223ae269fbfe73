import type { Pool, PoolClient } from 'pg';
import type { TConfig } from '../config.ts';
import { databaseUnavailable, isConnectionFailure, trackOutage } from './outage.ts';

export type TRow = Record<string, unknown>;

/**
 * A query run so often that PostgreSQL should parse and plan it once per connection rather
 * than once per call (a named prepared statement): the session lookup and the money calls.
 * Only for fixed SQL text: every name stays prepared for the life of the connection.
 */
export type TStatement = { readonly name: string; readonly text: string };

export function statement(name: string, text: string): TStatement {
  return { name, text };
}

/** What both engines offer: the same SQL runs on PGlite and on PostgreSQL. */
export interface Queryable {
  query<T extends TRow = TRow>(sql: string | TStatement, params?: unknown[]): Promise<T[]>;
  /** Several statements, no parameters: migrations and the SQL functions. */
  exec(sql: string): Promise<void>;
}

export interface Db extends Queryable {
  readonly engine: 'pglite' | 'postgres';
  transaction<T>(work: (tx: Queryable) => Promise<T>): Promise<T>;
  close(): Promise<void>;
}

type Logger = {
  error: (obj: object, msg: string) => void;
  warn: (obj: object, msg: string) => void;
  info: (obj: object, msg: string) => void;
};

type TDbConfig = Pick<TConfig, 'DATABASE_URL' | 'DATA_DIR' | 'DB_POOL_SIZE'> & Partial<Pick<TConfig, 'DB_CONNECT_TIMEOUT_MS' | 'DB_STATEMENT_TIMEOUT_MS'>>;

export async function openDb(config: TDbConfig, log: Logger): Promise<Db> {
  return config.DATABASE_URL ? openPostgres(config.DATABASE_URL, config, log) : openPglite(config.DATA_DIR);
}

async function openPostgres(url: string, config: TDbConfig, log: Logger): Promise<Db> {
  const { default: pg } = await import('pg');
  // numeric and int8 stay strings: money never passes through a float.
  const pool = new pg.Pool({
    connectionString: url,
    max: config.DB_POOL_SIZE,
    // Bounds both opening a connection and waiting for a free one of the pool.
    connectionTimeoutMillis: config.DB_CONNECT_TIMEOUT_MS ?? 0,
    // Server-side: a statement running longer is cancelled and its transaction rolls back, and
    // a transaction left idle that long (a stalled process) ends and frees its row locks.
    statement_timeout: config.DB_STATEMENT_TIMEOUT_MS ?? 0,
    idle_in_transaction_session_timeout: config.DB_STATEMENT_TIMEOUT_MS ?? 0,
  });
  const outage = trackOutage(log);
  // A lost connection becomes one 503 per request and one log line per outage (outage.ts).
  const guard = async <T>(work: () => Promise<T>): Promise<T> => {
    try {
      const result = await work();
      outage.succeeded();
      return result;
    } catch (err) {
      if (!isConnectionFailure(err)) throw err;
      outage.failed(err);
      throw databaseUnavailable(err);
    }
  };
  // An idle client that loses its connection emits here; without a listener the process dies.
  pool.on('error', (err) => (isConnectionFailure(err) ? outage.failed(err) : log.error({ err }, 'postgres pool client error')));
  const run = async <T extends TRow>(client: Pool | PoolClient, sql: string | TStatement, params?: unknown[]) =>
    (await (typeof sql === 'string' ? client.query(sql, params) : client.query({ name: sql.name, text: sql.text, values: params }))).rows as T[];
  return {
    engine: 'postgres',
    query: (sql, params) => guard(() => run(pool, sql, params)),
    exec: (sql) => guard(async () => void (await pool.query(sql))),
    async transaction(work) {
      const client = await guard(() => pool.connect());
      let broken: unknown;
      try {
        await guard(() => client.query('BEGIN'));
        const result = await work({
          query: (sql, params) => guard(() => run(client, sql, params)),
          exec: (sql) => guard(async () => void (await client.query(sql))),
        });
        await guard(() => client.query('COMMIT'));
        return result;
      } catch (err) {
        await client.query('ROLLBACK').catch((rollbackErr: unknown) => (broken = rollbackErr));
        throw err;
      } finally {
        // A connection that could not even roll back is dropped, not handed to the next caller.
        client.release(broken instanceof Error ? broken : undefined);
      }
    },
    close: () => pool.end(),
  };
}

async function openPglite(dataDir: string): Promise<Db> {
  const { PGlite } = await import('@electric-sql/pglite');
  const { mkdir } = await import('node:fs/promises');
  // "memory://" keeps everything in memory: tests and throw-away runs.
  if (!dataDir.startsWith('memory://')) await mkdir(dataDir, { recursive: true });
  const db = await PGlite.create(dataDir);
  // Queries take a leaner path than PGlite's query(), reading values as node-postgres does (pglite.ts).
  const { leanQueries } = await import('./pglite.ts');
  const lean = leanQueries(db);
  return {
    engine: 'pglite',
    query: lean.outside,
    exec: async (sql) => void (await db.exec(sql)),
    transaction: (work) =>
      db.transaction((tx) =>
        work({
          query: lean.inside,
          exec: async (sql) => void (await tx.exec(sql)),
        }),
      ),
    close: () => db.close(),
  };
}
