import { randomUUID } from 'node:crypto';
import type { FastifyBaseLogger } from 'fastify';
import type { Db } from '../db/index.ts';
import { isDatabaseUnavailable } from '../db/outage.ts';
import type { TJobName } from './names.ts';

/** What a job's run gets: `now` is the injected clock read once for the run. */
export type TJobContext = {
  db: Db;
  now: Date;
  log: FastifyBaseLogger;
  /** This core's first run of the job. */
  first: boolean;
};

export type TJob = {
  name: TJobName;
  everyMs: number;
  /**
   * 'cluster' (the default): one core at a time on a shared database, about once per interval
   * whatever the number of cores. 'core': every core runs its own (what it checks is its own:
   * its sockets, its mail kicks).
   */
  scope?: 'cluster' | 'core';
  /** Due at this core's start (a recovery duty of each starting core) instead of one interval after it. */
  atStart?: boolean;
  /** Its answer is logged with the run: keep it small (counts). */
  run: (ctx: TJobContext) => Promise<unknown>;
};

/** One run: `skipped` when another run of the job held it (here or on another core), or it was not due on the database. */
export type TJobRun = { job: TJobName; ran: boolean; duration_ms: number; error: string | null };

export type TJobStatus = {
  name: TJobName;
  enabled: boolean;
  every_ms: number;
  running: boolean;
  last_run_at: string | null;
  duration_ms: number | null;
  error: string | null;
};

export type TScheduler = {
  /** Runs every enabled job that is due on the clock; resolves when those runs end. */
  runDue(): Promise<TJobRun[]>;
  /** Runs one job now, enabled or not and due or not (tests, an operator): still never beside another run of it. */
  runJob(name: TJobName): Promise<TJobRun>;
  /** The last run of each job (the cluster's, from the database, for cluster jobs), for the readiness details. */
  status(): Promise<TJobStatus[]>;
  /** Starts the clock that calls runDue (only when a job is enabled; tests call runDue themselves). */
  start(): void;
  /** Stops the clock and waits for the runs in flight. */
  stop(): Promise<void>;
};

/** How often the clock looks at most (a job due sooner is looked at when it is due). */
const TICK_MAX_MS = 1_000;
/**
 * A claim lasts this long past its start and is renewed while the job runs: a core that dies
 * mid-run holds its jobs this long at most.
 */
const LEASE_MS = 60_000;
/** Jobs more frequent than this log their successful runs at debug (a line every 2 s is noise at info). */
const QUIET_BELOW_MS = 60_000;

type TLocal = {
  job: TJob;
  nextAt: number;
  running: Promise<TJobRun> | null;
  runs: number;
  last: { at: Date; duration_ms: number; error: string | null } | null;
  /** Its job_runs row is known to exist (a job added by a deploy gets it at its first claim). */
  stored: boolean;
};

/**
 * One scheduler per core for every timed job (core/src/jobs/list.ts), on the injected clock:
 * tests never start it and call runDue/runJob with their own clock. Cluster jobs are claimed
 * in `job_runs` (see migration 095) with FOR UPDATE SKIP LOCKED, so on PostgreSQL shared by
 * several cores a job runs on one of them at a time; PGlite runs the same SQL.
 */
export function createScheduler(options: { db: Db; now: () => Date; log: FastifyBaseLogger; jobs: TJob[]; enabled: readonly TJobName[] }): TScheduler {
  const { db, now, log } = options;
  const self = randomUUID();
  const enabled = new Set(options.enabled);
  const started = now().getTime();
  const local = new Map<TJobName, TLocal>(
    options.jobs.map((job) => [job.name, { job, nextAt: job.atStart ? started : started + job.everyMs, running: null, runs: 0, last: null, stored: false }]),
  );
  const cluster = options.jobs.filter((job) => (job.scope ?? 'cluster') === 'cluster').map((job) => job.name);
  let timer: NodeJS.Timeout | null = null;
  let stopped = false;

  async function claim(entry: TLocal, at: Date, force: boolean): Promise<boolean> {
    const { job } = entry;
    if (!entry.stored) {
      await db.query('INSERT INTO job_runs (name) VALUES ($1) ON CONFLICT (name) DO NOTHING', [job.name]);
      entry.stored = true;
    }
    const [row] = await db.query(
      `UPDATE job_runs SET running_by = $2, lease_until = $3::timestamptz + make_interval(secs => $4::float8 / 1000), started_at = $3
       WHERE name = (SELECT name FROM job_runs WHERE name = $1
                       AND (running_by IS NULL OR lease_until < $3)
                       AND ($5 OR started_at IS NULL OR started_at <= $3::timestamptz - make_interval(secs => $6::float8 / 1000))
                     FOR UPDATE SKIP LOCKED)
       RETURNING 1`,
      [job.name, self, at, LEASE_MS, force, job.everyMs],
    );
    return !!row;
  }

  async function release(job: TJob, finished: Date, duration: number, error: string | null): Promise<void> {
    await db.query(
      'UPDATE job_runs SET running_by = NULL, lease_until = NULL, finished_at = $3, duration_ms = $4, error = $5 WHERE name = $1 AND running_by = $2',
      [job.name, self, finished, duration, error],
    );
  }

  /** A long run keeps its claim: the lease moves on while the job works. */
  function keepLease(job: TJob): () => void {
    const renew = setInterval(() => {
      db.query(`UPDATE job_runs SET lease_until = $3::timestamptz + make_interval(secs => $4::float8 / 1000) WHERE name = $1 AND running_by = $2`, [
        job.name,
        self,
        now(),
        LEASE_MS,
      ]).catch(() => {});
    }, LEASE_MS / 3);
    renew.unref();
    return () => clearInterval(renew);
  }

  async function execute(entry: TLocal, at: Date, force: boolean): Promise<TJobRun> {
    const { job } = entry;
    const shared = (job.scope ?? 'cluster') === 'cluster';
    const t0 = performance.now();
    let error: string | null = null;
    let result: unknown;
    try {
      if (shared && !(await claim(entry, at, force))) return { job: job.name, ran: false, duration_ms: 0, error: null };
    } catch (err) {
      // No claim, no run: the database is what is failing, and the next tick asks again.
      if (!isDatabaseUnavailable(err)) log.error({ err, job: job.name }, `job ${job.name}: claim failed`);
      return { job: job.name, ran: false, duration_ms: 0, error: null };
    }
    const unlease = shared ? keepLease(job) : () => {};
    try {
      result = await job.run({ db, now: at, log, first: entry.runs === 0 });
    } catch (err) {
      error = err instanceof Error ? err.message : String(err);
      if (isDatabaseUnavailable(err)) log.warn({ job: job.name, err }, `job ${job.name} failed: database unavailable`);
      else log.error({ job: job.name, err }, `job ${job.name} failed`);
    } finally {
      unlease();
    }
    const duration = Math.round(performance.now() - t0);
    entry.runs++;
    entry.last = { at, duration_ms: duration, error };
    if (!error) log[job.everyMs < QUIET_BELOW_MS ? 'debug' : 'info']({ job: job.name, duration_ms: duration, result }, `job ${job.name} done`);
    if (shared) {
      await release(job, new Date(at.getTime() + duration), duration, error).catch((err: unknown) => {
        // The lease ends the claim anyway.
        if (!isDatabaseUnavailable(err)) log.error({ err, job: job.name }, `job ${job.name}: release failed`);
      });
    }
    return { job: job.name, ran: true, duration_ms: duration, error };
  }

  /** Starts a run unless one of this job is in flight here; marks it before any await (a tick cannot slip in between). */
  function launch(entry: TLocal, at: Date, force: boolean): Promise<TJobRun> {
    if (entry.running) return Promise.resolve({ job: entry.job.name, ran: false, duration_ms: 0, error: null });
    const running = execute(entry, at, force).finally(() => {
      entry.running = null;
    });
    entry.running = running;
    return running;
  }

  function runDue(): Promise<TJobRun[]> {
    const at = now();
    const runs: Array<Promise<TJobRun>> = [];
    for (const entry of local.values()) {
      if (!enabled.has(entry.job.name) || entry.nextAt > at.getTime() || entry.running) continue;
      entry.nextAt = at.getTime() + entry.job.everyMs;
      // A start-up duty is this core's own: it runs even if another core ran the job a moment ago.
      runs.push(launch(entry, at, !!entry.job.atStart && entry.runs === 0));
    }
    return Promise.all(runs);
  }

  function tick() {
    if (stopped) return;
    void runDue();
    const at = now().getTime();
    let wait = TICK_MAX_MS;
    for (const entry of local.values()) if (enabled.has(entry.job.name)) wait = Math.min(wait, Math.max(10, entry.nextAt - at));
    timer = setTimeout(tick, wait);
    timer.unref();
  }

  return {
    runDue,
    runJob(name) {
      const entry = local.get(name);
      if (!entry) throw new Error(`no job ${name}`);
      return launch(entry, now(), true);
    },
    async status() {
      const rows = await db.query<{ name: TJobName; running: boolean; started_at: Date | null; duration_ms: number | null; error: string | null }>(
        'SELECT name, running_by IS NOT NULL AS running, started_at, duration_ms, error FROM job_runs WHERE name = ANY($1::text[])',
        [cluster],
      );
      const shared = new Map(rows.map((row) => [row.name, row]));
      return [...local.values()].map(({ job, running, last }) => {
        const row = shared.get(job.name);
        const at = row ? row.started_at : (last?.at ?? null);
        return {
          name: job.name,
          enabled: enabled.has(job.name),
          every_ms: job.everyMs,
          running: row ? row.running : !!running,
          last_run_at: at ? new Date(at).toISOString() : null,
          duration_ms: row ? row.duration_ms : (last?.duration_ms ?? null),
          error: row ? row.error : (last?.error ?? null),
        };
      });
    },
    start() {
      if (options.jobs.some((job) => enabled.has(job.name))) tick();
    },
    async stop() {
      stopped = true;
      if (timer) clearTimeout(timer);
      await Promise.all([...local.values()].map((entry) => entry.running));
    },
  };
}
