import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import Fastify, { type FastifyBaseLogger, type FastifyInstance } from 'fastify';
import { Writable } from 'node:stream';
import pino from 'pino';
import app from '../../src/app.ts';
import { ENGINES, build, openTestDb, testConfig } from '../helpers.ts';
import { openDb, type Db } from '../../src/db/index.ts';
import { migrate } from '../../src/db/migrate.ts';
import { createScheduler, type TJob, type TScheduler } from '../../src/jobs/scheduler.ts';

const NOW = new Date('2026-11-23T10:00:00Z');
const MINUTE = 60_000;
const silent = { error: () => {}, warn: () => {}, info: () => {} };

/** A pino logger whose lines the test reads. */
function capturedLog() {
  const lines: Array<{ level: number; msg: string; job?: string; duration_ms?: number; result?: unknown }> = [];
  const stream = new Writable({
    write(chunk: Buffer, _encoding, done) {
      for (const line of chunk.toString('utf8').split('\n').filter(Boolean)) lines.push(JSON.parse(line));
      done();
    },
  });
  return { log: pino({ level: 'debug' }, stream) as FastifyBaseLogger, lines };
}

/** A job that stays in its run until the test lets it go. */
function heldJob(name: TJob['name'], everyMs: number) {
  let runs = 0;
  let release = () => {};
  let entered = () => {};
  let inside = new Promise<void>((resolve) => (entered = resolve));
  const job: TJob = {
    name,
    everyMs,
    run: async () => {
      runs++;
      entered();
      await new Promise<void>((resolve) => (release = resolve));
      return { runs };
    },
  };
  return {
    job,
    runs: () => runs,
    inside: () => inside,
    release: () => {
      inside = new Promise<void>((resolve) => (entered = resolve));
      release();
    },
  };
}

describe.each(ENGINES)('the scheduler (%s)', (engine) => {
  let database: Awaited<ReturnType<typeof openTestDb>>;
  let clock = NOW;
  const schedulers: TScheduler[] = [];
  const make = async (jobs: TJob[], enabled: TJob['name'][], log: FastifyBaseLogger = pino({ level: 'silent' })) => {
    const scheduler = createScheduler({ db: database.db, now: () => clock, log, jobs, enabled });
    schedulers.push(scheduler);
    return scheduler;
  };
  beforeAll(async () => {
    database = await openTestDb(engine);
    await migrate(database.db);
  });
  afterEach(async () => {
    await Promise.all(schedulers.splice(0).map((scheduler) => scheduler.stop()));
    await database.db.query('DELETE FROM job_runs');
    clock = NOW;
  });
  afterAll(async () => database?.drop());

  it('runs an enabled job once per interval on the clock, never a disabled one unless asked by name', async () => {
    let purges = 0;
    let fees = 0;
    const scheduler = await make(
      [
        { name: 'purge', everyMs: 10 * MINUTE, run: async () => ++purges },
        { name: 'card-fees', everyMs: MINUTE, run: async () => ++fees },
      ],
      ['purge'],
    );
    expect(await scheduler.runDue()).toEqual([]);
    clock = new Date(NOW.getTime() + 10 * MINUTE - 1);
    expect(await scheduler.runDue()).toEqual([]);
    clock = new Date(NOW.getTime() + 10 * MINUTE);
    expect(await scheduler.runDue()).toMatchObject([{ job: 'purge', ran: true, error: null }]);
    expect(await scheduler.runDue()).toEqual([]);
    clock = new Date(NOW.getTime() + 25 * MINUTE);
    await scheduler.runDue();
    expect([purges, fees]).toEqual([2, 0]);
    // The switch decides what runs on its own; a test or an operator may still run any job.
    expect(await scheduler.runJob('card-fees')).toMatchObject({ job: 'card-fees', ran: true });
    expect([purges, fees]).toEqual([2, 1]);
  });

  it('logs one line per run, a failure as an error, and shows the last run, its duration and failure in the status', async () => {
    const { log, lines } = capturedLog();
    let fail = true;
    const scheduler = await make(
      [
        {
          name: 'purge',
          everyMs: 10 * MINUTE,
          run: async () => {
            if (fail) throw new Error('disk full');
            return { purged: 3 };
          },
        },
        { name: 'realtime-check', everyMs: 2_000, scope: 'core', run: async () => {} },
      ],
      ['purge'],
      log,
    );
    expect((await scheduler.status()).map((job) => [job.name, job.enabled, job.last_run_at])).toEqual([
      ['purge', true, null],
      ['realtime-check', false, null],
    ]);
    expect(await scheduler.runJob('purge')).toMatchObject({ ran: true, error: 'disk full' });
    expect(lines.filter((line) => line.job === 'purge')).toEqual([expect.objectContaining({ level: 50, msg: 'job purge failed' })]);
    expect((await scheduler.status())[0]).toMatchObject({ name: 'purge', running: false, last_run_at: NOW.toISOString(), error: 'disk full' });

    fail = false;
    clock = new Date(NOW.getTime() + 10 * MINUTE);
    await scheduler.runDue();
    const done = lines.filter((line) => line.job === 'purge').slice(1);
    expect(done).toEqual([expect.objectContaining({ level: 30, msg: 'job purge done', result: { purged: 3 } })]);
    expect(done[0]!.duration_ms).toBeGreaterThanOrEqual(0);
    expect((await scheduler.status())[0]).toMatchObject({ last_run_at: clock.toISOString(), error: null, duration_ms: done[0]!.duration_ms });
    // A frequent job's success is a debug line; its last run is this core's own.
    await scheduler.runJob('realtime-check');
    expect(lines.filter((line) => line.job === 'realtime-check')).toEqual([expect.objectContaining({ level: 20, msg: 'job realtime-check done' })]);
    expect((await scheduler.status())[1]).toMatchObject({ name: 'realtime-check', last_run_at: clock.toISOString(), error: null });
  });

  it('never runs a job beside its own run in flight; a claim whose core died is taken once its lease has passed', async () => {
    const held = heldJob('purge', 10 * MINUTE);
    const scheduler = await make([held.job], ['purge']);
    const first = scheduler.runJob('purge');
    await held.inside();
    expect(await scheduler.runJob('purge')).toMatchObject({ ran: false });
    expect((await scheduler.status())[0]).toMatchObject({ running: true });
    held.release();
    expect(await first).toMatchObject({ ran: true });
    expect(held.runs()).toBe(1);

    // Another core died holding the claim: skipped while its lease lasts, then taken.
    await database.db.query(`UPDATE job_runs SET running_by = 'dead core', lease_until = $1 WHERE name = 'purge'`, [new Date(NOW.getTime() + MINUTE)]);
    expect(await scheduler.runJob('purge')).toMatchObject({ ran: false });
    clock = new Date(NOW.getTime() + MINUTE + 1);
    const taken = scheduler.runJob('purge');
    await held.inside();
    held.release();
    expect(await taken).toMatchObject({ ran: true });
    expect(held.runs()).toBe(2);
  });

  it('a start-up job runs at once, and knows it is its first run', async () => {
    const seen: boolean[] = [];
    const scheduler = await make([{ name: 'webhook-retry', everyMs: 15_000, atStart: true, run: async ({ first }) => seen.push(first) }], ['webhook-retry']);
    await scheduler.runDue();
    clock = new Date(NOW.getTime() + 15_000);
    await scheduler.runDue();
    expect(seen).toEqual([true, false]);
  });
});

describe('the app and its jobs', () => {
  let ctx: Awaited<ReturnType<typeof build>> | undefined;
  afterEach(async () => {
    await ctx?.close();
    ctx = undefined;
  });

  it('tests run no job by default; JOBS names those that run, and the readiness details show them', async () => {
    let clock = NOW;
    ctx = await build('pglite', {}, { now: () => clock });
    clock = new Date(NOW.getTime() + 60 * MINUTE);
    expect(await ctx.app.jobs.runDue()).toEqual([]);
    await ctx.close();
    // Started with jobs enabled, its clock ticks on its own; nothing is due until the test moves the clock.

    clock = NOW;
    ctx = await build('pglite', { JOBS: 'purge,deposit-expiry' }, { now: () => clock });
    clock = new Date(NOW.getTime() + 10 * MINUTE);
    expect((await ctx.app.jobs.runDue()).map((run) => [run.job, run.ran, run.error])).toEqual([
      ['purge', true, null],
      ['deposit-expiry', true, null],
    ]);
    const res = await ctx.app.inject({ url: '/api/internal/health' });
    expect(res.statusCode).toBe(200);
    const jobs = res.json().jobs as Array<{ name: string; enabled: boolean; last_run_at: string | null; error: string | null }>;
    expect(jobs.filter((job) => job.enabled).map((job) => [job.name, job.last_run_at, job.error])).toEqual([
      ['purge', clock.toISOString(), null],
      ['deposit-expiry', clock.toISOString(), null],
    ]);
    expect(jobs.find((job) => job.name === 'payouts')).toMatchObject({ enabled: false, last_run_at: null });
    // The public health answer stays as it was: job failures may name tables or hosts.
    expect((await ctx.app.inject({ url: '/api/health' })).json()).toEqual({ status: 'ok' });
  });

  it('refuses an unknown job name in JOBS at start', () => {
    expect(() => testConfig({ JOBS: 'purge,nightly-report' })).toThrow(/JOBS: unknown job nightly-report/);
    expect(testConfig({ JOBS: 'all' }).JOBS).toContain('payouts');
    expect(testConfig({ JOBS: ' purge , purge ' }).JOBS).toEqual(['purge']);
  });
});

/** Two cores (two apps with their own pools) on one PostgreSQL database, one clock. */
describe.skipIf(!process.env.TEST_DATABASE_URL)('jobs with two cores on one PostgreSQL', () => {
  let ctx: Awaited<ReturnType<typeof build>>;
  let second: { app: FastifyInstance; db: Db };
  let clock = NOW;
  beforeAll(async () => {
    ctx = await build('postgres', { JOBS: 'purge,deposit-expiry,card-fees,referral-settlement' }, { now: () => clock });
    const db = await openDb({ DATABASE_URL: ctx.url!, DATA_DIR: '', DB_POOL_SIZE: 8 }, silent);
    const app2 = Fastify({ logger: false, pluginTimeout: 120_000 }) as unknown as FastifyInstance;
    await app2.register(app, { config: testConfig({ JOBS: 'purge,deposit-expiry,card-fees,referral-settlement' }), db, now: () => clock });
    await app2.ready();
    second = { app: app2, db };
  });
  afterAll(async () => {
    await second?.app.close();
    await second?.db.close();
    await ctx?.close();
  });

  it('each job due at the same moment on both cores runs on one of them, round after round', async () => {
    for (let round = 1; round <= 5; round++) {
      clock = new Date(NOW.getTime() + round * 10 * MINUTE);
      const [a, b] = await Promise.all([ctx.app.jobs.runDue(), second.app.jobs.runDue()]);
      const ran = [...a, ...b].filter((run) => run.ran);
      expect(ran.map((run) => run.job).sort()).toEqual(['card-fees', 'deposit-expiry', 'purge', 'referral-settlement']);
      expect(ran.every((run) => run.error === null)).toBe(true);
    }
  });

  it('a run in flight on one core keeps the other core from running that job by name', async () => {
    const dbs = [ctx.db, second.db];
    const held = heldJob('payouts', 5_000);
    const [one, two] = dbs.map((db) => createScheduler({ db, now: () => clock, log: pino({ level: 'silent' }), jobs: [held.job], enabled: [] }));
    try {
      const first = one!.runJob('payouts');
      await held.inside();
      expect(await two!.runJob('payouts')).toMatchObject({ ran: false });
      held.release();
      expect(await first).toMatchObject({ ran: true });
      expect(held.runs()).toBe(1);
    } finally {
      await Promise.all([one!.stop(), two!.stop()]);
    }
  });
});
