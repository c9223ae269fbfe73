import type { Queryable, TStatement } from './index.ts';

const keptByHandle = new WeakMap<Queryable, Map<string, { version: string; value: unknown }>>();

/**
 * What `load` answers, kept per database handle for as long as a counter that triggers bump in
 * every writing transaction (`counter` reads it as `version`) keeps its number: one number is
 * read per call instead of the rows. A change committed between reading the counter and
 * loading is kept under the older number and loaded again on the next call, never the other
 * way round. The kept value is shared: callers must not change it.
 */
export async function keptWhileCounterHolds<T>(db: Queryable, counter: TStatement, key: string, load: () => Promise<T>): Promise<T> {
  const [current] = await db.query<{ version: string }>(counter);
  let kept = keptByHandle.get(db);
  if (!kept) keptByHandle.set(db, (kept = new Map()));
  const slot = `${counter.name}:${key}`;
  const hit = kept.get(slot);
  if (current && hit?.version === current.version) return hit.value as T;
  const value = await load();
  if (current) kept.set(slot, { version: current.version, value });
  return value;
}
