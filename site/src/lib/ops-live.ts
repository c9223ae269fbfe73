/**
 * The desk's live line: the same /ws as customers' pages, opened with `?ops=1`, where the BFF
 * reads the ops_token cookie (never the customer's session) and the core sends the desk's state
 * (`ops.support`: unanswered messages, conversations waiting) whenever it changes. Reconnects
 * back off like the customers' socket; a session that ended (4401) is not reconnected.
 */
import type { TOpsSocketMessage } from '@obmen/shared/ops-support';
import { REALTIME_PATH, SOCKET_CLOSE } from '@obmen/shared/realtime';
import { backoffMs } from './realtime.ts';

export type TDeskLive = { unread: number; waiting: number };

export function startDeskLive(
  onState: (state: TDeskLive) => void,
  onConnected: (connected: boolean) => void,
  open: (url: string) => WebSocket = (url) => new WebSocket(url),
): { stop(): void } {
  let attempt = 0;
  let stopped = false;
  let socket: WebSocket | null = null;
  const connect = () => {
    if (stopped) return;
    const url = new URL(`${REALTIME_PATH}?ops=1`, window.location.href);
    url.protocol = url.protocol === 'https:' ? 'wss:' : 'ws:';
    const ws = open(url.toString());
    socket = ws;
    ws.onopen = () => {
      attempt = 0;
      onConnected(true);
    };
    ws.onmessage = (event) => {
      let message: TOpsSocketMessage | { type: string };
      try {
        message = JSON.parse(String(event.data)) as TOpsSocketMessage;
      } catch {
        return;
      }
      if (message.type === 'ops.support') onState({ unread: (message as TOpsSocketMessage).unread, waiting: (message as TOpsSocketMessage).waiting });
    };
    ws.onclose = (event) => {
      if (socket !== ws || stopped) return;
      onConnected(false);
      if (event.code === SOCKET_CLOSE.sessionEnded) return;
      window.setTimeout(connect, backoffMs(attempt++, Math.random()));
    };
  };
  connect();
  return {
    stop() {
      stopped = true;
      socket?.close();
    },
  };
}
