/**
 * The browser's one realtime socket: `/ws` on our own origin (the BFF reads the
 * session from the cookie). Events are applied to the stores through the same applyEnvelope()
 * as every /api answer (one code path): an event's payload is a partial envelope
 * (`wallets`: {wallets, total_balance}; `notifications`: {notifications}; `unread_msgs`:
 * {unread_msgs}). Every event is also dispatched on `window` as `obmen:event` for islands
 * (chat) to pick up. Framework-free and without zod: the envelope code loads on the first event.
 *
 * The last sequence number is kept per tab and account (sessionStorage), so the next page of
 * the same tab asks for what came after it; so is the last one of the changes for everyone
 * (`broadcast`: the user's notifications as a whole, applied like an event). Reconnects back off from 1 s to 30 s with jitter;
 * a session that ended (close 4401) is not reconnected. A socket the BFF closed because a newer
 * one of the same session took its place (4409: more tabs than WS_MAX_PER_SESSION) waits until
 * its tab is looked at again (shown or focused), then reconnects and replays what it missed:
 * the tabs in use stay live, the ones in the background sleep, and none fight in a loop.
 */
import { REALTIME_PATH, SOCKET_CLOSE, type TFeedItem, type TRealtimeEvent, type TSocketMessage } from '@obmen/shared/realtime';

export const REALTIME_EVENT = 'obmen:event';
/** Dispatched on `window` when some pair's rate moved (the pair page's chart listens). */
export const RATES_EVENT = 'obmen:rates';

export type TRealtimeOptions = {
  accountId: number;
  onFeed?: (item: TFeedItem) => void;
  /** Some pair's rate moved. */
  onRates?: () => void;
  /** After a resync: refetch the state (the caller asks GET /api/auth/check through api()). */
  onResync?: () => void;
  onSessionEnded?: () => void;
};

type TSeams = {
  open(url: string): WebSocket;
  storage: Pick<Storage, 'getItem' | 'setItem' | 'removeItem'>;
  apply(payload: unknown): void;
  dispatch(event: TRealtimeEvent): void;
  setTimer(fn: () => void, ms: number): void;
  random(): number;
  href(): string;
  /** Calls `fn` once, the next time the tab is shown or focused. */
  whenLookedAt(fn: () => void): void;
};

function whenLookedAt(fn: () => void): void {
  const wake = () => {
    if (document.visibilityState !== 'visible') return;
    document.removeEventListener('visibilitychange', wake);
    window.removeEventListener('focus', wake);
    fn();
  };
  document.addEventListener('visibilitychange', wake);
  window.addEventListener('focus', wake);
}

const browserSeams = (): TSeams => ({
  open: (url) => new WebSocket(url),
  storage: window.sessionStorage,
  apply: (payload) => void import('./envelope.ts').then(({ applyEnvelope }) => applyEnvelope(payload)),
  dispatch: (event) => window.dispatchEvent(new CustomEvent(REALTIME_EVENT, { detail: event })),
  setTimer: (fn, ms) => void window.setTimeout(fn, ms),
  random: Math.random,
  href: () => window.location.href,
  whenLookedAt,
});

export function backoffMs(attempt: number, random: number): number {
  const base = Math.min(30_000, 1_000 * 2 ** Math.min(attempt, 5));
  return Math.round(base / 2 + (base / 2) * random);
}

export function startRealtime(options: TRealtimeOptions, seams: TSeams = browserSeams()): { stop(): void } {
  const key = `obmen.rt_seq.${options.accountId}`;
  const broadcastKey = `obmen.rt_bseq.${options.accountId}`;
  let attempt = 0;
  let stopped = false;
  let socket: WebSocket | null = null;
  const stored = () => {
    const value = Number(seams.storage.getItem(key));
    return Number.isSafeInteger(value) && value > 0 ? value : null;
  };
  let last = stored();
  let lastBroadcast = ((value) => (Number.isSafeInteger(value) && value > 0 ? value : null))(Number(seams.storage.getItem(broadcastKey)));

  const connect = () => {
    if (stopped) return;
    const url = new URL(REALTIME_PATH, seams.href());
    url.protocol = url.protocol === 'https:' ? 'wss:' : 'ws:';
    if (last !== null) url.searchParams.set('since', String(last));
    if (lastBroadcast !== null) url.searchParams.set('bsince', String(lastBroadcast));
    let opened = false;
    const ws = seams.open(url.href);
    socket = ws;
    ws.onmessage = (message) => {
      opened = true;
      let data: TSocketMessage;
      try {
        data = JSON.parse(String(message.data)) as TSocketMessage;
      } catch {
        return;
      }
      handle(data);
    };
    ws.onclose = (event) => {
      socket = null;
      if (stopped) return;
      if (event.code === SOCKET_CLOSE.sessionEnded) {
        stopped = true;
        options.onSessionEnded?.();
        return;
      }
      if (event.code === SOCKET_CLOSE.replaced) {
        attempt = 0;
        seams.whenLookedAt(connect);
        return;
      }
      // Refused before any message (e.g. a stale sequence number): start afresh next time.
      if (!opened && (last !== null || lastBroadcast !== null)) {
        last = null;
        lastBroadcast = null;
        seams.storage.removeItem(key);
        seams.storage.removeItem(broadcastKey);
      }
      if (opened) attempt = 0;
      seams.setTimer(connect, backoffMs(attempt++, seams.random()));
    };
  };

  const remember = (seq: number) => {
    last = seq;
    seams.storage.setItem(key, String(seq));
  };
  const rememberBroadcast = (seq: number) => {
    lastBroadcast = seq;
    seams.storage.setItem(broadcastKey, String(seq));
  };

  const handle = (message: TSocketMessage) => {
    switch (message.type) {
      case 'hello':
        attempt = 0;
        if (last === null || message.seq < last) remember(message.seq);
        if (lastBroadcast === null || message.bseq < lastBroadcast) rememberBroadcast(message.bseq);
        return;
      case 'broadcast':
        if (lastBroadcast !== null && message.seq <= lastBroadcast) return;
        rememberBroadcast(message.seq);
        if (message.payload !== null && typeof message.payload === 'object') seams.apply(message.payload);
        return;
      case 'events':
        for (const event of message.events) {
          if (last !== null && event.seq <= last) continue;
          remember(event.seq);
          if (event.payload !== null && typeof event.payload === 'object') seams.apply(event.payload);
          seams.dispatch(event);
        }
        return;
      case 'resync':
        remember(message.seq);
        options.onResync?.();
        return;
      case 'feed':
        options.onFeed?.(message.item);
        return;
      case 'rates':
        options.onRates?.();
    }
  };

  connect();
  return {
    stop() {
      stopped = true;
      socket?.close();
    },
  };
}
