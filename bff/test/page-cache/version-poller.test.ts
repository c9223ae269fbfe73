import { afterEach, describe, expect, it } from 'vitest';
import { createPageStore } from '../../src/page-cache/store.ts';
import { createVersionPoller, type TVersionPoller } from '../../src/page-cache/version-poller.ts';

const HTML = { 'content-type': 'text/html' };

/** A poller whose interval never fires by itself (tests call tick()), on a clock they move. */
function makePoller(answers: Array<string | undefined | Error>) {
  const clock = { t: Date.parse('2026-11-23T09:00:00Z'), now: () => clock.t };
  const store = createPageStore({ ttlMs: 1_000, maxBytes: 1_000_000, idleMs: 60_000, clock });
  const errors: unknown[] = [];
  let calls = 0;
  const poller = createVersionPoller({
    store,
    clock,
    pollMs: 3_600_000,
    idleMs: 60_000,
    onError: (err) => errors.push(err),
    fetchVersion: async () => {
      const answer = answers[Math.min(calls++, answers.length - 1)];
      if (answer instanceof Error) throw answer;
      return answer;
    },
  });
  return { poller, store, clock, errors, calls: () => calls };
}

describe('content version poller', () => {
  let poller: TVersionPoller | undefined;
  afterEach(() => poller?.stop());

  it('clears the store when the version changes, and only then', async () => {
    const made = makePoller(['1', '1', '2']);
    poller = made.poller;
    await poller.pollNow();
    expect(poller.version()).toBe('1');
    await made.store.put('ru /a', made.store.generation(), 200, HTML, [Buffer.from('<p>a</p>')]);
    await poller.pollNow();
    expect(made.store.stats().entries).toBe(1);
    await poller.pollNow();
    expect(poller.version()).toBe('2');
    expect(poller.invalidations()).toBe(1);
    expect(made.store.stats().entries).toBe(0);
  });

  it('keeps the version and the pages when the core is away or answers without a version', async () => {
    const made = makePoller(['1', new Error('ECONNREFUSED'), undefined]);
    poller = made.poller;
    await poller.pollNow();
    await made.store.put('ru /a', made.store.generation(), 200, HTML, [Buffer.from('<p>a</p>')]);
    await poller.pollNow();
    await poller.pollNow();
    expect(poller.version()).toBe('1');
    expect(made.errors).toHaveLength(1);
    expect(made.store.stats().entries).toBe(1);
  });

  it('shares one poll among callers during it', async () => {
    const made = makePoller(['1']);
    poller = made.poller;
    await Promise.all([poller.pollNow(), poller.pollNow(), poller.pollNow()]);
    expect(made.calls()).toBe(1);
  });

  it('starts when pages are wanted and stops, forgetting the version, after idleMs without a request and with nothing stored', async () => {
    const made = makePoller(['1']);
    poller = made.poller;
    expect(poller.isRunning()).toBe(false);
    poller.wanted();
    expect(poller.isRunning()).toBe(true);
    await poller.pollNow();
    expect(poller.version()).toBe('1');
    made.clock.t += 60_000;
    poller.tick();
    expect(poller.isRunning()).toBe(true);
    made.clock.t += 1;
    const generation = made.store.generation();
    poller.tick();
    expect(poller.isRunning()).toBe(false);
    expect(poller.version()).toBeUndefined();
    // A render that started under the old version is not stored.
    expect(made.store.generation()).toBe(generation + 1);
  });

  it('keeps polling while stored pages remain, even without requests', async () => {
    const made = makePoller(['1']);
    poller = made.poller;
    poller.wanted();
    await poller.pollNow();
    await made.store.put('ru /a', made.store.generation(), 200, HTML, [Buffer.from('<p>a</p>')]);
    made.clock.t += 60_001;
    poller.tick();
    expect(poller.isRunning()).toBe(true);
    expect(poller.version()).toBe('1');
  });
});
