import type { TFeedItem } from '@obmen/shared';
import type { Queryable } from '../../db/index.ts';

/**
 * Realtime events: one row per user-facing change, written in the SAME database
 * transaction as the change, numbered per user without gaps (migration 030, event_record.sql).
 *
 * To emit from a new domain: call `recordEvent(tx, userId, type, payload)` inside the
 * transaction that makes the change (an SQL function calls `event_record()` or `event_record_many()` and its TS caller
 * announces the users, as money_transfer_many does). `payload` is what the browser gets; pass null
 * for a type with a hydrator (below), which fills it in at delivery with the state as it is
 * then. Types are lower-case words joined by dots; the browser applies the known ones
 * (site/src/lib/realtime.ts) and ignores the rest.
 *
 * Types so far:
 *   wallets        null → {wallets, total_balance}           transfers (both users), exchanges
 *   notifications  null → {notifications} in the user's locale  a notification for one user
 *   unread_msgs    {unread_msgs: {private, support}} (exact)  a chat message, a read cursor moved
 *   chat.message   {chat: 'support' | account id, message}   a new message, as each participant sees it
 * Reserved for their owners: payment, withdrawal (payments),
 * card (cards): add them to EVENT_TYPES with their payload.
 */
export const EVENT_TYPES = ['wallets', 'notifications', 'unread_msgs', 'chat.message', 'payment', 'withdrawal', 'card'] as const;
export type TEventType = (typeof EVENT_TYPES)[number];

/** How long events are kept for replay (the purge job deletes older ones); an older gap means "resync". */
export const EVENTS_KEEP_HOURS = 24;

/**
 * Records one event inside the caller's transaction and returns its sequence number. The bus
 * is told after COMMIT (`tx.announce`). Two users in one transaction: record in ascending user
 * id (as money_transfer_many does), so crosswise transactions do not deadlock on the counters.
 */
export async function recordEvent(tx: Queryable, userId: string, type: TEventType, payload: unknown): Promise<number> {
  const [row] = await tx.query<{ seq: string }>('SELECT event_record($1, $2, $3::jsonb) AS seq', [
    userId,
    type,
    payload === null ? null : JSON.stringify(payload),
  ]);
  tx.announce?.([userId]);
  return Number(row!.seq);
}

export type TStoredEvent = { seq: number; type: string; payload: unknown };

export type TReplay =
  | { kind: 'events'; events: TStoredEvent[]; last: number }
  /** The browser is ahead of the server: a sequence from the future, refused. */
  | { kind: 'future'; last: number }
  /** What the browser missed is no longer kept: it refetches everything. */
  | { kind: 'resync'; last: number };

/** At most this many events per read; the rest follow on the next read. */
export const READ_BATCH = 500;

/**
 * The events of a user after `since` (the last sequence number the reader has), oldest first.
 * `since` beyond the user's newest is "future"; a gap no longer kept is "resync".
 */
export async function readEvents(db: Queryable, userId: string, since: number): Promise<TReplay> {
  return (await readEventsOf(db, [{ userId, since }]))[0]!;
}

/** readEvents for several readers at once, in one query (the realtime hub's deliveries); answers in order. */
export async function readEventsOf(db: Queryable, readers: ReadonlyArray<{ userId: string; since: number }>): Promise<TReplay[]> {
  const rows = await db.query<{ n: string; seq: string | null; type: string; payload: unknown; last: string }>(
    `SELECT r.n::text AS n, e.seq::text AS seq, e.type, e.payload, coalesce(s.seq, 0)::text AS last
     FROM unnest($1::bigint[], $2::bigint[]) WITH ORDINALITY AS r(user_id, since, n)
     LEFT JOIN event_seqs s ON s.user_id = r.user_id
     LEFT JOIN LATERAL (SELECT seq, type, payload FROM events WHERE user_id = r.user_id AND seq > r.since ORDER BY seq LIMIT $3) e ON true
     ORDER BY r.n, e.seq`,
    [readers.map((r) => r.userId), readers.map((r) => r.since), READ_BATCH],
  );
  const byReader = readers.map(() => ({ last: 0, events: [] as TStoredEvent[] }));
  for (const row of rows) {
    const read = byReader[Number(row.n) - 1]!;
    read.last = Number(row.last);
    if (row.seq !== null) read.events.push({ seq: Number(row.seq), type: row.type, payload: row.payload });
  }
  return readers.map(({ since }, i): TReplay => {
    const { last, events } = byReader[i]!;
    if (since > last) return { kind: 'future', last };
    if (since < last && events[0]?.seq !== since + 1) return { kind: 'resync', last };
    return { kind: 'events', events, last };
  });
}

/** The newest sequence number of each user (0: none yet). */
export async function lastSequences(db: Queryable, userIds: readonly string[]): Promise<Map<string, number>> {
  const rows = await db.query<{ user_id: string; seq: string }>(
    'SELECT user_id::text AS user_id, seq::text AS seq FROM event_seqs WHERE user_id = ANY($1::bigint[])',
    [userIds],
  );
  return new Map(rows.map((row) => [row.user_id, Number(row.seq)]));
}

/** Housekeeping: events older than EVENTS_KEEP_HOURS (the counters stay, so numbering goes on). */
export async function purgeEvents(db: Queryable): Promise<void> {
  await db.query(`DELETE FROM events WHERE created_at < now() - $1::int * interval '1 hour'`, [EVENTS_KEEP_HOURS]);
}

const feeds = new WeakMap<Queryable, (item: TFeedItem) => void>();

/** The events plugin hands in where feed items go (routes.ts: throttled, anonymised, onto the bus). */
export function setFeed(db: Queryable, publish: (item: TFeedItem) => void): void {
  feeds.set(db, publish);
}

/**
 * A completed operation for the payment popup (spec §3): call after the commit, with no name in
 * it; the amount is rounded and most items are dropped on the way (one per core every few seconds).
 */
export function offerFeed(db: Queryable, item: TFeedItem): void {
  feeds.get(db)?.(item);
}

const rateNotices = new WeakMap<Queryable, () => void>();

/** The events plugin hands in how "rates moved" reaches every socket (routes.ts: throttled, onto the bus). */
export function setRatesNotice(db: Queryable, notify: () => void): void {
  rateNotices.set(db, notify);
}

/** Some pair's rate moved: call after the commit, with the Db (not a transaction). */
export function noticeRates(db: Queryable): void {
  rateNotices.get(db)?.();
}
