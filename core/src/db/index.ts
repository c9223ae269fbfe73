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
  /**
   * These users have new rows in `events` (domains/events): the realtime bus is told once the
   * work is committed (inside a transaction: after its COMMIT, never on rollback; outside one:
   * at once, the statement having committed on its own).
   */
  announce?(userIds: readonly string[]): void;
}

export interface Db extends Queryable {
  readonly engine: 'pglite' | 'postgres';
  transaction<T>(work: (tx: Queryable) => Promise<T>): Promise<T>;
  close(): Promise<void>;
  /**
   * LISTEN on a channel (its own connection on PostgreSQL, re-opened after a loss; `onGap` is
   * called after each re-open, since notifications sent meanwhile are lost). Returns the stop.
   */
  listen(channel: string, onPayload: (payload: string) => void, onGap: () => void): Promise<() => Promise<void>>;
  /** Who hears announce(): the events bus of this core (domains/realtime/bus.ts); none by default. */
  onAnnounce: ((userIds: readonly string[]) => void) | null;
}

/** A transaction's announce(): collects users, handed on only after COMMIT. */
function announcements(db: Pick<Db, 'onAnnounce'>) {
  const users = new Set<string>();
  return {
    announce: (userIds: readonly string[]) => {
      for (const id of userIds) users.add(id);
    },
    committed: () => {
      if (users.size) db.onAnnounce?.([...users]);
    },
  };
}

type Logger = {
  error: (obj: object, msg: string) => void;
  warn: (obj: object, msg: string) => void;
  info: (obj: object, msg: string) => void;
};

type TDbConfig = Pick<TConfig, 'DATABASE_URL' | 'DATA_DIR' | 'DB_POOL_SIZE'> & Partial<Pick<TConfig, 'DB_CONNECT_TIMEOUT_MS' | 'DB_STATEMENT_TIMEOUT_MS'>>;

/**
 * `from` (PGlite only): a dump of a data directory (PGlite's dumpDataDir) to start from instead of
 * an empty one; the tests start every database from one migrated dump.
 */
export async function openDb(config: TDbConfig, log: Logger, from?: Blob): Promise<Db> {
  return config.DATABASE_URL ? openPostgres(config.DATABASE_URL, config, log) : openPglite(config.DATA_DIR, from);
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
  const db: Db = {
    engine: 'postgres',
    onAnnounce: null,
    query: (sql, params) => guard(() => run(pool, sql, params)),
    exec: (sql) => guard(async () => void (await pool.query(sql))),
    announce: (userIds) => db.onAnnounce?.(userIds),
    async transaction(work) {
      const client = await guard(() => pool.connect());
      let broken: unknown;
      try {
        await guard(() => client.query('BEGIN'));
        const told = announcements(db);
        const result = await work({
          query: (sql, params) => guard(() => run(client, sql, params)),
          exec: (sql) => guard(async () => void (await client.query(sql))),
          announce: told.announce,
        });
        await guard(() => client.query('COMMIT'));
        told.committed();
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
    listen: (channel, onPayload, onGap) => listenPostgres(pg, url, channel, onPayload, onGap, log, outage),
  };
  return db;
}

async function openPglite(dataDir: string, from?: Blob): Promise<Db> {
  const { PGlite } = await import('@electric-sql/pglite');
  const { mkdir } = await import('node:fs/promises');
  // "memory://" keeps everything in memory: tests and throw-away runs.
  if (!dataDir.startsWith('memory://')) await mkdir(dataDir, { recursive: true });
  const db = await PGlite.create(dataDir, from ? { loadDataDir: from } : {});
  // Queries take a leaner path than PGlite's query(), reading values as node-postgres does (pglite.ts).
  const { leanQueries } = await import('./pglite.ts');
  const lean = leanQueries(db);
  const handle: Db = {
    engine: 'pglite',
    onAnnounce: null,
    query: lean.outside,
    exec: async (sql) => void (await db.exec(sql)),
    announce: (userIds) => handle.onAnnounce?.(userIds),
    async transaction(work) {
      const told = announcements(handle);
      const result = await db.transaction((tx) =>
        work({
          query: lean.inside,
          exec: async (sql) => void (await tx.exec(sql)),
          announce: told.announce,
        }),
      );
      told.committed();
      return result;
    },
    close: () => db.close(),
    async listen(channel, onPayload) {
      const stop = await db.listen(channel, onPayload);
      return async () => {
        if (!db.closed) await stop();
      };
    },
  };
  return handle;
}

/** A dedicated LISTEN connection that comes back after a loss (1 s, then up to 10 s apart). */
async function listenPostgres(
  pg: typeof import('pg').default,
  url: string,
  channel: string,
  onPayload: (payload: string) => void,
  onGap: () => void,
  log: Logger,
  outage: ReturnType<typeof trackOutage>,
): Promise<() => Promise<void>> {
  let stopped = false;
  let client: import('pg').Client | null = null;
  let timer: NodeJS.Timeout | undefined;
  let delay = 1000;
  const open = async (first: boolean): Promise<void> => {
    const next = new pg.Client({ connectionString: url });
    next.on('notification', (message) => {
      if (message.channel === channel) onPayload(message.payload ?? '');
    });
    next.on('error', (err) => {
      if (client !== next) return;
      // A lost database is one line per outage, whichever connection sees it first (outage.ts).
      if (isConnectionFailure(err)) outage.failed(err);
      else log.warn({ err }, 'LISTEN connection lost');
      retry();
    });
    next.on('end', () => {
      if (client === next) retry();
    });
    try {
      await next.connect();
      await next.query(`LISTEN ${channel}`);
    } catch (err) {
      next.end().catch(() => {});
      if (first) throw err;
      retry();
      return;
    }
    if (stopped) return void next.end().catch(() => {});
    client = next;
    delay = 1000;
    if (!first) onGap();
  };
  const retry = () => {
    const dead = client;
    client = null;
    dead?.end().catch(() => {});
    if (stopped || timer) return;
    timer = setTimeout(() => {
      timer = undefined;
      void open(false);
    }, delay);
    timer.unref();
    delay = Math.min(delay * 2, 10_000);
  };
  await open(true);
  return async () => {
    stopped = true;
    clearTimeout(timer);
    await client?.end().catch(() => {});
  };
}
