import WebSocket from 'ws';
import { REALTIME_LINK_PATH, type TLinkMessage, type TLinkRequest } from '@obmen/shared';
import { frameText } from './frame.ts';

/**
 * The BFF's one websocket to the core's event stream (core/src/domains/realtime/routes.ts),
 * shared by every browser socket of this BFF. Opened on the first subscription, re-opened on
 * the next one after a loss. The `ws` client (the same package @fastify/websocket serves with):
 * it reads a busy link with less CPU than Node's built-in WebSocket. When it drops, every subscription hears `lost()` (its browser
 * socket closes, the browser reconnects with its last sequence number and replays).
 *
 * A relayed message is never parsed here: only the header before its first newline is
 * (TLinkMessage); the rest is the browser's message as the core serialised it, framed once
 * (frame.ts) and handed to each listed subscription as the same bytes.
 */
export type TSubHandlers = {
  /** A browser message (events, resync, feed) as a ready websocket frame, shared by every socket it goes to. */
  relay(frame: Buffer): void;
  ended(): void;
  lost(): void;
};

const NEWLINE = 0x0a;

export type TSubscribeResult =
  | { ok: true; sub: number; seq: number; bseq: number }
  | { ok: false; code: 'unauthorized' | 'event_sequence_future' | 'unavailable' };

type TLog = { warn: (obj: object, msg: string) => void };

export function createLink(upstreamUrl: string, log: TLog, options: { timeoutMs?: number } = {}) {
  const url = new URL(REALTIME_LINK_PATH, upstreamUrl);
  url.protocol = url.protocol === 'https:' ? 'wss:' : 'ws:';
  const timeoutMs = options.timeoutMs ?? 5_000;
  let socket: WebSocket | null = null;
  let opening: Promise<WebSocket> | null = null;
  let nextSub = 1;
  const subs = new Map<number, TSubHandlers>();
  const pending = new Map<number, { resolve: (result: TSubscribeResult) => void; handlers: TSubHandlers }>();

  const open = (): Promise<WebSocket> => {
    if (socket?.readyState === WebSocket.OPEN) return Promise.resolve(socket);
    opening ??= new Promise<WebSocket>((resolve, reject) => {
      const ws = new WebSocket(url);
      const timer = setTimeout(() => ws.close(), timeoutMs);
      ws.addEventListener('open', () => {
        clearTimeout(timer);
        socket = ws;
        opening = null;
        resolve(ws);
      });
      ws.on('message', (data: Buffer) => onMessage(data));
      ws.addEventListener('close', () => {
        clearTimeout(timer);
        if (socket === ws) lost();
        else {
          opening = null;
          reject(new Error('the core event stream is unreachable'));
        }
      });
      ws.addEventListener('error', () => {});
    });
    return opening;
  };

  const lost = () => {
    socket = null;
    const all = [...subs.values()];
    subs.clear();
    for (const { resolve } of pending.values()) resolve({ ok: false, code: 'unavailable' });
    pending.clear();
    if (all.length) log.warn({ subscriptions: all.length }, 'realtime: link to the core lost');
    for (const handlers of all) handlers.lost();
  };

  const onMessage = (data: Buffer) => {
    const cut = data.indexOf(NEWLINE);
    let message: TLinkMessage;
    try {
      message = JSON.parse(data.toString('utf8', 0, cut < 0 ? data.length : cut)) as TLinkMessage;
    } catch {
      return;
    }
    switch (message.op) {
      case 'ok':
      case 'refused': {
        const waiting = pending.get(message.sub);
        if (!waiting) return;
        pending.delete(message.sub);
        if (message.op === 'ok') {
          subs.set(message.sub, waiting.handlers);
          waiting.resolve({ ok: true, sub: message.sub, seq: message.seq, bseq: message.bseq });
        } else waiting.resolve({ ok: false, code: message.code });
        return;
      }
      case 'relay': {
        if (cut < 0) return;
        const frame = frameText(data.subarray(cut + 1));
        if (!message.subs) for (const handlers of subs.values()) handlers.relay(frame);
        else for (const id of message.subs) subs.get(id)?.relay(frame);
        return;
      }
      case 'ended': {
        for (const id of message.subs) {
          const handlers = subs.get(id);
          subs.delete(id);
          handlers?.ended();
        }
      }
    }
  };

  const send = (request: TLinkRequest) => socket?.send(JSON.stringify(request));

  return {
    /**
     * Asks the core: is this session alive, is `since` not from the future? Then events flow to
     * `handlers`, and changes for everyone after `bsince`. `ops`: an operator's token, for the
     * back office's desk state instead of a customer's events.
     */
    async subscribe(
      token: string,
      { since, bsince, ops = false }: { since: number | null; bsince: number | null; ops?: boolean },
      handlers: TSubHandlers,
    ): Promise<TSubscribeResult> {
      try {
        await open();
      } catch {
        return { ok: false, code: 'unavailable' };
      }
      const sub = nextSub++;
      return new Promise<TSubscribeResult>((resolve) => {
        const timer = setTimeout(() => {
          if (pending.delete(sub)) resolve({ ok: false, code: 'unavailable' });
          send({ op: 'unsub', sub });
        }, timeoutMs);
        pending.set(sub, {
          handlers,
          resolve: (result) => {
            clearTimeout(timer);
            resolve(result);
          },
        });
        send({ op: 'sub', sub, token, since, bsince, ...(ops && { ops }) });
      });
    },
    unsubscribe(sub: number): void {
      if (subs.delete(sub)) send({ op: 'unsub', sub });
    },
    close(): void {
      const ws = socket;
      socket = null;
      subs.clear();
      ws?.close();
    },
    stats: () => ({ connected: socket?.readyState === WebSocket.OPEN, subscriptions: subs.size }),
  };
}
