import { describe, expect, it } from 'vitest';
import { SOCKET_CLOSE, type TRealtimeEvent, type TSocketMessage } from '@obmen/shared';
import { applyEnvelope } from '../src/lib/envelope.ts';
import { backoffMs, startRealtime } from '../src/lib/realtime.ts';
import { $totalBalance } from '../src/stores/wallets.ts';
import { roughAmount } from '../../core/src/domains/realtime/hub.ts';
import { randomAvatar } from '../src/scripts/live.ts';

type TFakeSocket = { url: string; onmessage: ((m: { data: string }) => void) | null; onclose: ((e: { code: number }) => void) | null; close(): void };

function harness(stored: Record<string, string> = {}) {
  const sockets: TFakeSocket[] = [];
  const timers: Array<{ fn: () => void; ms: number }> = [];
  const lookedAt: Array<() => void> = [];
  const storage = new Map(Object.entries(stored));
  const applied: unknown[] = [];
  const dispatched: TRealtimeEvent[] = [];
  const seams = {
    open(url: string) {
      const socket: TFakeSocket = { url, onmessage: null, onclose: null, close() {} };
      sockets.push(socket);
      return socket as unknown as WebSocket;
    },
    storage: {
      getItem: (key: string) => storage.get(key) ?? null,
      setItem: (key: string, value: string) => void storage.set(key, value),
      removeItem: (key: string) => void storage.delete(key),
    },
    // The real envelope code: events land in the same stores as /api answers.
    apply: (payload: unknown) => {
      applied.push(payload);
      applyEnvelope(payload, {
        navigate() {},
        reload() {},
        pathname: () => '/',
        storage: { getItem: () => null, setItem() {} },
        now: () => 0,
        editing: () => false,
      });
    },
    dispatch: (event: TRealtimeEvent) => void dispatched.push(event),
    setTimer: (fn: () => void, ms: number) => void timers.push({ fn, ms }),
    random: () => 0.5,
    href: () => 'https://obmen.test/exchanges',
    whenLookedAt: (fn: () => void) => void lookedAt.push(fn),
  };
  const send = (socket: TFakeSocket, message: TSocketMessage) => socket.onmessage!({ data: JSON.stringify(message) });
  return { sockets, timers, lookedAt, storage, applied, dispatched, seams, send };
}

describe('the realtime socket module', () => {
  it('applies events through the envelope once each, in order, and remembers the last sequence per account', () => {
    const h = harness();
    startRealtime({ accountId: 12345674 }, h.seams);
    expect(h.sockets[0]!.url).toBe('wss://obmen.test/ws');
    h.send(h.sockets[0]!, { type: 'hello', seq: 7, bseq: 1 });
    const balance = { currency: 'USD', amount: '12.50', logo: '/image/currencies/usd.svg' };
    h.send(h.sockets[0]!, { type: 'events', events: [{ seq: 8, type: 'wallets', payload: { wallets: [], total_balance: balance } }] });
    h.send(h.sockets[0]!, { type: 'events', events: [{ seq: 8, type: 'wallets', payload: { total_balance: { ...balance, amount: '0' } } }] });
    expect($totalBalance.get()).toEqual(balance);
    expect(h.dispatched.map((e) => e.seq)).toEqual([8]);
    expect(h.storage.get('obmen.rt_seq.12345674')).toBe('8');
  });

  it('reconnects with the last sequence number, backing off, and starts afresh when refused before any message', () => {
    const h = harness({ 'obmen.rt_seq.1': '41' });
    startRealtime({ accountId: 1 }, h.seams);
    expect(h.sockets[0]!.url).toBe('wss://obmen.test/ws?since=41');
    // Refused before any message (e.g. 409): the stored number is dropped.
    h.sockets[0]!.onclose!({ code: 1006 });
    expect(h.storage.has('obmen.rt_seq.1')).toBe(false);
    h.timers.shift()!.fn();
    expect(h.sockets[1]!.url).toBe('wss://obmen.test/ws');
    h.send(h.sockets[1]!, { type: 'hello', seq: 3, bseq: 5 });
    h.sockets[1]!.onclose!({ code: SOCKET_CLOSE.upstreamLost });
    h.timers.shift()!.fn();
    expect(h.sockets[2]!.url).toBe('wss://obmen.test/ws?since=3&bsince=5');
    expect(backoffMs(0, 0.5)).toBe(750);
    expect(backoffMs(10, 1)).toBe(30_000);
  });

  it('a change for everyone (broadcast) is applied once per number and asked for again from the last one after a reconnect', () => {
    const h = harness();
    startRealtime({ accountId: 3 }, h.seams);
    h.send(h.sockets[0]!, { type: 'hello', seq: 0, bseq: 4 });
    const notice = { notification_id: 9, display: 'inner', type: 'success', title: 'Для всех', text: '', buttons: [], closable: true };
    h.send(h.sockets[0]!, { type: 'broadcast', seq: 6, payload: { notifications: [notice] } });
    // A repeat (another core's check, a reconnect) changes nothing.
    h.send(h.sockets[0]!, { type: 'broadcast', seq: 6, payload: { notifications: [] } });
    expect(h.applied).toEqual([{ notifications: [notice] }]);
    // Not a user event: the user's own numbering is untouched.
    expect(h.dispatched).toEqual([]);
    expect(h.storage.get('obmen.rt_seq.3')).toBe('0');
    h.sockets[0]!.onclose!({ code: SOCKET_CLOSE.upstreamLost });
    h.timers.shift()!.fn();
    expect(h.sockets[1]!.url).toBe('wss://obmen.test/ws?since=0&bsince=6');
  });

  it('a resync refetches; an ended session stops for good', () => {
    const h = harness();
    let resynced = 0;
    let ended = 0;
    startRealtime({ accountId: 2, onResync: () => resynced++, onSessionEnded: () => ended++ }, h.seams);
    h.send(h.sockets[0]!, { type: 'resync', seq: 90 });
    expect(resynced).toBe(1);
    expect(h.storage.get('obmen.rt_seq.2')).toBe('90');
    h.sockets[0]!.onclose!({ code: SOCKET_CLOSE.sessionEnded });
    expect(ended).toBe(1);
    expect(h.timers).toEqual([]);
  });

  it('a socket replaced by a newer one of the session (4409) waits for its tab to be looked at, then reconnects from where it was', () => {
    const h = harness();
    startRealtime({ accountId: 4 }, h.seams);
    h.send(h.sockets[0]!, { type: 'hello', seq: 12, bseq: 2 });
    h.sockets[0]!.onclose!({ code: SOCKET_CLOSE.replaced });
    // No timer: a background tab does not reconnect (and close another tab's socket) on its own.
    expect(h.timers).toEqual([]);
    expect(h.sockets).toHaveLength(1);
    expect(h.lookedAt).toHaveLength(1);
    h.lookedAt.shift()!();
    expect(h.sockets).toHaveLength(2);
    expect(h.sockets[1]!.url).toBe('wss://obmen.test/ws?since=12&bsince=2');
  });

  it('the payment popup: amounts rounded to two significant digits, avatars 1 to 15', () => {
    expect(['12345.67', '0.00123456', '7', '99.99', '0'].map(roughAmount)).toEqual(['12000', '0.0012', '7', '99', '0']);
    expect(randomAvatar(() => 0)).toBe(1);
    expect(randomAvatar(() => 0.9999)).toBe(15);
  });
});
