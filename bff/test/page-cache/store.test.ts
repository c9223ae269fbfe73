import { describe, expect, it } from 'vitest';
import { createPageStore } from '../../src/page-cache/store.ts';

const HTML = { 'content-type': 'text/html' };
const page = (text: string) => [Buffer.from(`<!doctype html><p>${text}</p>`)];

function makeStore(options: { ttlMs?: number; maxBytes?: number; idleMs?: number } = {}) {
  const clock = { t: Date.parse('2026-11-23T09:00:00Z'), now: () => clock.t };
  const store = createPageStore({ ttlMs: options.ttlMs ?? 1_000, maxBytes: options.maxBytes ?? 1_000_000, idleMs: options.idleMs ?? 60_000, clock });
  return { store, clock };
}

describe('page store', () => {
  it('keeps a page for the TTL on its clock, then no longer serves it', async () => {
    const { store, clock } = makeStore({ ttlMs: 1_000 });
    expect(await store.put('ru /a', store.generation(), 200, HTML, page('a'))).toBe(true);
    clock.t += 999;
    expect(store.peek('ru /a').entry).toBeDefined();
    clock.t += 1;
    expect(store.peek('ru /a')).toEqual({});
    expect(store.stats()).toMatchObject({ stored: 1, entries: 1 });
  });

  it('serves an expired copy while its refresh is under way, and drops it when the refresh stores nothing', async () => {
    const { store, clock } = makeStore({ ttlMs: 1_000 });
    await store.put('ru /a', store.generation(), 200, HTML, page('a'));
    clock.t += 5_000;
    const fill = store.startFill('ru /a');
    expect(store.peek('ru /a').entry).toBeDefined();
    store.finishFill('ru /a', fill, false);
    await fill.promise;
    expect(store.peek('ru /a')).toEqual({});
    expect(store.stats().entries).toBe(0);
  });

  it('makes visitors of a key with no page wait for the render under way', async () => {
    const { store } = makeStore();
    const fill = store.startFill('ru /b');
    const { entry, wait } = store.peek('ru /b');
    expect(entry).toBeUndefined();
    let released = false;
    const waited = wait!.then(() => (released = true));
    await store.put('ru /b', store.generation(), 200, HTML, page('b'));
    store.finishFill('ru /b', fill, true);
    await waited;
    expect(released).toBe(true);
    expect(store.isFilling('ru /b')).toBe(false);
    expect(store.peek('ru /b').entry).toBeDefined();
  });

  it('refuses what a render of an older generation, a non-200, a cookie or a non-HTML answer brings', async () => {
    const { store } = makeStore();
    const before = store.generation();
    store.invalidate();
    expect(await store.put('ru /a', before, 200, HTML, page('a'))).toBe(false);
    const now = store.generation();
    expect(await store.put('ru /a', now, 404, HTML, page('a'))).toBe(false);
    expect(await store.put('ru /a', now, 200, { ...HTML, 'set-cookie': 'x=1' }, page('a'))).toBe(false);
    expect(await store.put('ru /a', now, 200, { 'content-type': 'application/json' }, page('a'))).toBe(false);
    expect(await store.put('ru /a', now, 200, { ...HTML, 'content-encoding': 'gzip' }, page('a'))).toBe(false);
    expect(store.stats()).toEqual({ stored: 0, entries: 0, bytes: 0 });
  });

  it('evicts the oldest pages to stay within its byte bound, and never stores a page larger than it', async () => {
    const size = page('x1').reduce((n, b) => n + b.length, 0);
    const { store } = makeStore({ maxBytes: size * 2 });
    for (const key of ['ru /1', 'ru /2', 'ru /3']) await store.put(key, store.generation(), 200, HTML, page(key.slice(-1) + 'x'));
    expect(store.peek('ru /1')).toEqual({});
    expect(store.peek('ru /2').entry).toBeDefined();
    expect(store.peek('ru /3').entry).toBeDefined();
    expect(store.stats()).toMatchObject({ entries: 2, bytes: size * 2 });
    expect(await store.put('ru /big', store.generation(), 200, HTML, page('x'.repeat(size * 2)))).toBe(false);
    expect(store.stats().entries).toBe(2);
  });

  it('sweeps expired copies nobody refreshed within idleMs, and clear() drops everything', async () => {
    const { store, clock } = makeStore({ ttlMs: 1_000, idleMs: 10_000 });
    await store.put('ru /a', store.generation(), 200, HTML, page('a'));
    clock.t += 11_000;
    store.sweep();
    expect(store.stats().entries).toBe(1);
    clock.t += 1;
    store.sweep();
    expect(store.stats()).toMatchObject({ entries: 0, bytes: 0 });
    await store.put('ru /b', store.generation(), 200, HTML, page('b'));
    store.startFill('ru /c');
    const generation = store.generation();
    store.clear();
    expect(store.stats()).toMatchObject({ entries: 0, bytes: 0 });
    expect(store.isFilling('ru /c')).toBe(false);
    expect(store.generation()).toBe(generation + 1);
  });
});
