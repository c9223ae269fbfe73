import { execFileSync, spawnSync } from 'node:child_process';
import { chmodSync, chownSync, existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import pg from 'pg';
import { freePort } from '../../scripts/supervise.ts';

/**
 * A PostgreSQL server of the test's own, for tests that stop, start or crash the database (never
 * the shared one). As scripts/pg-throwaway.sh: initdb into a temp dir, a free 127.0.0.1 port,
 * durability off; as root the server runs as the "postgres" user. Null when no server binaries
 * (or, as root, no postgres user) are installed: the test command installs them when it needs a
 * throw-away server itself.
 */
export type TThrowawayPostgres = {
  url: string;
  start(): void;
  /** A fast shutdown: open connections are terminated (57P01), new ones refused. */
  stop(): void;
  dispose(): void;
};

function serverBinaries(): string | null {
  const root = '/usr/lib/postgresql';
  const versions = existsSync(root) ? readdirSync(root).sort((a, b) => Number(b) - Number(a)) : [];
  for (const version of versions) if (existsSync(join(root, version, 'bin', 'pg_ctl'))) return join(root, version, 'bin');
  const which = spawnSync('sh', ['-c', 'command -v pg_ctl'], { encoding: 'utf8' });
  return which.status === 0 ? join(which.stdout.trim(), '..') : null;
}

export async function startThrowawayPostgres(): Promise<TThrowawayPostgres | null> {
  const bin = serverBinaries();
  if (!bin) return null;
  const asRoot = process.getuid?.() === 0;
  // initdb refuses root: the server then runs as "postgres", which Debian's package creates.
  if (asRoot && spawnSync('id', ['-u', 'postgres']).status !== 0) return null;
  const dir = mkdtempSync('/tmp/obmen-pg-test.');
  mkdirSync(join(dir, 'sock'));
  chmodSync(dir, 0o700);
  if (asRoot) {
    const uid = Number(execFileSync('id', ['-u', 'postgres'], { encoding: 'utf8' }).trim());
    const gid = Number(execFileSync('id', ['-g', 'postgres'], { encoding: 'utf8' }).trim());
    chownSync(dir, uid, gid);
    chownSync(join(dir, 'sock'), uid, gid);
  }
  const run = (command: string, args: string[]) =>
    execFileSync(asRoot ? 'runuser' : command, asRoot ? ['-u', 'postgres', '--', command, ...args] : args, { stdio: 'pipe', timeout: 120_000 });
  const port = await freePort();
  const data = join(dir, 'data');
  run(join(bin, 'initdb'), ['-D', data, '-U', 'postgres', '-A', 'trust', '-E', 'UTF8', '--locale=C', '--no-sync']);
  const options = `-c listen_addresses=127.0.0.1 -c port=${port} -c unix_socket_directories=${join(dir, 'sock')} -c max_connections=200 -c fsync=off -c synchronous_commit=off -c full_page_writes=off`;
  const pgCtl = (...args: string[]) => run(join(bin, 'pg_ctl'), ['-D', data, '-l', join(dir, 'server.log'), '-w', '-t', '60', ...args]);
  const server: TThrowawayPostgres = {
    url: `postgres://postgres@127.0.0.1:${port}/postgres`,
    start: () => void pgCtl('-o', options, 'start'),
    stop: () => void pgCtl('-m', 'fast', 'stop'),
    dispose() {
      if (existsSync(join(data, 'postmaster.pid'))) {
        try {
          pgCtl('-m', 'immediate', 'stop');
        } catch {
          // already gone
        }
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
  server.start();
  return server;
}

/** A new empty database on that server, for one test file. */
export async function createDatabase(serverUrl: string, name: string): Promise<string> {
  const client = new pg.Client({ connectionString: serverUrl });
  await client.connect();
  await client.query(`CREATE DATABASE ${name}`);
  await client.end();
  const url = new URL(serverUrl);
  url.pathname = `/${name}`;
  return url.href;
}
