/**
 * The cluster check's load and its verdict (scripts/cluster-check.sh runs it against compose.yaml's
 * topology): everything goes through the load balancer's one address, as a browser's would.
 *
 *   set-up     CLUSTER_USERS users made in the database (core/test/fixtures.ts, as the benches do),
 *              each with a password and 1 000 000 USDT; each signs in through the load balancer
 *              (POST /api/auth/login_by_password) and opens CLUSTER_SOCKETS_PER_USER sockets on /ws.
 *              Two support messages with a picture each go to the private files.
 *   load       CLUSTER_TRANSFER_WORKERS loops of POST /api/transfer between random users, each with
 *              its own Idempotency-Key, retried with the same key after a 5xx, a timeout or a cut
 *              connection (as docs/ops.md tells clients to); a sign-in every second; a probe of
 *              GET /api/site every 250 ms; every socket reconnects after a close with ?since= its
 *              last seq, and checks each event's seq is the next one.
 *   faults     after CLUSTER_WARMUP_S the command CLUSTER_KILL_CORE, CLUSTER_PHASE_S later
 *              CLUSTER_KILL_BFF, CLUSTER_PHASE_S later CLUSTER_RESTORE (the killed ones back, if
 *              their restart policy has not already), then CLUSTER_PHASE_S more of load. Each
 *              fault must close some sockets: the core's those relayed through its link, the
 *              BFF's its own.
 *   verdict    the ledger's invariants (core/src/domains/ledger/invariants.ts) and its per-currency
 *              sums unchanged; every key answered 2xx stored exactly once, and nothing stored for a
 *              key that never was; every socket open again and at its user's newest seq with no
 *              gap, repeat or resync; the files read back through both cores, before and after;
 *              the probe's longest stretch without an answer at most CLUSTER_MAX_GAP_S, and every
 *              probe from half a phase after the restore answered.
 *
 *   CLUSTER_URL=http://127.0.0.1:8080 DATABASE_URL=postgres://… node scripts/cluster-load.ts
 *
 * Prints what it does as it goes, a JSON summary last; exit status 1 when a check failed.
 */
import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { envNumber } from './bench-common.ts';

const URL_BASE = process.env.CLUSTER_URL ?? 'http://127.0.0.1:8080';
const DATABASE_URL = process.env.DATABASE_URL;
const USERS = envNumber('CLUSTER_USERS', 20, { min: 2 });
const SOCKETS_PER_USER = envNumber('CLUSTER_SOCKETS_PER_USER', 2, { min: 1 });
const WORKERS = envNumber('CLUSTER_TRANSFER_WORKERS', 8, { min: 1 });
const WARMUP_S = envNumber('CLUSTER_WARMUP_S', 10, { min: 1 });
const PHASE_S = envNumber('CLUSTER_PHASE_S', 12, { min: 1 });
const MAX_GAP_S = envNumber('CLUSTER_MAX_GAP_S', 5, { min: 0, fraction: true });
const SETTLE_S = envNumber('CLUSTER_SETTLE_S', 30, { min: 1 });
const RETRY_FOR_MS = 60_000;
const AMOUNT = '0.1';
const FUNDS = 1_000_000_000_000n; // 1 000 000 USDT (6 decimals)
// A 16×16 PNG: small enough to cost the cores nothing, a real picture for the upload checks.
const PICTURE = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAABAAAAAQCAIAAACQkWg2AAAAFklEQVR4nGPQWFBBEmIY1TCqYfhqAADPt0AQXcOVswAAAABJRU5ErkJggg==', 'base64');

const started = Date.now();
const clock = () => ((Date.now() - started) / 1000).toFixed(1).padStart(6);
const say = (line: string) => console.log(`[cluster-load ${clock()} s] ${line}`);
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const origin = new URL(URL_BASE).origin;
const wsBase = URL_BASE.replace(/^http/, 'ws');

type TUser = { id: string; accountId: number; email: string; cookie: string };

// ---- HTTP through the load balancer ---------------------------------------------------------

/** `status` 0: no answer (`error` says why). */
type TAnswer = { status: number; body: string; headers: Headers | null; error: string | null };

async function call(path: string, init: { method?: string; cookie?: string; headers?: Record<string, string>; body?: BodyInit } = {}): Promise<TAnswer> {
  try {
    const res = await fetch(URL_BASE + path, {
      method: init.method ?? 'GET',
      headers: { origin, ...(init.cookie ? { cookie: init.cookie } : {}), ...init.headers },
      body: init.body ?? null,
      signal: AbortSignal.timeout(15_000),
    });
    return { status: res.status, body: await res.text(), headers: res.headers, error: null };
  } catch (err) {
    return { status: 0, body: '', headers: null, error: (err as Error).cause ? String((err as Error).cause) : String(err) };
  }
}

/** A cut connection, a timeout, or an answer that says "not now": the same request again may succeed. */
const isRetryable = (answer: TAnswer) => answer.status === 0 || answer.status >= 500 || answer.status === 429;

/** The request until it is answered for good (or RETRY_FOR_MS pass); `tries` counts the sends. */
async function callUntilAnswered(path: string, init: Parameters<typeof call>[1], onRetry?: (answer: TAnswer) => void) {
  const deadline = Date.now() + RETRY_FOR_MS;
  for (let tries = 1; ; tries++) {
    const answer = await call(path, init);
    if (!isRetryable(answer) || Date.now() > deadline) return { answer, tries };
    onRetry?.(answer);
    await sleep(200 + Math.random() * 300);
  }
}

const describe = (answer: TAnswer) => (answer.status === 0 ? (answer.error ?? 'no answer') : `${answer.status} ${answer.body.slice(0, 120)}`);

async function signIn(email: string, password: string): Promise<string> {
  const { answer } = await callUntilAnswered('/api/auth/login_by_password', {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ email, password }),
  });
  const cookie = answer.status === 200 ? /remember_token=([^;]+)/.exec(answer.headers?.get('set-cookie') ?? '')?.[1] : undefined;
  if (!cookie) throw new Error(`sign-in of ${email} failed: ${describe(answer)}`);
  return `remember_token=${cookie}`;
}

// ---- the sockets ----------------------------------------------------------------------------

type TSocketState = {
  user: number;
  last: number;
  ws: WebSocket | null;
  open: boolean;
  opens: number;
  /** Per phase, per close code. */
  closes: Record<string, Record<string, number>>;
  gaps: string[];
  repeats: number;
  resyncs: number;
  events: number;
  /** Longest time from a close to the next hello, ms. */
  longestAwayMs: number;
};

let stopping = false;
/** What the load is going through, for the closes' account. */
let phase = 'warm-up';

function connect(state: TSocketState, users: TUser[]): Promise<void> {
  const url = `${wsBase}/ws${state.opens ? `?since=${state.last}` : ''}`;
  return new Promise((resolve) => {
    const ws = new WebSocket(url, { headers: { origin, cookie: users[state.user]!.cookie } } as never);
    let greeted = false;
    ws.onmessage = (message) => {
      const data = JSON.parse(String(message.data)) as { type: string; seq?: number; events?: Array<{ seq: number }> };
      if (data.type === 'hello') {
        greeted = true;
        state.open = true;
        // A first socket starts from the user's newest; a reconnect asked for what came after `last`.
        if (!state.opens) state.last = data.seq!;
        state.opens++;
        return resolve();
      }
      if (data.type === 'resync') {
        state.resyncs++;
        state.last = data.seq!;
      }
      if (data.type !== 'events') return;
      for (const event of data.events ?? []) {
        state.events++;
        if (event.seq === state.last + 1) state.last = event.seq;
        else if (event.seq <= state.last) state.repeats++;
        else {
          state.gaps.push(`${state.last} → ${event.seq}`);
          state.last = event.seq;
        }
      }
    };
    ws.onclose = (event) => {
      state.open = false;
      state.ws = null;
      if (!greeted) resolve();
      else if (!stopping) {
        const counts = state.closes[phase] ?? {};
        counts[event.code] = (counts[event.code] ?? 0) + 1;
        state.closes[phase] = counts;
      }
      if (greeted && !stopping) void reconnect(state, users);
    };
    state.ws = ws;
  });
}

async function reconnect(state: TSocketState, users: TUser[]): Promise<void> {
  const away = Date.now();
  // Like the site's socket: a short jittered wait, so a BFF's sockets do not all return at once.
  while (!stopping && !state.open) {
    await sleep(200 + Math.random() * 800);
    await connect(state, users);
  }
  state.longestAwayMs = Math.max(state.longestAwayMs, Date.now() - away);
}

// ---- the database (set-up and verdict) ------------------------------------------------------

async function openDatabase() {
  const { openDb } = await import('../core/src/db/index.ts');
  const silent = { error: () => {}, warn: () => {}, info: () => {} };
  return openDb({ DATABASE_URL: DATABASE_URL!, DATA_DIR: '', DB_POOL_SIZE: 2 }, silent);
}

type TDb = Awaited<ReturnType<typeof openDatabase>>;

async function readSums(db: TDb): Promise<Record<string, string>> {
  const rows = await db.query<{ currency: string; total: string }>(
    'SELECT currency, sum(balance)::text AS total FROM ledger_accounts GROUP BY currency ORDER BY currency',
  );
  return Object.fromEntries(rows.map((row) => [row.currency, row.total]));
}

async function makeUsers(db: TDb, password: string): Promise<Array<Omit<TUser, 'cookie'>>> {
  const { createFixtureUser, fund } = await import('../core/test/fixtures.ts');
  const { hashPassword } = await import('../core/src/domains/auth/passwords.ts');
  // One hash for all: the cost is the core's (scrypt ln 17), paid once here and at each sign-in there.
  const hash = await hashPassword(password);
  const users: Array<Omit<TUser, 'cookie'>> = [];
  for (let i = 0; i < USERS; i++) {
    const user = await createFixtureUser(db);
    await db.query('UPDATE users SET password_hash = $2 WHERE id = $1', [user.id, hash]);
    await fund(db, user.id, 'USDT', FUNDS, 'cluster check');
    users.push({ id: user.id, accountId: user.accountId, email: user.email });
  }
  return users;
}

// ---- the run --------------------------------------------------------------------------------

function runAction(name: string, variable: string): { name: string; at: number; code: number | null } {
  const command = process.env[variable]!;
  say(`${name}: ${command}`);
  const result = spawnSync('bash', ['-c', command], { stdio: ['ignore', 'inherit', 'inherit'] });
  if (result.status !== 0) say(`${name}: exit status ${result.status}`);
  return { name, at: (Date.now() - started) / 1000, code: result.status };
}

async function waitForCluster(): Promise<void> {
  const deadline = Date.now() + 180_000;
  let inARow = 0;
  // Several answers in a row: the load balancer alternates, so both BFFs (and cores) are up.
  while (inARow < 6) {
    if (Date.now() > deadline) throw new Error(`${URL_BASE} did not answer /local/healthcheck within 180 s`);
    const answer = await call('/local/healthcheck');
    inARow = answer.status === 200 ? inARow + 1 : 0;
    await sleep(500);
  }
}

type TTransferLog = {
  answered: Map<string, number>;
  refused: Map<string, string>;
  unanswered: Set<string>;
  retries: number;
  replayed: number;
  retryCauses: Record<string, number>;
};

async function transferWorker(worker: number, users: TUser[], runId: string, log: TTransferLog, until: () => boolean): Promise<void> {
  for (let n = 1; !until(); n++) {
    const from = Math.floor(Math.random() * users.length);
    let to = Math.floor(Math.random() * (users.length - 1));
    if (to >= from) to++;
    const key = `${runId}-${worker}-${n}`;
    const { answer, tries } = await callUntilAnswered(
      '/api/transfer',
      {
        method: 'POST',
        cookie: users[from]!.cookie,
        headers: { 'content-type': 'application/json', 'idempotency-key': key },
        body: JSON.stringify({ account_id: String(users[to]!.accountId), currency: 'USDT', amount: AMOUNT }),
      },
      (failed) => {
        const cause = failed.status === 0 ? 'no answer' : String(failed.status);
        log.retryCauses[cause] = (log.retryCauses[cause] ?? 0) + 1;
      },
    );
    log.retries += tries - 1;
    if (answer.status >= 200 && answer.status < 300) {
      log.answered.set(key, tries);
      if (answer.headers?.get('idempotent-replayed') === 'true') log.replayed++;
    } else if (isRetryable(answer)) log.unanswered.add(key);
    else log.refused.set(key, describe(answer));
  }
}

type TProbe = { at: number; ok: boolean };

async function probe(probes: TProbe[], until: () => boolean): Promise<void> {
  while (!until()) {
    const at = Date.now();
    const answer = await call('/api/site');
    probes.push({ at, ok: answer.status === 200 });
    await sleep(Math.max(0, 250 - (Date.now() - at)));
  }
}

async function signInLoop(users: TUser[], password: string, counts: { ok: number; failed: number }, until: () => boolean): Promise<void> {
  while (!until()) {
    const user = users[Math.floor(Math.random() * users.length)]!;
    try {
      const cookie = await signIn(user.email, password);
      const { answer } = await callUntilAnswered('/api/auth/check', { cookie });
      if (answer.status === 200 && answer.body.includes(user.email)) counts.ok++;
      else counts.failed++;
    } catch {
      counts.failed++;
    }
    await sleep(1000);
  }
}

async function uploadPicture(user: TUser): Promise<string> {
  const form = new FormData();
  form.set('text', 'cluster check');
  form.set('file0', new Blob([PICTURE], { type: 'image/png' }), 'check.png');
  const { answer } = await callUntilAnswered('/api/support', { method: 'POST', cookie: user.cookie, body: form });
  if (answer.status !== 200) throw new Error(`upload failed: ${describe(answer)}`);
  const url = (JSON.parse(answer.body) as { message: { files: Array<{ url: string }> } }).message.files[0]?.url;
  if (!url) throw new Error(`upload answered no file: ${answer.body.slice(0, 200)}`);
  return new URL(url, URL_BASE).pathname;
}

/** Each file read `times` times: the load balancer alternates, so both cores serve each one. */
async function readFiles(user: TUser, paths: string[], times: number): Promise<string[]> {
  const failures: string[] = [];
  for (const path of paths) {
    for (let i = 0; i < times; i++) {
      const { answer } = await callUntilAnswered(path, { cookie: user.cookie });
      if (answer.status !== 200 || !answer.headers?.get('content-type')?.startsWith('image/')) failures.push(`${path}: ${describe(answer)}`);
    }
  }
  return failures;
}

async function main(): Promise<number> {
  if (!DATABASE_URL) throw new Error('DATABASE_URL (the cluster’s PostgreSQL) is required');
  for (const variable of ['CLUSTER_KILL_CORE', 'CLUSTER_KILL_BFF', 'CLUSTER_RESTORE'])
    if (!process.env[variable]) throw new Error(`${variable} (a command) is required`);
  const runId = `cluster-${randomBytes(4).toString('hex')}`;
  const password = `Cluster-${randomBytes(9).toString('base64url')}`;
  say(`waiting for ${URL_BASE}`);
  await waitForCluster();

  const db = await openDatabase();
  const failures: string[] = [];
  try {
    say(`${USERS} users with 1 000 000 USDT each (in the database, as the benches make them)`);
    const made = await makeUsers(db, password);
    const sumsBefore = await readSums(db);
    const signInStarted = Date.now();
    const users: TUser[] = [];
    for (const user of made) users.push({ ...user, cookie: await signIn(user.email, password) });
    say(`${users.length} sign-ins through the load balancer in ${((Date.now() - signInStarted) / 1000).toFixed(1)} s`);

    const sockets: TSocketState[] = [];
    for (let i = 0; i < USERS * SOCKETS_PER_USER; i++) {
      sockets.push({ user: i % USERS, last: 0, ws: null, open: false, opens: 0, closes: {}, gaps: [], repeats: 0, resyncs: 0, events: 0, longestAwayMs: 0 });
    }
    await Promise.all(sockets.map((state) => reconnect(state, users)));
    say(`${sockets.length} sockets open on /ws (${SOCKETS_PER_USER} per user)`);

    const pictures = [await uploadPicture(users[0]!), await uploadPicture(users[0]!)];
    const filesBefore = await readFiles(users[0]!, pictures, 4);
    say(`2 pictures uploaded to the private files, each read 4 times: ${filesBefore.length ? filesBefore.join('; ') : 'all 200'}`);
    failures.push(...filesBefore.map((f) => `file before the faults: ${f}`));

    const log: TTransferLog = { answered: new Map(), refused: new Map(), unanswered: new Set(), retries: 0, replayed: 0, retryCauses: {} };
    const signIns = { ok: 0, failed: 0 };
    const probes: TProbe[] = [];
    let loadOver = false;
    const until = () => loadOver;
    const loadStarted = Date.now();
    const work = [
      ...Array.from({ length: WORKERS }, (_, w) => transferWorker(w, users, runId, log, until)),
      probe(probes, until),
      signInLoop(users, password, signIns, until),
    ];
    say(`load: ${WORKERS} transfer loops, a sign-in a second, a probe every 250 ms`);
    const actions: Array<{ name: string; at: number; code: number | null }> = [];
    const progress = () => `${log.answered.size} transfers answered 2xx, ${log.retries} retries`;
    for (const [next, variable] of [
      ['core down', 'CLUSTER_KILL_CORE'],
      ['bff down', 'CLUSTER_KILL_BFF'],
      ['restored', 'CLUSTER_RESTORE'],
    ] as const) {
      await sleep((phase === 'warm-up' ? WARMUP_S : PHASE_S) * 1000);
      say(progress());
      phase = next;
      actions.push(runAction(next, variable));
    }
    await sleep(PHASE_S * 1000);
    phase = 'settle';
    loadOver = true;
    say(`load over after ${((Date.now() - loadStarted) / 1000).toFixed(0)} s: waiting for the calls in flight`);
    await Promise.all(work);
    say(progress());

    // Every socket at its user's newest seq, or SETTLE_S without getting there.
    const newest = async () =>
      new Map(
        (
          await db.query<{ user_id: string; seq: string }>('SELECT user_id::text, seq::text FROM event_seqs WHERE user_id = ANY($1::bigint[])', [
            users.map((u) => u.id),
          ])
        ).map((r) => [r.user_id, Number(r.seq)]),
      );
    const settleBy = Date.now() + SETTLE_S * 1000;
    let behind: TSocketState[] = [];
    let seqs = await newest();
    for (;;) {
      behind = sockets.filter((s) => !s.open || s.last !== (seqs.get(users[s.user]!.id) ?? 0));
      if (!behind.length || Date.now() > settleBy) break;
      await sleep(500);
      seqs = await newest();
    }
    say(`sockets: ${sockets.length - behind.length} of ${sockets.length} open and at their user's newest event`);

    const filesAfter = await readFiles(users[0]!, pictures, 4);
    say(`the pictures read 4 times each after the faults: ${filesAfter.length ? filesAfter.join('; ') : 'all 200'}`);
    failures.push(...filesAfter.map((f) => `file after the faults: ${f}`));

    stopping = true;
    for (const state of sockets) state.ws?.close();

    // ---- verdict ----
    const { checkLedger } = await import('../core/src/domains/ledger/invariants.ts');
    const report = await checkLedger(db);
    failures.push(...report.violations.map((v) => `ledger: ${v.rule}: ${v.detail}`));
    const sumsAfter = await readSums(db);
    // Transfers only move money between accounts (fees included): each currency sums to what it did after the funding.
    if (JSON.stringify(sumsAfter) !== JSON.stringify(sumsBefore))
      failures.push(`per-currency sums changed: ${JSON.stringify(sumsBefore)} → ${JSON.stringify(sumsAfter)}`);
    const stored = await db.query<{ key: string; n: number }>(
      'SELECT idempotency_key AS key, count(*)::int AS n FROM transfers WHERE idempotency_key LIKE $1 GROUP BY idempotency_key',
      [`${runId}-%`],
    );
    const storedKeys = new Map(stored.map((row) => [row.key, row.n]));
    const twice = stored.filter((row) => row.n > 1);
    const lost = [...log.answered.keys()].filter((key) => !storedKeys.has(key));
    const phantom = [...storedKeys.keys()].filter((key) => !log.answered.has(key) && !log.unanswered.has(key));
    if (twice.length) failures.push(`transfers stored twice: ${twice.map((r) => r.key).join(', ')}`);
    if (lost.length) failures.push(`transfers answered 2xx but not stored: ${lost.join(', ')}`);
    if (phantom.length) failures.push(`transfers stored that were never answered 2xx: ${phantom.join(', ')}`);
    if (log.refused.size)
      failures.push(
        `transfers refused: ${[...log.refused.entries()]
          .slice(0, 5)
          .map(([k, why]) => `${k}: ${why}`)
          .join('; ')}`,
      );
    if (log.unanswered.size) failures.push(`transfers never answered within ${RETRY_FOR_MS / 1000} s of retries: ${log.unanswered.size}`);
    const retried = [...log.answered.values()].filter((tries) => tries > 1).length;

    for (const state of behind) {
      const want = seqs.get(users[state.user]!.id) ?? 0;
      failures.push(`socket of user ${state.user}: ${state.open ? 'open' : 'closed'}, at seq ${state.last} of ${want}`);
    }
    for (const [i, state] of sockets.entries()) {
      if (state.gaps.length) failures.push(`socket ${i}: events skipped ${state.gaps.join(', ')}`);
      if (state.repeats) failures.push(`socket ${i}: ${state.repeats} events twice`);
      if (state.resyncs) failures.push(`socket ${i}: ${state.resyncs} resyncs (replay not available)`);
    }
    const closes: Record<string, Record<string, number>> = {};
    for (const state of sockets) {
      for (const [during, codes] of Object.entries(state.closes)) {
        const counts = closes[during] ?? {};
        for (const [code, n] of Object.entries(codes)) counts[code] = (counts[code] ?? 0) + n;
        closes[during] = counts;
      }
    }
    for (const fault of ['core down', 'bff down']) if (!closes[fault]) failures.push(`no socket closed when the ${fault.replace(' down', '')} was killed`);
    const reconnected = sockets.filter((s) => s.opens > 1);
    for (const action of actions) if (action.code !== 0) failures.push(`${action.name} failed (exit status ${action.code})`);

    // The longest stretch without a good answer, and the tail after the restore.
    let longestGapMs = 0;
    let lastOk = probes[0]?.at ?? Date.now();
    for (const p of probes) {
      if (p.ok) lastOk = p.at;
      else longestGapMs = Math.max(longestGapMs, p.at - lastOk);
    }
    const failedProbes = probes.filter((p) => !p.ok);
    const tail = probes.filter((p) => p.at >= loadStarted + (WARMUP_S + 2 * PHASE_S + PHASE_S / 2) * 1000);
    if (longestGapMs > MAX_GAP_S * 1000)
      failures.push(`the load balancer answered nothing good for ${(longestGapMs / 1000).toFixed(1)} s (limit ${MAX_GAP_S} s)`);
    if (tail.some((p) => !p.ok)) failures.push(`${tail.filter((p) => !p.ok).length} failed probes after the restore`);

    const summary = {
      run: runId,
      users: USERS,
      sign_ins: { at_start: USERS, during_load: signIns.ok, failed: signIns.failed },
      transfers: {
        answered_2xx: log.answered.size,
        stored: stored.reduce((sum, row) => sum + row.n, 0),
        stored_twice: twice.length,
        lost: lost.length,
        phantom: phantom.length,
        refused: log.refused.size,
        never_answered: log.unanswered.size,
        retried_until_answered: retried,
        retries: log.retries,
        retry_causes: log.retryCauses,
        answered_as_replay: log.replayed,
      },
      ledger: { violations: report.violations.length, sums_unchanged: JSON.stringify(sumsAfter) === JSON.stringify(sumsBefore) },
      sockets: {
        count: sockets.length,
        reconnected: reconnected.length,
        reconnects: sockets.reduce((sum, s) => sum + s.opens - 1, 0),
        closes_by_phase_and_code: closes,
        longest_away_ms: Math.max(...sockets.map((s) => s.longestAwayMs)),
        events: sockets.reduce((sum, s) => sum + s.events, 0),
        behind: behind.length,
        gaps: sockets.reduce((sum, s) => sum + s.gaps.length, 0),
        repeats: sockets.reduce((sum, s) => sum + s.repeats, 0),
        resyncs: sockets.reduce((sum, s) => sum + s.resyncs, 0),
      },
      probes: { count: probes.length, failed: failedProbes.length, longest_gap_s: Number((longestGapMs / 1000).toFixed(1)) },
      files: { read_before: 8 - filesBefore.length, read_after: 8 - filesAfter.length, of: 8 },
      actions,
      failures,
    };
    console.log(JSON.stringify(summary, null, 2));
    say(failures.length ? `FAILED: ${failures.length} checks` : 'every check passed');
    return failures.length ? 1 : 0;
  } finally {
    stopping = true;
    await db.close();
  }
}

process.exit(await main());
