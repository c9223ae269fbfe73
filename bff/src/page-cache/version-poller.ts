import type { TClock } from '../clock.ts';
import type { TPageStore } from './store.ts';

export type TVersionPollerOptions = {
  /** The core's content version; undefined for an answer without one; throws when unreachable. */
  fetchVersion: () => Promise<string | undefined>;
  store: Pick<TPageStore, 'sweep' | 'clear' | 'invalidate' | 'stats'>;
  pollMs: number;
  /** The polling stops after this long without a cacheable request. */
  idleMs: number;
  clock: TClock;
  onError: (err: unknown) => void;
};

export type TVersionPoller = ReturnType<typeof createVersionPoller>;

/**
 * Keeps the store true to the core's content: while pages are wanted it asks for the content
 * version every pollMs (one call per BFF instance whatever the traffic) and clears the store
 * when the version changes. Without a cacheable request for idleMs (and nothing left to
 * serve) it stops; the next visitor starts it again from an unknown version, so that first
 * page is rendered but not stored.
 */
export function createVersionPoller({ fetchVersion, store, pollMs, idleMs, clock, onError }: TVersionPollerOptions) {
  let version: string | undefined;
  let invalidations = 0;
  let lastWanted = 0;
  let timer: NodeJS.Timeout | null = null;
  let polling: Promise<void> | null = null;

  async function pollOnce(): Promise<void> {
    try {
      const current = await fetchVersion();
      if (current === undefined) return;
      if (version !== undefined && current !== version) {
        invalidations++;
        store.clear();
      }
      version = current;
    } catch (err) {
      // The core is away: keep what we have (entries still expire by TTL).
      onError(err);
    }
  }

  /** One poll at a time: callers during a poll share it. */
  function poll(): Promise<void> {
    polling ??= pollOnce().finally(() => {
      polling = null;
    });
    return polling;
  }

  function stopTimer(): void {
    if (timer) clearInterval(timer);
    timer = null;
  }

  function tick(): void {
    store.sweep();
    if (clock.now() - lastWanted > idleMs && store.stats().entries === 0) {
      stopTimer();
      version = undefined;
      store.invalidate();
      return;
    }
    void poll();
  }

  return {
    /** The content version pages are stored under; undefined until known (nothing is stored). */
    version: () => version,
    invalidations: () => invalidations,
    isRunning: () => timer !== null,
    /** A cacheable request came: keep polling, or start again. */
    wanted(): void {
      lastWanted = clock.now();
      if (timer) return;
      timer = setInterval(tick, pollMs);
      timer.unref();
      void poll();
    },
    pollNow: poll,
    tick,
    async stop(): Promise<void> {
      stopTimer();
      await polling;
    },
  };
}
