/**
 * The payments bench: provider webhooks processed per second on PostgreSQL with every
 * event delivered 5 times, and the round trip of a withdrawal request.
 *
 * Per core measured: a fresh PostgreSQL database (beside BENCH_DATABASE_URL or TEST_DATABASE_URL,
 * dropped at the end), `ops seed` then the core as a child process, 100 users, one
 * `created` card deposit in USD per event. Then:
 *  - webhooks: each deposit's `payment.paid` event, signed with the provider's secret
 *    (`t=<unix>,v1=<hmac>`), POSTed to /api/payments/webhook/sandbox-card 5 times; the copies
 *    of 16 events at a time are shuffled together and sent by BENCH_WEBHOOK_CONNECTIONS
 *    concurrent clients, so the copies of one event arrive concurrently and out of order.
 *    A warm-up of a tenth of the events first (not measured). events/s = events of the
 *    measured part / its wall time; deliveries/s = 5 × that. The clients share the machine's
 *    CPUs with the core and PostgreSQL: their CPU per event is in the table too (runRequests).
 *    Afterwards: every deposit credited once (one deposit ledger transaction per payment, one
 *    `credited` delivery per event, the others `duplicate`), every delivery stored and
 *    processed, the ledger's rules.
 *  - withdraw: POST /api/withdraw/form/sandbox-card (JSON, Bearer session, a fresh
 *    Idempotency-Key each) for 100 RUB from level-1 users, BENCH_WITHDRAW_CONNECTIONS at once:
 *    p50/p99 of the round trip; afterwards each answered request holds its amount once.
 *
 * BENCH_WEBHOOKS_BEFORE=<directory of another checkout with its node_modules installed> also
 * measures that checkout's core the same way, interleaved (before, after, before, after … for
 * BENCH_WEBHOOK_ROUNDS rounds), and prints the ratio of the medians: before/after figures from
 * one run on one machine. Its data is made by this checkout's code (users, deposits by SQL).
 *
 * Knobs: BENCH_WEBHOOK_EVENTS (4000 per round), BENCH_WEBHOOK_CONNECTIONS (64),
 * BENCH_WEBHOOK_ROUNDS (1), BENCH_WITHDRAW_REQUESTS (1000), BENCH_WITHDRAW_CONNECTIONS (16),
 * BENCH_WEBHOOK_CORE_NODE_ARGS (e.g. "--cpu-prof --cpu-prof-dir=/tmp/prof").
 * Exit status 1 when a run saw a failed request, a double credit or a broken ledger rule.
 */
import { connect } from 'node:net';
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { QUIET, envNumber, loadAverage, median, root, startServer, stopProcess, type TServer } from './bench-common.ts';
import { freshDatabase, postgresMeter, type TDatabase } from './bench-money.ts';

const USERS = 100;
const COPIES = 5;
/** Events whose copies are shuffled together: wide enough that copies overlap in flight, narrow enough that all 5 do. */
const SHUFFLE_WINDOW = 16;
const SECRET = `bench-${randomBytes(16).toString('hex')}`;
const CARD = { card_number: '4111 1111 1111 1111', card_holder: 'BENCH USER' };

const EVENTS = envNumber('BENCH_WEBHOOK_EVENTS', 4000, { min: 10 });
const CONNECTIONS = envNumber('BENCH_WEBHOOK_CONNECTIONS', 64, { min: 1 });
const ROUNDS = envNumber('BENCH_WEBHOOK_ROUNDS', 1, { min: 1 });
const WITHDRAWALS = envNumber('BENCH_WITHDRAW_REQUESTS', 1000, { min: 10 });
const WITHDRAW_CONNECTIONS = envNumber('BENCH_WITHDRAW_CONNECTIONS', 16, { min: 1 });
const log = (line: string) => console.error(`[bench-webhooks] ${line}`);

type TAnswer = { status: number; body: string; ms: number };

/**
 * Sends `count` requests over `connections` keep-alive connections, one request at a time on
 * each; answers in request order. A lean HTTP/1.1 client (each request written in one piece, the
 * answer read by its content-length), so that the load generator, on the same two CPUs as the
 * core and PostgreSQL, takes as little of them as it can: node:http's client cost 2 to 4 times
 * as much per request. An answer without a content-length, or a connection lost, counts as
 * failed (status 0) and the connection is opened again.
 */
async function runRequests(
  url: string,
  count: number,
  connections: number,
  make: (i: number) => { path: string; headers: Record<string, string>; body: Buffer },
): Promise<{ answers: TAnswer[]; seconds: number; cpuSeconds: number }> {
  const { hostname, port } = new URL(url);
  const answers: TAnswer[] = new Array(count);
  let next = 0;
  const connection = () =>
    new Promise<void>((done) => {
      const socket = connect({ host: hostname, port: Number(port), noDelay: true });
      let pending = -1;
      let sentAt = 0;
      let received: Buffer = Buffer.alloc(0);
      const send = () => {
        if (next >= count) {
          pending = -1;
          socket.end();
          return;
        }
        pending = next++;
        const { path, headers, body } = make(pending);
        const head = Object.entries({ ...headers, host: `${hostname}:${port}`, 'content-length': String(body.length) })
          .map(([name, value]) => `${name}: ${value}\r\n`)
          .join('');
        sentAt = performance.now();
        socket.write(Buffer.concat([Buffer.from(`POST ${path} HTTP/1.1\r\n${head}\r\n`, 'latin1'), body]));
      };
      const fail = (reason: string) => {
        if (pending >= 0) answers[pending] = { status: 0, body: reason, ms: performance.now() - sentAt };
        pending = -1;
        socket.destroy();
      };
      socket.on('connect', send);
      socket.on('data', (chunk: Buffer) => {
        received = received.length ? Buffer.concat([received, chunk]) : chunk;
        const end = received.indexOf('\r\n\r\n');
        if (end < 0) return;
        const head = received.subarray(0, end).toString('latin1');
        const length = Number(/\r\ncontent-length: *(\d+)/i.exec(head)?.[1]);
        if (!Number.isInteger(length)) return fail(`an answer without a content-length: ${head.slice(0, 100)}`);
        if (received.length < end + 4 + length) return;
        answers[pending] = { status: Number(head.slice(9, 12)), body: received.subarray(end + 4, end + 4 + length).toString(), ms: performance.now() - sentAt };
        received = received.subarray(end + 4 + length);
        send();
      });
      socket.on('error', (err) => fail(err.message));
      socket.on('close', () => {
        fail('connection closed');
        done(next < count ? connection() : undefined);
      });
    });
  const cpu = process.cpuUsage();
  const started = performance.now();
  await Promise.all(Array.from({ length: connections }, connection));
  const seconds = (performance.now() - started) / 1000;
  const used = process.cpuUsage(cpu);
  return { answers, seconds, cpuSeconds: (used.user + used.system) / 1e6 };
}

function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] ?? 0;
}

type TSetup = { tokens: string[]; deposits: Array<{ public_id: string; amount: string }> };

async function setUp(database: TDatabase, events: number): Promise<TSetup> {
  const { createFixtureUser, fund } = await import('../core/test/fixtures.ts');
  const db = await database.open();
  try {
    const tokens: string[] = [];
    const ids: string[] = [];
    for (let i = 0; i < USERS; i++) {
      const user = await createFixtureUser(db);
      await fund(db, user.id, 'RUB', 1_000_000_000n, 'bench'); // 10 000 000 RUB
      tokens.push(user.token);
      ids.push(user.id);
    }
    await db.query('UPDATE users SET verification_level = 1 WHERE id = ANY ($1::bigint[])', [ids]);
    const deposits = await db.query<{ public_id: string; amount: string }>(
      `INSERT INTO payments (direction, provider, system_id, user_id, currency, amount, fee, expires_at, created_at, updated_at, state)
       SELECT 'deposit', 'sandbox-card', 'sandbox-card', ($1::bigint[])[1 + i % cardinality($1::bigint[])], 'USD', 1000 + i, 10,
              now() + interval '1 day', now(), now(), 'created'
       FROM generate_series(1, $2::int) AS i ORDER BY i
       RETURNING public_id::text AS public_id, (amount / 100)::numeric(20, 2)::text AS amount`,
      [ids, events],
    );
    return { tokens, deposits };
  } finally {
    await db.close();
  }
}

/** Every event's copies, shuffled within windows of SHUFFLE_WINDOW events. */
function deliveryOrder(events: number, offset: number): number[] {
  const order: number[] = [];
  for (let start = 0; start < events; start += SHUFFLE_WINDOW) {
    const window: number[] = [];
    for (let e = start; e < Math.min(events, start + SHUFFLE_WINDOW); e++) for (let c = 0; c < COPIES; c++) window.push(offset + e);
    for (let i = window.length - 1; i > 0; i--) {
      const j = Math.floor(Math.random() * (i + 1));
      [window[i], window[j]] = [window[j]!, window[i]!];
    }
    order.push(...window);
  }
  return order;
}

type TWebhookFigures = {
  eventsPerSecond: number;
  deliveriesPerSecond: number;
  p50Ms: number;
  p99Ms: number;
  clientCpuUsPerEvent: number;
  failed: number;
  results: Record<string, number>;
};

async function deliverWebhooks(url: string, setup: TSetup, from: number, events: number): Promise<TWebhookFigures> {
  const { signWebhook } = await import('../core/src/inbox/signature.ts');
  const order = deliveryOrder(events, from);
  const bodies = setup.deposits.map((deposit, i) =>
    Buffer.from(JSON.stringify({ id: `bench-paid-${i}`, type: 'payment.paid', payment_id: deposit.public_id, amount: deposit.amount, currency: 'USD' })),
  );
  const run = await runRequests(url, order.length, CONNECTIONS, (i) => {
    const body = bodies[order[i]!]!;
    return {
      path: '/api/payments/webhook/sandbox-card',
      headers: { 'content-type': 'application/json', 'x-obmen-signature': signWebhook(SECRET, body, Math.floor(Date.now() / 1000)) },
      body,
    };
  });
  const results: Record<string, number> = {};
  let failed = 0;
  for (const answer of run.answers) {
    if (answer.status !== 200) failed++;
    const result = answer.status === 200 ? (JSON.parse(answer.body) as { result: string }).result : `HTTP ${answer.status}`;
    results[result] = (results[result] ?? 0) + 1;
  }
  const latencies = run.answers.map((a) => a.ms);
  return {
    eventsPerSecond: events / run.seconds,
    deliveriesPerSecond: order.length / run.seconds,
    p50Ms: percentile(latencies, 50),
    p99Ms: percentile(latencies, 99),
    clientCpuUsPerEvent: (run.cpuSeconds * 1e6) / events,
    failed,
    results,
  };
}

type TWithdrawFigures = { requestsPerSecond: number; p50Ms: number; p99Ms: number; failed: number };

async function requestWithdrawals(url: string, setup: TSetup, count: number, runId: string): Promise<TWithdrawFigures> {
  const run = await runRequests(url, count, WITHDRAW_CONNECTIONS, (i) => ({
    path: '/api/withdraw/form/sandbox-card',
    headers: {
      'content-type': 'application/json',
      authorization: `Bearer ${setup.tokens[i % setup.tokens.length]}`,
      'idempotency-key': `${runId}-${i}`,
    },
    body: Buffer.from(JSON.stringify({ currency: 'RUB', amount: '100', ...CARD })),
  }));
  const failed = run.answers.filter((a) => a.status !== 200);
  if (failed.length) log(`withdraw: ${failed.length} failed, e.g. ${failed[0]!.status} ${failed[0]!.body.slice(0, 200)}`);
  const latencies = run.answers.map((a) => a.ms);
  return { requestsPerSecond: count / run.seconds, p50Ms: percentile(latencies, 50), p99Ms: percentile(latencies, 99), failed: failed.length };
}

/** Double credits and lost deliveries, from the database after the load. */
async function verify(database: TDatabase, setup: TSetup, withdrawals: number, runId: string): Promise<string[]> {
  const { checkLedger } = await import('../core/src/domains/ledger/invariants.ts');
  const { migrate } = await import('../core/src/db/migrate.ts');
  const db = await database.open();
  try {
    // A core of another checkout (BENCH_WEBHOOKS_BEFORE) may have migrated less than this checker reads.
    await migrate(db);
    const problems = (await checkLedger(db)).violations.map((v) => `${v.rule}: ${v.detail}`);
    const [row] = await db.query<Record<string, number>>(
      `SELECT
         (SELECT count(*) FROM payments WHERE public_id = ANY($1::uuid[]) AND state = 'credited')::int AS credited,
         (SELECT count(*) FROM (SELECT memo FROM ledger_transactions WHERE kind = 'deposit' GROUP BY memo HAVING count(*) > 1) d)::int AS double_ledger,
         (SELECT count(*) FROM ledger_transactions WHERE kind = 'deposit')::int AS deposit_txs,
         (SELECT count(*) FROM (SELECT event_id FROM payment_webhooks WHERE result = 'credited' GROUP BY event_id HAVING count(*) > 1) d)::int AS double_inbox,
         (SELECT count(*) FROM payment_webhooks WHERE event_id LIKE 'bench-paid-%')::int AS deliveries,
         (SELECT count(*) FROM payment_webhooks WHERE processed_at IS NULL)::int AS unprocessed,
         (SELECT count(*) FROM payment_events WHERE event_id LIKE 'bench-paid-%')::int AS events,
         (SELECT count(*) FROM withdrawals w JOIN holds h ON h.purpose = 'withdrawal:' || w.public_id)::int AS held`,
      [setup.deposits.map((d) => d.public_id)],
    );
    const events = setup.deposits.length;
    const expect = (what: string, got: number, want: number) => {
      if (got !== want) problems.push(`${what}: ${got}, expected ${want}`);
    };
    expect('deposits credited', row!.credited!, events);
    expect('payments with more than one deposit transaction', row!.double_ledger!, 0);
    expect('deposit ledger transactions', row!.deposit_txs!, events);
    expect('events with more than one crediting delivery', row!.double_inbox!, 0);
    expect('deliveries stored', row!.deliveries!, events * COPIES);
    expect('deliveries left unprocessed', row!.unprocessed!, 0);
    expect('event ids recorded', row!.events!, events);
    expect(`withdrawals of ${runId} holding their amount`, row!.held!, withdrawals);
    return problems;
  } finally {
    await db.close();
  }
}

type TRun = {
  label: string;
  webhooks: TWebhookFigures;
  withdraw: TWithdrawFigures;
  coreCpuUsPerEvent: number | null;
  pgCpuUsPerEvent: number | null;
  problems: string[];
  load: [number | null, number | null];
};

async function measure(label: string, dir: string): Promise<TRun> {
  const database = await freshDatabase('postgres');
  let core: TServer | null = null;
  try {
    core = await startServer({
      name: `core (${label})`,
      script: join(dir, 'core/src/server.ts'),
      env: { ...QUIET, ...database.env, WEBHOOK_SECRET_SANDBOX_CARD: SECRET, SANDBOX_PROVIDERS_IN_PRODUCTION: 'true' },
      health: '/api/health',
      nodeArgs: process.env.BENCH_WEBHOOK_CORE_NODE_ARGS?.split(' ').filter(Boolean) ?? [],
      pin: false,
    });
    const warmup = Math.max(10, Math.round(EVENTS / 10));
    const setup = await setUp(database, warmup + EVENTS);
    const loadBefore = loadAverage();
    await deliverWebhooks(core.url, setup, 0, warmup);
    const { cpuSeconds } = await import('./bench-common.ts');
    const pg = await postgresMeter(database);
    const [coreBefore, pgBefore] = [cpuSeconds(core.pid), pg()];
    const webhooks = await deliverWebhooks(core.url, setup, warmup, EVENTS);
    const [coreAfter, pgAfter] = [cpuSeconds(core.pid), pg()];
    const runId = `bench-${randomBytes(4).toString('hex')}`;
    await requestWithdrawals(core.url, setup, Math.round(WITHDRAWALS / 10), `${runId}-warm`);
    const withdraw = await requestWithdrawals(core.url, setup, WITHDRAWALS, runId);
    const loadAfter = loadAverage();
    await stopProcess(core);
    core = null;
    const problems = await verify(database, setup, WITHDRAWALS + Math.round(WITHDRAWALS / 10), runId);
    if (webhooks.failed) problems.push(`${webhooks.failed} webhook deliveries failed`);
    if (withdraw.failed) problems.push(`${withdraw.failed} withdrawal requests failed`);
    const per = (a: number | null, b: number | null) => (a === null || b === null ? null : ((b - a) * 1e6) / EVENTS);
    const run: TRun = {
      label,
      webhooks,
      withdraw,
      coreCpuUsPerEvent: per(coreBefore, coreAfter),
      pgCpuUsPerEvent: per(pgBefore, pgAfter),
      problems,
      load: [loadBefore, loadAfter],
    };
    log(
      `${label}: ${webhooks.eventsPerSecond.toFixed(0)} events/s (${webhooks.deliveriesPerSecond.toFixed(0)} deliveries/s, p99 ${webhooks.p99Ms.toFixed(0)} ms, ` +
        `${JSON.stringify(webhooks.results)}); withdraw p99 ${withdraw.p99Ms.toFixed(0)} ms; load ${run.load.join(' → ')}; ` +
        `${problems.length ? `PROBLEMS: ${problems.join('; ')}` : '0 double credits, every delivery processed, ledger rules hold'}`,
    );
    return run;
  } finally {
    await stopProcess(core);
    await database.drop();
  }
}

if (import.meta.main) {
  const before = process.env.BENCH_WEBHOOKS_BEFORE;
  const runs: TRun[] = [];
  for (let round = 1; round <= ROUNDS; round++) {
    if (before) runs.push(await measure('before', before));
    runs.push(await measure('after', root));
  }
  const row = (r: TRun) =>
    `| ${r.label} | ${r.webhooks.eventsPerSecond.toFixed(0)} | ${r.webhooks.deliveriesPerSecond.toFixed(0)} | ${r.webhooks.p50Ms.toFixed(1)} | ${r.webhooks.p99Ms.toFixed(1)} | ` +
    `${r.coreCpuUsPerEvent?.toFixed(0) ?? 'n/a'} | ${r.pgCpuUsPerEvent?.toFixed(0) ?? 'n/a'} | ${r.webhooks.clientCpuUsPerEvent.toFixed(0)} | ${r.withdraw.p50Ms.toFixed(1)} | ${r.withdraw.p99Ms.toFixed(1)} | ` +
    `${r.load.map((l) => l?.toFixed(2) ?? '?').join(' → ')} | ${r.problems.length ? 'VIOLATED' : '0 double credits, ledger holds'} |`;
  console.log(
    `\nObmen payments bench: ${EVENTS} payment.paid events × ${COPIES} signed deliveries to POST /api/payments/webhook/sandbox-card from ${CONNECTIONS} clients ` +
      `(copies shuffled within ${SHUFFLE_WINDOW} events), then ${WITHDRAWALS} POST /api/withdraw/form/sandbox-card from ${WITHDRAW_CONNECTIONS} clients; ` +
      `core → PostgreSQL, Node ${process.version}\n\n` +
      '| core | events/s | deliveries/s | delivery p50 ms | delivery p99 ms | core CPU µs/event | PostgreSQL CPU µs/event | client CPU µs/event | withdraw p50 ms | withdraw p99 ms | load average | checks |\n' +
      '|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|---|\n' +
      runs.map(row).join('\n'),
  );
  if (before) {
    const mid = (label: string) => median(runs.filter((r) => r.label === label).map((r) => r.webhooks.eventsPerSecond));
    console.log(
      `\nevents/s after / before (medians): ${(mid('after') / mid('before')).toFixed(2)}x; target >= 1000 events/s: ${mid('after') >= 1000 ? 'met' : 'MISSED'}`,
    );
  }
  process.exit(runs.some((r) => r.problems.length) ? 1 : 0);
}
