import type { TFeedItem } from '@obmen/shared';
import type { Db } from '../../db/index.ts';

/**
 * How the cores tell each other "these users have new events" (and pass the site-wide feed of
 * the payment popup). Only a hint: the events themselves are read from the table, by sequence
 * number, so a notice that arrives twice is harmless and one lost in a crash is made good by
 * the stream's periodic catch-up (hub.ts, routes.ts).
 *
 *   PostgreSQL LISTEN/NOTIFY (default; PGlite too): channel `obmen_events`, sent after COMMIT.
 *   NATS (NATS_URL set): subject `obmen.events`.
 *
 * Notices are coalesced: the users announced within FLUSH_MS travel in one message (several if
 * long), so a busy core sends at most a few hundred notices a second however many changes it
 * commits (each NOTIFY is a commit that takes PostgreSQL's notify-queue lock).
 */
/** `rates`: some pair's rate moved (the charts fetch their newest candles). */
export type TBusMessage = { users?: string[]; feed?: TFeedItem; rates?: true };

export type TBusHandlers = {
  onMessage: (message: TBusMessage) => void;
  /** Notices may have been lost (the connection came back): catch up on everything. */
  onGap: () => void;
};

export interface TEventBus {
  readonly kind: 'postgres' | 'nats';
  announce(userIds: readonly string[]): void;
  feed(item: TFeedItem): void;
  rates(): void;
  close(): Promise<void>;
}

export const PG_CHANNEL = 'obmen_events';
export const NATS_SUBJECT = 'obmen.events';
/** How long announced users wait to travel together. */
export const FLUSH_MS = 5;
/** NOTIFY payloads must stay under 8000 bytes. */
const MAX_PAYLOAD = 7_000;

type TSend = (payload: string) => Promise<void>;

function coalescing(send: TSend, onError: (err: unknown) => void) {
  let users = new Set<string>();
  let scheduled = false;
  const flush = () => {
    scheduled = false;
    const batch = [...users];
    users = new Set();
    // Chunks of whole ids under MAX_PAYLOAD bytes.
    for (let start = 0; start < batch.length; ) {
      let size = 12;
      let end = start;
      while (end < batch.length && size + batch[end]!.length + 3 < MAX_PAYLOAD) size += batch[end++]!.length + 3;
      send(JSON.stringify({ users: batch.slice(start, end) })).catch(onError);
      start = end;
    }
  };
  return {
    announce(userIds: readonly string[]) {
      for (const id of userIds) users.add(id);
      if (!scheduled) {
        scheduled = true;
        setTimeout(flush, FLUSH_MS);
      }
    },
    feed(item: TFeedItem) {
      send(JSON.stringify({ feed: item })).catch(onError);
    },
    rates() {
      send(JSON.stringify({ rates: true })).catch(onError);
    },
  };
}

export function parseBusMessage(text: string): TBusMessage | null {
  try {
    const value = JSON.parse(text) as TBusMessage;
    if (typeof value !== 'object' || value === null) return null;
    const users = Array.isArray(value.users) ? value.users.filter((id): id is string => typeof id === 'string' && /^\d{1,19}$/.test(id)) : undefined;
    return {
      ...(users ? { users } : {}),
      ...(value.feed && typeof value.feed === 'object' ? { feed: value.feed } : {}),
      ...(value.rates === true ? { rates: true as const } : {}),
    };
  } catch {
    return null;
  }
}

type TLog = { warn: (obj: object, msg: string) => void };

/** LISTEN/NOTIFY through the core's own database (a dedicated LISTEN connection on PostgreSQL). */
export async function postgresBus(db: Db, handlers: TBusHandlers, log: TLog): Promise<TEventBus> {
  const stop = await db.listen(
    PG_CHANNEL,
    (payload) => {
      const message = parseBusMessage(payload);
      if (message) handlers.onMessage(message);
    },
    handlers.onGap,
  );
  const out = coalescing(
    async (payload) => void (await db.query('SELECT pg_notify($1, $2)', [PG_CHANNEL, payload])),
    (err) => {
      log.warn({ err }, 'events: NOTIFY failed (the periodic catch-up delivers)');
      handlers.onGap();
    },
  );
  return { kind: 'postgres', ...out, close: stop };
}

/** NATS: one connection per core; the client reconnects by itself, a reconnect means a gap. */
export async function natsBus(url: string, handlers: TBusHandlers, log: TLog): Promise<TEventBus> {
  const { connect, StringCodec } = await import('nats');
  const codec = StringCodec();
  const nc = await connect({ servers: url, name: 'obmen-core', maxReconnectAttempts: -1, reconnectTimeWait: 1000 });
  const sub = nc.subscribe(NATS_SUBJECT, {
    callback: (err, msg) => {
      if (err) return;
      const message = parseBusMessage(codec.decode(msg.data));
      if (message) handlers.onMessage(message);
    },
  });
  void (async () => {
    for await (const status of nc.status()) if (status.type === 'reconnect') handlers.onGap();
  })();
  const out = coalescing(
    async (payload) => nc.publish(NATS_SUBJECT, codec.encode(payload)),
    (err) => log.warn({ err }, 'events: NATS publish failed'),
  );
  return {
    kind: 'nats',
    ...out,
    async close() {
      sub.unsubscribe();
      await nc.drain().catch(() => nc.close());
    },
  };
}
