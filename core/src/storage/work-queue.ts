import { AppError } from '../errors.ts';

export type TWorkQueueOptions = {
  /** Jobs running at once. */
  concurrency: number;
  /** Jobs waiting, all owners together; one more is refused (503 overloaded). */
  maxWaiting: number;
  /** Jobs of one owner, running and waiting; one more is refused (503 overloaded). */
  maxPerOwner: number;
  /** Jobs of one owner running at once: below `concurrency`, a slot stays free for everyone else. */
  maxRunningPerOwner: number;
  /** Retry-After of a refusal, in seconds. */
  retryAfterS: number;
};

type TJob = { start: () => void };

export type TWorkQueue = {
  /**
   * Runs `work` when a slot is free. Owners take turns (the one served least recently goes
   * next) and none holds every slot, so a user who sends many files waits behind their own,
   * not another user behind them. A job whose signal aborts while it waits never starts;
   * `work` gets the signal to stop early.
   */
  run<T>(owner: string, signal: AbortSignal | undefined, work: (signal: AbortSignal | undefined) => Promise<T>): Promise<T>;
  /** Jobs running and waiting now, and how many may run (tests and logs). */
  stats(): { running: number; waiting: number; concurrency: number };
};

export const overloaded = (retryAfterS: number) => new AppError('overloaded', { headers: { 'retry-after': String(retryAfterS) } });

export function createWorkQueue(options: TWorkQueueOptions): TWorkQueue {
  let running = 0;
  let waiting = 0;
  /** Per owner: their waiting jobs in order. */
  const queues = new Map<string, TJob[]>();
  /** Per owner with work: jobs running and waiting, jobs running, and when one of theirs last started. */
  const pending = new Map<string, number>();
  const active = new Map<string, number>();
  const lastStarted = new Map<string, number>();
  let starts = 0;

  /** The owner served least recently (never served first): a turn each, whatever their backlog. */
  const nextOwner = (): string | undefined => {
    let chosen: string | undefined;
    for (const owner of queues.keys()) {
      if ((active.get(owner) ?? 0) >= options.maxRunningPerOwner) continue;
      if (chosen === undefined || (lastStarted.get(owner) ?? -1) < (lastStarted.get(chosen) ?? -1)) chosen = owner;
    }
    return chosen;
  };

  const next = () => {
    while (running < options.concurrency) {
      const owner = nextOwner();
      if (owner === undefined) return;
      const jobs = queues.get(owner)!;
      const job = jobs.shift()!;
      if (!jobs.length) queues.delete(owner);
      lastStarted.set(owner, starts++);
      active.set(owner, (active.get(owner) ?? 0) + 1);
      waiting--;
      running++;
      job.start();
    }
  };

  const release = (owner: string) => {
    const left = (pending.get(owner) ?? 1) - 1;
    if (left) pending.set(owner, left);
    else {
      pending.delete(owner);
      lastStarted.delete(owner);
    }
  };

  return {
    run(owner, signal, work) {
      if (signal?.aborted) return Promise.reject(signal.reason);
      const mine = pending.get(owner) ?? 0;
      if (mine >= options.maxPerOwner || waiting >= options.maxWaiting) return Promise.reject(overloaded(options.retryAfterS));
      pending.set(owner, mine + 1);
      return new Promise((resolve, reject) => {
        const onAbort = () => {
          const jobs = queues.get(owner);
          const at = jobs?.indexOf(job) ?? -1;
          if (at < 0) return;
          jobs!.splice(at, 1);
          if (!jobs!.length) queues.delete(owner);
          waiting--;
          release(owner);
          reject(signal!.reason);
        };
        const job: TJob = {
          start: () => {
            signal?.removeEventListener('abort', onAbort);
            Promise.resolve()
              .then(() => work(signal))
              .then(resolve, reject)
              .finally(() => {
                running--;
                const left = active.get(owner)! - 1;
                if (left) active.set(owner, left);
                else active.delete(owner);
                release(owner);
                next();
              });
          },
        };
        signal?.addEventListener('abort', onAbort, { once: true });
        const jobs = queues.get(owner);
        if (jobs) jobs.push(job);
        else queues.set(owner, [job]);
        waiting++;
        next();
      });
    },
    stats: () => ({ running, waiting, concurrency: options.concurrency }),
  };
}
