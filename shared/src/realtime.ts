/**
 * The realtime socket. Two legs:
 *   browser ⇄ BFF  `/ws?since=<last seq>`: the BFF sends TSocketMessage; the browser sends nothing.
 *   BFF ⇄ core     `/api/internal/events` (one websocket per BFF): TLinkRequest up, TLinkMessage down.
 */

/** Where the browser opens its socket (same origin; the session comes from the cookie only). */
export const REALTIME_PATH = '/ws';
/** The core's stream for the BFF; the BFF answers /api/internal/* itself (404), never proxying it. */
export const REALTIME_LINK_PATH = '/api/internal/events';

/** One event as the browser gets it: `seq` per user, in order, each once. */
export type TRealtimeEvent = { seq: number; type: string; payload: unknown };

/**
 * The payload of the status events `payment` (deposits and purchases), `withdrawal` and `card`:
 * which one moved and its state (a card: its activity, e.g. issued, frozen). A page showing it
 * refetches (site/src/stores/status.ts); a `wallets` event carries any balance change.
 */
export type TStatusEvent = { id: string; state: string };

/** The payment popup's item (spec §3): anonymised, no names, the amount rounded. */
export type TFeedItem = { kind: 'exchange' | 'transfer'; currency: string; amount: string; to?: string };

/** BFF → browser. */
export type TSocketMessage =
  /**
   * Sent first: the newest sequence number of the user (what `since` to send next time), and of
   * the changes for everyone (`bseq`, what `bsince` to send).
   */
  | { type: 'hello'; seq: number; bseq: number }
  /**
   * A change for everyone (a notification for all users), numbered site-wide (`bseq`): the
   * payload is the receiver's whole state of it ({notifications}), so one message makes good
   * any number missed; a reconnect with an older `bsince` gets it again.
   */
  | { type: 'broadcast'; seq: number; payload: unknown }
  | { type: 'events'; events: TRealtimeEvent[] }
  /** What was missed is no longer kept: refetch the state (GET /api/auth/check), continue from `seq`. */
  | { type: 'resync'; seq: number }
  | { type: 'feed'; item: TFeedItem }
  /** Some pair's rate moved (anyone's socket): a chart fetches its newest candles. */
  | { type: 'rates' };

/** Close codes of the browser socket beyond the standard ones. */
export const SOCKET_CLOSE = {
  /** The session ended (logout, password change, revoked, expired): do not reconnect. */
  sessionEnded: 4401,
  /** The browser read too slowly; it may reconnect and replay. */
  slowReader: 4008,
  /**
   * A newer socket of the same session took this one's place (the BFF keeps at most
   * WS_MAX_PER_SESSION per session, the oldest closed first): do not reconnect until the tab is
   * looked at again, or two tabs would take turns closing each other.
   */
  replaced: 4409,
  /** The BFF lost its link to the core; reconnect and replay. */
  upstreamLost: 1012,
} as const;

/** BFF → core. `sub` ids are the BFF's own, unique per link. */
/** `ops`: the token is an operator's (ops_token): the desk's state, never a customer's events. */
export type TLinkRequest = { op: 'sub'; sub: number; token: string; since: number | null; bsince: number | null; ops?: boolean } | { op: 'unsub'; sub: number };

/**
 * core → BFF, one text frame each: this header as JSON, and for `relay` a newline and then the
 * browser's TSocketMessage exactly as the browser gets it. The BFF parses only the header and
 * writes the rest, framed once, to the sockets of the listed subscriptions (`subs` absent: every
 * subscription, the payment popup's feed); the core serialises it once for all of them.
 */
export type TLinkMessage =
  | { op: 'ok'; sub: number; seq: number; bseq: number }
  | { op: 'refused'; sub: number; code: 'unauthorized' | 'event_sequence_future' | 'unavailable' }
  | { op: 'relay'; subs?: number[] }
  | { op: 'ended'; subs: number[] };

/** A link frame's text: the header, then the browser's message after a newline (JSON has none). */
export function encodeLinkMessage(header: TLinkMessage, body?: string): string {
  return body === undefined ? JSON.stringify(header) : `${JSON.stringify(header)}\n${body}`;
}
