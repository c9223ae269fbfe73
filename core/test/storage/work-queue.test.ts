import { describe, expect, it } from 'vitest';
import { AppError } from '../../src/errors.ts';
import { createWorkQueue } from '../../src/storage/work-queue.ts';

/** A job that runs until the test lets it finish, and says when it started. */
function gate(log: string[], name: string) {
  let open!: () => void;
  const opened = new Promise<void>((resolve) => {
    open = resolve;
  });
  return {
    work: async () => {
      log.push(name);
      await opened;
      return name;
    },
    open,
  };
}

const flush = () => new Promise((resolve) => setImmediate(resolve));

describe('file work queue', () => {
  it('serves owners in turn: a second user waits behind one job of a flood, not behind the flood', async () => {
    const queue = createWorkQueue({ concurrency: 1, maxWaiting: 10, maxPerOwner: 10, maxRunningPerOwner: 1, retryAfterS: 5 });
    const started: string[] = [];
    const flood = Array.from({ length: 6 }, (_, i) => gate(started, `a${i}`));
    const mine = gate(started, 'b0');
    const floodDone = flood.map((job) => queue.run('a', undefined, job.work));
    await flush();
    const second = queue.run('b', undefined, mine.work);
    expect(started).toEqual(['a0']);
    flood[0]!.open();
    await flush();
    // The next free slot goes to the user who has waited least turns, not to the flood's next file.
    expect(started).toEqual(['a0', 'b0']);
    mine.open();
    expect(await second).toBe('b0');
    for (const job of flood) job.open();
    expect(await Promise.all(floodDone)).toEqual(['a0', 'a1', 'a2', 'a3', 'a4', 'a5']);
    expect(started).toEqual(['a0', 'b0', 'a1', 'a2', 'a3', 'a4', 'a5']);
    expect(queue.stats()).toEqual({ running: 0, waiting: 0, concurrency: 1 });
  });

  it('keeps a slot free for others: a flood runs on all CPUs but one, a second user starts at once', async () => {
    const queue = createWorkQueue({ concurrency: 2, maxWaiting: 10, maxPerOwner: 10, maxRunningPerOwner: 1, retryAfterS: 5 });
    const started: string[] = [];
    const flood = Array.from({ length: 3 }, (_, i) => gate(started, `a${i}`));
    const floodDone = flood.map((job) => queue.run('a', undefined, job.work));
    await flush();
    expect(started).toEqual(['a0']);
    expect(queue.stats()).toEqual({ running: 1, waiting: 2, concurrency: 2 });
    const mine = gate(started, 'b0');
    const second = queue.run('b', undefined, mine.work);
    await flush();
    expect(started).toEqual(['a0', 'b0']);
    mine.open();
    expect(await second).toBe('b0');
    for (const job of flood) job.open();
    await Promise.all(floodDone);
    expect(started).toEqual(['a0', 'b0', 'a1', 'a2']);
  });

  it('refuses past its bounds with 503 overloaded and Retry-After: per owner, then in all', async () => {
    const queue = createWorkQueue({ concurrency: 1, maxWaiting: 2, maxPerOwner: 2, maxRunningPerOwner: 1, retryAfterS: 7 });
    const started: string[] = [];
    const a = [gate(started, 'a0'), gate(started, 'a1')];
    const runs = a.map((job) => queue.run('a', undefined, job.work));
    const third = await queue.run('a', undefined, gate(started, 'a2').work).catch((err: unknown) => err);
    expect(third).toBeInstanceOf(AppError);
    expect(third).toMatchObject({ code: 'overloaded', statusCode: 503, headers: { 'retry-after': '7' } });
    // Another owner still gets in while the queue has room…
    const b = gate(started, 'b0');
    runs.push(queue.run('b', undefined, b.work));
    // …and nobody once it is full (a1 and b0 wait).
    expect(await queue.run('c', undefined, gate(started, 'c0').work).catch((err: AppError) => err.code)).toBe('overloaded');
    for (const job of [...a, b]) job.open();
    await Promise.all(runs);
    expect(started).toEqual(['a0', 'b0', 'a1']);
  });

  it('never starts a job whose client went away while it waited, and frees its place', async () => {
    const queue = createWorkQueue({ concurrency: 1, maxWaiting: 1, maxPerOwner: 5, maxRunningPerOwner: 1, retryAfterS: 5 });
    const started: string[] = [];
    const first = gate(started, 'a0');
    const running = queue.run('a', undefined, first.work);
    const client = new AbortController();
    const waiting = queue.run('b', client.signal, gate(started, 'b0').work);
    client.abort(new Error('client went away'));
    await expect(waiting).rejects.toThrow('client went away');
    expect(queue.stats()).toEqual({ running: 1, waiting: 0, concurrency: 1 });
    const after = gate(started, 'c0');
    const next = queue.run('c', undefined, after.work);
    first.open();
    after.open();
    await Promise.all([running, next]);
    expect(started).toEqual(['a0', 'c0']);
    const gone = new AbortController();
    gone.abort(new Error('gone before asking'));
    await expect(queue.run('d', gone.signal, gate(started, 'd0').work)).rejects.toThrow('gone before asking');
    expect(started).toEqual(['a0', 'c0']);
  });
});
