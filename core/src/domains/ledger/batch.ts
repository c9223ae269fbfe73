import type { Db } from '../../db/index.ts';
import { AppError } from '../../errors.ts';

/*
 * Concurrent money calls of one kind made as one statement: one round trip and one commit for
 * all of them (group commit). A call that finds a free slot goes out on the next turn of the
 * event loop with whatever arrived in the same turn; calls arriving while every slot is busy
 * wait and leave together as soon as one frees, so a batch grows with the load and a lone call
 * waits for nothing. The statement answers each item for itself (its own result or its own
 * refusal); the SQL function keeps the locking order and the per-item savepoints
 * (money_transfer_many). A batch that fails as a whole on something an item may have caused (a
 * broken rule, an unexpected SQL error) or on contention ("busy": serialization failures or
 * deadlocks beyond the retries, likelier for a big transaction) is run again item by item, so
 * one bad item fails only itself and a small transaction gets its own retries; the database
 * unavailable or a statement timeout (what any item would meet alone too) is every item's
 * answer at once.
 */

/** What the statement says of one item: its result, or the error its caller gets. */
export type TBatchOutcome<R> = { value: R } | { error: unknown };

export type TBatchOptions<I, R> = {
  /** One statement for all the items, answering them in their order. */
  run: (db: Db, items: readonly I[]) => Promise<Array<TBatchOutcome<R>>>;
  /** Items per statement at most. */
  max: number;
  /** Statements in flight at once (on different connections of the pool). */
  slots: number;
};

type TWaiting<I, R> = { item: I; resolve: (value: R) => void; reject: (error: unknown) => void };

type TQueue<I, R> = { waiting: Array<TWaiting<I, R>>; busy: number; scheduled: boolean };

/** The batched call: `call(db, item)` resolves with the item's own outcome. */
export function batchedCall<I, R>(options: TBatchOptions<I, R>): (db: Db, item: I) => Promise<R> {
  const queues = new WeakMap<Db, TQueue<I, R>>();

  const settle = (batch: Array<TWaiting<I, R>>, outcomes: Array<TBatchOutcome<R>>) => {
    batch.forEach((waiting, index) => {
      const outcome = outcomes[index];
      if (outcome && 'value' in outcome) waiting.resolve(outcome.value);
      else waiting.reject(outcome ? outcome.error : new Error(`batch answered ${outcomes.length} of ${batch.length} items`));
    });
  };

  const send = async (db: Db, batch: Array<TWaiting<I, R>>) => {
    try {
      settle(
        batch,
        await options.run(
          db,
          batch.map((waiting) => waiting.item),
        ),
      );
    } catch (error) {
      if (batch.length === 1 || (error instanceof AppError && error.code !== 'busy'))
        return settle(
          batch,
          batch.map(() => ({ error })),
        );
      await Promise.all(batch.map((waiting) => send(db, [waiting])));
    }
  };

  const flush = (db: Db, queue: TQueue<I, R>) => {
    queue.scheduled = false;
    while (queue.busy < options.slots && queue.waiting.length) {
      const batch = queue.waiting.splice(0, options.max);
      queue.busy++;
      void send(db, batch).finally(() => {
        queue.busy--;
        flush(db, queue);
      });
    }
  };

  return (db, item) =>
    new Promise<R>((resolve, reject) => {
      let queue = queues.get(db);
      if (!queue) queues.set(db, (queue = { waiting: [], busy: 0, scheduled: false }));
      queue.waiting.push({ item, resolve, reject });
      if (queue.busy < options.slots && !queue.scheduled) {
        queue.scheduled = true;
        const ready = queue;
        setImmediate(() => flush(db, ready));
      }
    });
}
