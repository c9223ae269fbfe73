/**
 * The realtime fan-out bench: the same events to BENCH_FANOUT_SOCKETS websockets
 * (2,000) through the BFF's /ws, and straight from the core's event stream
 * (/api/internal/events, one link per socket, as a BFF would open it).
 *
 * Servers: a fresh PostgreSQL database (beside BENCH_DATABASE_URL or TEST_DATABASE_URL), one
 * core and one BFF as child processes (bench-common.ts). Users: BENCH_FANOUT_USERS (200) with a
 * session each; socket i belongs to user i mod users. The bench itself writes the events, as
 * the core would: BENCH_FANOUT_ROUNDS (100) rounds, each one transaction recording one event per
 * user (event_record()) and one pg_notify naming them; each event carries its send time, so
 * every socket measures the latency of every message. Then it waits until every socket got
 * every event of its user (or 15 s pass without progress: the rest count as lost).
 *
 * Figures per path: messages/s (delivered messages / time from the first send to the last
 * receipt), p50/p99 latency, lost, and for the BFF its memory per idle socket (RSS growth of the
 * BFF process with all sockets open and idle, divided by their number). Targets: the relay
 * reaches at least 0.8x the direct messages/s, under 20 KB per idle socket, 0 lost.
 *
 * A pass of 20 rounds lasted about a second, and one pass of each path moved the ratio between
 * 0.5x and 1.5x from run to run on a quiet machine. A pass is therefore 100 rounds, and the paths run interleaved
 * BENCH_FANOUT_REPEATS times (direct, BFF, direct, BFF …; a fresh BFF process for each BFF pass,
 * so each memory figure starts from an empty process), and the table gives the medians, with
 * each pass's ratio beside them.
 *
 *   node scripts/bench-fanout.ts          (or BENCH_SUITES=fanout pnpm bench)
 *
 * Knobs: BENCH_FANOUT_SOCKETS, BENCH_FANOUT_USERS, BENCH_FANOUT_ROUNDS, BENCH_FANOUT_REPEATS (5), BENCH_FANOUT_OUT
 * (bench-fanout-results.json), SITE_DIST. Exit status 1 when a message was lost.
 */
import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { QUIET, cpuSeconds, envNumber, loadAverage, median, rssBytes, root, startServer, stopProcess, type TServer } from './bench-common.ts';
import { freshDatabase } from './bench-money.ts';

const SOCKETS = envNumber('BENCH_FANOUT_SOCKETS', 2000, { min: 1 });
const USERS = envNumber('BENCH_FANOUT_USERS', 200, { min: 1 });
const ROUNDS = envNumber('BENCH_FANOUT_ROUNDS', 100, { min: 1 });
const REPEATS = envNumber('BENCH_FANOUT_REPEATS', 5, { min: 1 });
const log = (message: string) => console.error(`[bench-fanout] ${message}`);

type TPathResult = {
  path: 'direct' | 'bff';
  sockets: number;
  expected: number;
  received: number;
  lost: number;
  messagesPerSecond: number;
  p50Ms: number;
  p99Ms: number;
  /** BFF only: RSS growth per idle socket, bytes. */
  bytesPerIdleSocket: number | null;
  /**
   * CPU time of the servers on the path (the core; the core and the BFF) from the first send to
   * the last receipt, per delivered message: unlike messages/s, hardly moved by other work on
   * the machine, so two runs compare even when the load average differs.
   */
  serverCpuUsPerMessage: number | null;
  /** The core's part of serverCpuUsPerMessage. */
  coreCpuUsPerMessage: number | null;
};

type TClient = { ws: WebSocket; user: number; got: number };

function percentile(sorted: number[], p: number): number {
  if (!sorted.length) return 0;
  return sorted[Math.min(sorted.length - 1, Math.floor((sorted.length * p) / 100))]!;
}

async function openAll(count: number, open: (i: number) => Promise<WebSocket>): Promise<WebSocket[]> {
  const out: WebSocket[] = [];
  // 100 handshakes at a time: a burst of 2,000 would only measure the accept queue.
  for (let start = 0; start < count; start += 100) {
    out.push(...(await Promise.all(Array.from({ length: Math.min(100, count - start) }, (_, k) => open(start + k)))));
  }
  return out;
}

function waitFor(ws: WebSocket, check: (data: Record<string, unknown>) => boolean, onOpen?: () => void): Promise<WebSocket> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error('socket handshake timed out')), 30_000);
    ws.onopen = () => onOpen?.();
    ws.onerror = () => reject(new Error('socket refused'));
    ws.onmessage = (message) => {
      if (!check(JSON.parse(String(message.data)) as Record<string, unknown>)) return;
      clearTimeout(timer);
      resolve(ws);
    };
  });
}

async function run(
  path: 'direct' | 'bff',
  core: TServer,
  bff: TServer,
  tokens: string[],
  userIds: string[],
  database: Awaited<ReturnType<typeof freshDatabase>>,
): Promise<TPathResult> {
  const rssBefore = path === 'bff' ? rssBytes(bff.pid) : null;
  const sockets = await openAll(SOCKETS, (i) => {
    const token = tokens[i % USERS]!;
    if (path === 'bff') {
      const ws = new WebSocket(`${bff.url.replace('http', 'ws')}/ws`, { headers: { origin: bff.url, cookie: `remember_token=${token}` } } as never);
      return waitFor(ws, (data) => data.type === 'hello');
    }
    const ws = new WebSocket(`${core.url.replace('http', 'ws')}/api/internal/events`);
    return waitFor(
      ws,
      (data) => data.op === 'ok',
      () => ws.send(JSON.stringify({ op: 'sub', sub: 1, token, since: null })),
    );
  });
  log(`${path}: ${sockets.length} sockets open`);
  await new Promise((resolve) => setTimeout(resolve, 2000));
  const rssIdle = path === 'bff' ? rssBytes(bff.pid) : null;

  const clients: TClient[] = sockets.map((ws, i) => ({ ws, user: i % USERS, got: 0 }));
  const latencies: number[] = [];
  let received = 0;
  let lastAt = 0;
  for (const client of clients) {
    client.ws.onmessage = (message) => {
      // Straight from the core, the browser's message follows the link header's newline (shared/src/realtime.ts).
      const text = String(message.data);
      const data = JSON.parse(text.slice(text.indexOf('\n') + 1)) as { type?: string; events?: Array<{ payload: { t: number } }> };
      if (data.type !== 'events') return;
      const now = Date.now();
      for (const event of data.events ?? []) {
        latencies.push(now - event.payload.t);
        client.got++;
        received++;
      }
      lastAt = now;
    };
  }

  const db = await database.open();
  const sorted = [...userIds].sort((a, b) => Number(a) - Number(b));
  const serverCpu = () => (cpuSeconds(core.pid) ?? Number.NaN) + (path === 'bff' ? (cpuSeconds(bff.pid) ?? Number.NaN) : 0);
  const cpuBefore = serverCpu();
  const coreBefore = cpuSeconds(core.pid) ?? Number.NaN;
  const startedAt = Date.now();
  try {
    for (let round = 0; round < ROUNDS; round++) {
      await db.transaction(async (tx) => {
        await tx.query(`SELECT event_record(u, 'unread_msgs', jsonb_build_object('t', $2::bigint)) FROM unnest($1::bigint[]) AS u`, [sorted, Date.now()]);
      });
      await db.query('SELECT pg_notify($1, $2)', ['obmen_events', JSON.stringify({ users: sorted })]);
    }
  } finally {
    await db.close();
  }
  const expected = SOCKETS * ROUNDS;
  let seen = -1;
  let stillSince = Date.now();
  while (received < expected) {
    if (received !== seen) {
      seen = received;
      stillSince = Date.now();
    } else if (Date.now() - stillSince > 15_000) break;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  const cpuUsed = serverCpu() - cpuBefore;
  const coreUsed = (cpuSeconds(core.pid) ?? Number.NaN) - coreBefore;
  for (const ws of sockets) ws.close();
  latencies.sort((a, b) => a - b);
  const seconds = Math.max(0.001, (lastAt - startedAt) / 1000);
  const result: TPathResult = {
    path,
    sockets: SOCKETS,
    expected,
    received,
    lost: expected - received,
    messagesPerSecond: Math.round(received / seconds),
    p50Ms: percentile(latencies, 50),
    p99Ms: percentile(latencies, 99),
    bytesPerIdleSocket: rssBefore !== null && rssIdle !== null ? Math.round((rssIdle - rssBefore) / SOCKETS) : null,
    serverCpuUsPerMessage: Number.isFinite(cpuUsed) && received ? Math.round((cpuUsed * 1e6) / received) : null,
    coreCpuUsPerMessage: Number.isFinite(coreUsed) && received ? Math.round((coreUsed * 1e6) / received) : null,
  };
  log(`${path}: ${JSON.stringify(result)}`);
  await new Promise((resolve) => setTimeout(resolve, 1000));
  return result;
}

export async function runFanoutBench(): Promise<TPathResult[]> {
  const siteDist = process.env.SITE_DIST ?? join(root, 'site/dist');
  if (!existsSync(join(siteDist, 'server', 'entry.mjs'))) throw new Error(`no site build at ${siteDist}: pnpm build first`);
  const database = await freshDatabase('postgres');
  let core: TServer | null = null;
  let bff: TServer | null = null;
  try {
    const { migrate } = await import('../core/src/db/migrate.ts');
    const { createFixtureUser } = await import('../core/test/fixtures.ts');
    const db = await database.open();
    const tokens: string[] = [];
    const userIds: string[] = [];
    try {
      await migrate(db);
      for (let i = 0; i < USERS; i++) {
        const user = await createFixtureUser(db);
        tokens.push(user.token);
        userIds.push(user.id);
      }
    } finally {
      await db.close();
    }
    // The periodic catch-up off: every delivery below comes from a notice.
    core = await startServer({
      name: 'core',
      script: 'core/src/server.ts',
      env: { ...QUIET, ...database.env, SEED: 'false', EVENTS_CHECK_MS: '60000' },
      health: '/api/health',
      pin: false,
    });
    const upstream = core.url;
    const startBff = () =>
      startServer({
        name: 'bff',
        script: 'bff/src/server.ts',
        // Every socket comes from this one address: the per-address cap must let them all in.
        env: { ...QUIET, UPSTREAM_URL: upstream, SITE_DIST: siteDist, WS_MAX_BUFFERED_BYTES: String(4 * 1024 * 1024), WS_MAX_PER_ADDRESS: String(SOCKETS) },
        health: '/local/healthcheck',
        nodeArgs: process.env.BENCH_FANOUT_BFF_NODE_ARGS?.split(' ').filter(Boolean) ?? [],
        pin: false,
      });
    const results: TPathResult[] = [];
    for (let pass = 0; pass < REPEATS; pass++) {
      bff = await startBff();
      results.push(await run('direct', core, bff, tokens, userIds, database));
      results.push(await run('bff', core, bff, tokens, userIds, database));
      await stopProcess(bff);
      bff = null;
    }
    return results;
  } finally {
    await stopProcess(bff);
    await stopProcess(core);
    await database.drop();
  }
}

/** The medians of a path's passes (lost: their sum). */
function medianOf(passes: TPathResult[]): TPathResult {
  const mid = (pick: (r: TPathResult) => number | null) => {
    const values = passes.map(pick).filter((v): v is number => v !== null);
    return values.length ? Math.round(median(values)) : null;
  };
  return {
    ...passes[0]!,
    expected: passes.reduce((sum, r) => sum + r.expected, 0),
    received: passes.reduce((sum, r) => sum + r.received, 0),
    lost: passes.reduce((sum, r) => sum + r.lost, 0),
    messagesPerSecond: mid((r) => r.messagesPerSecond)!,
    p50Ms: mid((r) => r.p50Ms)!,
    p99Ms: mid((r) => r.p99Ms)!,
    bytesPerIdleSocket: mid((r) => r.bytesPerIdleSocket),
    serverCpuUsPerMessage: mid((r) => r.serverCpuUsPerMessage),
    coreCpuUsPerMessage: mid((r) => r.coreCpuUsPerMessage),
  };
}

export function fanoutTable(passes: TPathResult[]): string {
  const direct = medianOf(passes.filter((r) => r.path === 'direct'));
  const relayed = medianOf(passes.filter((r) => r.path === 'bff'));
  const each = passes
    .filter((r) => r.path === 'bff')
    .map((r, i) => (r.messagesPerSecond / Math.max(1, passes.filter((d) => d.path === 'direct')[i]!.messagesPerSecond)).toFixed(2));
  return [
    `Medians of ${each.length} interleaved passes per path (messages: all passes); the BFF's messages/s over the direct pass just before it, pass by pass: ${each.join('x, ')}x`,
    '',
    '| Path | sockets | messages | messages/s | vs direct | p50 ms | p99 ms | lost | BFF KB per idle socket | server CPU µs per message | of which core | target |',
    '|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|',
    ...[direct, relayed].map((r) => {
      const ratio = r.messagesPerSecond / Math.max(1, direct.messagesPerSecond);
      const kb = r.bytesPerIdleSocket === null ? '-' : (r.bytesPerIdleSocket / 1024).toFixed(1);
      const target =
        r.path === 'bff'
          ? `>= 0.8x direct (${ratio >= 0.8 ? 'met' : 'MISSED'}), < 20 KB/socket (${(r.bytesPerIdleSocket ?? 0) < 20 * 1024 ? 'met' : 'MISSED'}), 0 lost`
          : '0 lost';
      return `| ${r.path === 'bff' ? 'through the BFF /ws' : 'straight from the core'} | ${r.sockets} | ${r.received} | ${r.messagesPerSecond} | ${ratio.toFixed(2)}x | ${r.p50Ms} | ${r.p99Ms} | ${r.lost} | ${kb} | ${r.serverCpuUsPerMessage ?? '-'} | ${r.coreCpuUsPerMessage ?? '-'} | ${target} |`;
    }),
  ].join('\n');
}

if (import.meta.main) {
  const results = await runFanoutBench();
  console.log(
    `\nObmen realtime fan-out: ${SOCKETS} sockets, ${USERS} users, ${ROUNDS} events per user (one transaction + one NOTIFY per round), PostgreSQL LISTEN/NOTIFY, Node ${process.version}, load average ${loadAverage() ?? '?'}\n\n${fanoutTable(results)}\n`,
  );
  const out = process.env.BENCH_FANOUT_OUT ?? join(root, 'bench-fanout-results.json');
  writeFileSync(
    out,
    `${JSON.stringify({ date: new Date().toISOString(), node: process.version, sockets: SOCKETS, users: USERS, rounds: ROUNDS, repeats: REPEATS, results }, null, 2)}\n`,
  );
  log(`figures written to ${out}`);
  process.exit(results.some((r) => r.lost > 0) ? 1 : 0);
}
