import type { TFeedItem, TLinkMessage, TLocale, TRealtimeEvent, TSocketMessage } from '@obmen/shared';
import type { Db } from '../../db/index.ts';
import { findSession } from '../auth/sessions.ts';
import { listOpenNotifications } from '../notifications/service.ts';
import { getWalletEnvelope } from '../wallets/service.ts';
import type { TBusMessage } from './bus.ts';
import { READ_BATCH, lastSequences, readEventsOf } from '../events/service.ts';

/**
 * The core's side of the realtime stream: the BFFs' subscriptions (one per browser socket),
 * and the delivery of each user's events to them, in order, each once.
 *
 * A subscription is made with the browser's session token (the core owns sessions) and the
 * last sequence number the browser has; it remembers the last one sent. On a bus notice for a
 * user, the hub reads that user's events after the `last` of its subscriptions (one delivery at a
 * time, for every user with news, in one query), fills in the payloads left null (wallets,
 * notifications), and sends each subscription what comes after its own `last`. The same events
 * for several subscriptions of one user go in one message.
 *
 * Every `checkMs` the hub re-checks the subscriptions' sessions (logout, password change,
 * revocation, expiry: "ended" within checkMs) and catches up on any user whose newest event is
 * beyond what was sent (a notice lost while a bus connection was down).
 *
 * Changes for everyone (a notification for all users) are not copied into every user's events:
 * their sequence is content_version (migration 004: bumped in the transaction of any such
 * change, whoever writes it, API, operator command or SQL). Each check reads it; a subscription
 * behind it gets one `broadcast` message with its user's open notifications as they are then
 * (a state, so one message makes good any number missed), and so does a reconnect that names
 * an older `bsince`. Other content changes (articles, menus) bump it too: a repeat of the
 * same list, harmless.
 */
/** `body`: the browser's message, serialised once for every link and subscription it goes to. */
export type TLink = { send(message: TLinkMessage, body?: string): void; subs: Map<number, TSub> };
/** `last`: the user's newest event sent; `seen`: the newest change for everyone sent (content_version). */
type TSub = { link: TLink; sub: number; userId: string; sessionId: string; locale: TLocale; last: number; seen: number };

/** Users whose events one delivery reads (one query), at most. */
const DELIVER_USERS = 200;

/** Event types whose null payload is filled in at delivery. */
const HYDRATED = new Set(['wallets', 'notifications']);

type TLog = { warn: (obj: object, msg: string) => void };

/**
 * The back office's desk, as the hub needs it (the app wires it from the ops and chat domains):
 * an operator's token to a live session allowed at the desk, which of some sessions are still
 * alive (without touching them: a socket keeps no session awake), and the desk's state now.
 */
export type TDeskSource = {
  session(token: string): Promise<{ sessionId: string } | null>;
  alive(sessionIds: string[]): Promise<Set<string>>;
  state(): Promise<object>;
};
/** An operator's subscription: the desk's state, sent again whenever it differs from `sent`. */
type TDeskSub = { link: TLink; sub: number; sessionId: string; sent: string };

export type THub = ReturnType<typeof createHub>;

export function createHub(db: Db, log: TLog, desk?: TDeskSource) {
  const byUser = new Map<string, Set<TSub>>();
  const links = new Set<TLink>();
  /** Users with news not delivered yet, and whether a delivery is running. */
  const waiting = new Set<string>();
  let delivering = false;
  let idle: Promise<void> = Promise.resolve();
  /** The newest content_version broadcast to every subscription behind it. */
  let everyone = 0;
  const deskSubs = new Set<TDeskSub>();
  /** One read of the desk's state at a time; a change meanwhile reads it once more after. */
  let deskReading: Promise<void> | null = null;
  let deskAgain = false;

  async function readDesk(): Promise<void> {
    if (!desk) return;
    do {
      deskAgain = false;
      if (!deskSubs.size) return;
      const body = JSON.stringify({ type: 'ops.support', ...(await desk.state()) });
      for (const entry of deskSubs) {
        if (entry.sent === body) continue;
        entry.sent = body;
        entry.link.send({ op: 'relay', subs: [entry.sub] }, body);
      }
    } while (deskAgain);
  }

  /** Something may have changed on the desk: its operators get the new state if it differs. */
  function refreshDesk(): Promise<void> {
    if (deskReading) {
      deskAgain = true;
      return deskReading;
    }
    deskReading = readDesk()
      .catch((err: unknown) => log.warn({ err }, 'events: the desk state failed (the next check retries)'))
      .finally(() => {
        deskReading = null;
      });
    return deskReading;
  }

  const removeDesk = (link: TLink, sub?: number) => {
    for (const entry of deskSubs) if (entry.link === link && (sub === undefined || entry.sub === sub)) deskSubs.delete(entry);
  };

  const contentVersion = async () => Number((await db.query<{ v: string }>('SELECT version::text AS v FROM content_version'))[0]?.v ?? 0);

  /** Brings `subs` up to `version`: one message per user and locale, each with its open notifications. */
  async function broadcast(subs: TSub[], version: number): Promise<void> {
    const groups = new Map<string, TSub[]>();
    for (const sub of subs) groups.set(`${sub.userId}:${sub.locale}`, [...(groups.get(`${sub.userId}:${sub.locale}`) ?? []), sub]);
    for (const group of groups.values()) {
      const { userId, locale } = group[0]!;
      const payload = { notifications: await listOpenNotifications(db, userId, locale) };
      const live = group.filter((sub) => sub.link.subs.get(sub.sub) === sub && sub.seen < version);
      const body = JSON.stringify({ type: 'broadcast', seq: version, payload } satisfies TSocketMessage);
      for (const [link, ids] of byLink(live)) link.send({ op: 'relay', subs: ids }, body);
      for (const sub of live) sub.seen = version;
    }
  }

  const remove = (sub: TSub) => {
    sub.link.subs.delete(sub.sub);
    const set = byUser.get(sub.userId);
    set?.delete(sub);
    if (set?.size === 0) byUser.delete(sub.userId);
  };

  async function hydrate(userId: string, events: Array<{ seq: number; type: string; payload: unknown }>, locale: TLocale): Promise<TRealtimeEvent[]> {
    // Only the newest of each filled-in type carries the state; older ones would repeat it.
    const newest = new Map<string, number>();
    for (const event of events) if (event.payload === null && HYDRATED.has(event.type)) newest.set(event.type, event.seq);
    const out: TRealtimeEvent[] = [];
    for (const event of events) {
      if (event.payload !== null || !HYDRATED.has(event.type)) out.push(event);
      else if (newest.get(event.type) !== event.seq) out.push({ ...event, payload: null });
      else if (event.type === 'wallets') out.push({ ...event, payload: await getWalletEnvelope(db, userId) });
      else out.push({ ...event, payload: { notifications: await listOpenNotifications(db, userId, locale) } });
    }
    return out;
  }

  /**
   * Delivers the new events of `userIds`: the events of all of them read in one query (a notice
   * names every user of a transaction, and a busy core gathers the notices of many). Returns
   * the users with more to read (a read stopped at READ_BATCH).
   */
  async function deliver(userIds: string[]): Promise<string[]> {
    // Subscriptions of a user at the same point and in the same locale get one message.
    const groups: TSub[][] = [];
    for (const userId of userIds) {
      const byPoint = new Map<string, TSub[]>();
      for (const sub of byUser.get(userId) ?? []) {
        const key = `${sub.last}:${sub.locale}`;
        byPoint.set(key, [...(byPoint.get(key) ?? []), sub]);
      }
      groups.push(...byPoint.values());
    }
    if (!groups.length) return [];
    const reads = await readEventsOf(
      db,
      groups.map((group) => ({ userId: group[0]!.userId, since: group[0]!.last })),
    );
    const more = new Set<string>();
    for (const [i, group] of groups.entries()) {
      const read = reads[i]!;
      const { userId, locale } = group[0]!;
      const live = group.filter((sub) => sub.link.subs.get(sub.sub) === sub);
      if (!live.length || read.kind === 'future') continue;
      if (read.kind === 'resync') {
        const body = JSON.stringify({ type: 'resync', seq: read.last } satisfies TSocketMessage);
        for (const [link, ids] of byLink(live)) link.send({ op: 'relay', subs: ids }, body);
        for (const sub of live) sub.last = read.last;
        continue;
      }
      if (!read.events.length) continue;
      const body = JSON.stringify({ type: 'events', events: await hydrate(userId, read.events, locale) } satisfies TSocketMessage);
      for (const [link, ids] of byLink(live)) link.send({ op: 'relay', subs: ids }, body);
      for (const sub of live) sub.last = read.events.at(-1)!.seq;
      if (read.events.length === READ_BATCH) more.add(userId);
    }
    return [...more];
  }

  function byLink(subs: TSub[]): Map<TLink, number[]> {
    const out = new Map<TLink, number[]>();
    for (const sub of subs) out.set(sub.link, [...(out.get(sub.link) ?? []), sub.sub]);
    return out;
  }

  /**
   * Delivers users' new events. One delivery runs at a time (so never two reads of one user at
   * once); the users named meanwhile wait for the next one, all together.
   */
  function pump(userId: string): void {
    waiting.add(userId);
    if (delivering) return;
    delivering = true;
    const run = (async () => {
      try {
        while (waiting.size) {
          const users = [...waiting].slice(0, DELIVER_USERS);
          for (const user of users) waiting.delete(user);
          try {
            for (const user of await deliver(users)) waiting.add(user);
          } catch (err) {
            log.warn({ err, users: users.length }, 'events: delivery failed (the next check retries)');
          }
        }
      } finally {
        delivering = false;
      }
    })();
    idle = idle.then(() => run);
  }

  /**
   * Operators whose session ended (signed out, idle, revoked) lose their socket; the others get
   * the desk's state if it changed without a customer's event (closed, reopened, a claim lapsed).
   */
  async function checkDesk(): Promise<void> {
    if (!desk || !deskSubs.size) return;
    const alive = await desk.alive([...new Set([...deskSubs].map((entry) => entry.sessionId))]);
    for (const entry of [...deskSubs]) {
      if (alive.has(entry.sessionId)) continue;
      deskSubs.delete(entry);
      entry.link.send({ op: 'ended', subs: [entry.sub] });
    }
    await refreshDesk();
  }

  return {
    /** A BFF's link opened. */
    open(send: TLink['send']): TLink {
      const link: TLink = { send, subs: new Map() };
      links.add(link);
      return link;
    },
    /** The link closed: every subscription on it goes. */
    close(link: TLink): void {
      for (const sub of [...link.subs.values()]) remove(sub);
      removeDesk(link);
      links.delete(link);
    },
    /** An operator's socket: refused unless the token is a live ops session allowed at the desk. */
    async subscribeDesk(link: TLink, sub: number, token: string): Promise<void> {
      const session = desk ? await desk.session(token) : null;
      if (!session) return link.send({ op: 'refused', sub, code: 'unauthorized' });
      if (!links.has(link)) return;
      removeDesk(link, sub);
      deskSubs.add({ link, sub, sessionId: session.sessionId, sent: '' });
      link.send({ op: 'ok', sub, seq: 0, bseq: 0 });
      await refreshDesk();
    },
    async subscribe(link: TLink, sub: number, token: string, since: number | null, bsince: number | null = null): Promise<void> {
      const session = await findSession(db, token);
      if (!session) return link.send({ op: 'refused', sub, code: 'unauthorized' });
      const userId = session.user.id;
      const last = (await lastSequences(db, [userId])).get(userId) ?? 0;
      if (since !== null && since > last) return link.send({ op: 'refused', sub, code: 'event_sequence_future' });
      const version = await contentVersion();
      if (!links.has(link)) return;
      link.subs.get(sub) && remove(link.subs.get(sub)!);
      // A `bsince` beyond the version (another database's, a forged one) gets the state again.
      const seen = bsince === null ? version : bsince > version ? 0 : bsince;
      const entry: TSub = { link, sub, userId, sessionId: session.id, locale: session.user.locale, last: since ?? last, seen };
      link.subs.set(sub, entry);
      byUser.set(userId, (byUser.get(userId) ?? new Set()).add(entry));
      link.send({ op: 'ok', sub, seq: entry.last, bseq: seen });
      if (entry.last < last) pump(userId);
      if (seen < version) await broadcast([entry], version);
    },
    unsubscribe(link: TLink, sub: number): void {
      const entry = link.subs.get(sub);
      if (entry) remove(entry);
      removeDesk(link, sub);
    },
    /** A bus message: users with news, or a feed item or a rates notice for every BFF. */
    onMessage(message: TBusMessage): void {
      for (const userId of message.users ?? []) if (byUser.has(userId)) pump(userId);
      // A customer's message or an answer records events for that customer: the desk may have changed.
      if (message.users?.length && deskSubs.size) void refreshDesk();
      const relay = (body: string) => {
        for (const link of links) if (link.subs.size) link.send({ op: 'relay' }, body);
      };
      if (message.feed) relay(JSON.stringify({ type: 'feed', item: message.feed } satisfies TSocketMessage));
      if (message.rates) relay(JSON.stringify({ type: 'rates' } satisfies TSocketMessage));
    },
    /** Catch up on everyone: after a bus gap, and periodically. */
    async catchUp(): Promise<void> {
      const users = [...byUser.keys()];
      for (let i = 0; i < users.length; i += 1000) {
        const newest = await lastSequences(db, users.slice(i, i + 1000));
        for (const [userId, seq] of newest) {
          if ([...(byUser.get(userId) ?? [])].some((sub) => sub.last < seq)) pump(userId);
        }
      }
    },
    /** Changes for everyone since the last check reach every subscription behind them. */
    async checkBroadcast(): Promise<void> {
      const version = await contentVersion();
      if (version <= everyone) return;
      everyone = version;
      const behind = [...byUser.values()].flatMap((set) => [...set]).filter((sub) => sub.seen < version);
      if (behind.length) await broadcast(behind, version);
    },
    /** Sessions that ended (logout, password change, revoked, expired): their subscriptions end. */
    async checkSessions(): Promise<void> {
      await checkDesk();
      const subs = [...byUser.values()].flatMap((set) => [...set]);
      if (!subs.length) return;
      const ids = [...new Set(subs.map((sub) => sub.sessionId))];
      const alive = new Set<string>();
      for (let i = 0; i < ids.length; i += 5000) {
        const rows = await db.query<{ id: string }>(
          'SELECT id::text AS id FROM sessions WHERE id = ANY($1::bigint[]) AND revoked_at IS NULL AND expires_at > now()',
          [ids.slice(i, i + 5000)],
        );
        for (const row of rows) alive.add(row.id);
      }
      const ended = subs.filter((sub) => !alive.has(sub.sessionId));
      for (const sub of ended) remove(sub);
      for (const [link, ids] of byLink(ended)) link.send({ op: 'ended', subs: ids });
    },
    /** Resolves once the desk's operators have the state as it is now (tests). */
    refreshDesk,
    /** Resolves once every delivery started so far is done (tests). */
    settled: () => idle,
    stats: () => ({ links: links.size, users: byUser.size, subs: [...byUser.values()].reduce((n, set) => n + set.size, 0), desk: deskSubs.size }),
  };
}

/** The payment popup's amount: two significant digits, rounded down ("12345.67" → "12000"). */
export function roughAmount(amount: string): string {
  const [whole = '0', fraction = ''] = amount.split('.');
  const digits = (whole + fraction).replace(/^0+/, '');
  if (!digits) return '0';
  const leadingZeros = (whole + fraction).length - digits.length;
  const kept = digits.slice(0, 2).padEnd(digits.length, '0');
  const all = '0'.repeat(leadingZeros) + kept;
  const intPart = all.slice(0, whole.length).replace(/^0+(?=\d)/, '');
  const fracPart = all.slice(whole.length).replace(/0+$/, '');
  return fracPart ? `${intPart || '0'}.${fracPart}` : intPart || '0';
}

/** A feed item: at most one per `everyMs` per core is passed on; the rest are dropped. */
export function feedThrottle(publish: (item: TFeedItem) => void, everyMs: number, now: () => number = Date.now) {
  let lastAt = Number.NEGATIVE_INFINITY;
  return (item: TFeedItem) => {
    const at = now();
    if (at - lastAt < everyMs) return;
    lastAt = at;
    publish({ ...item, amount: roughAmount(item.amount) });
  };
}

/**
 * Rates notices: the first at once, the rest within `everyMs` folded into one sent when it
 * ends (a chart must not miss the last change of a burst).
 */
export function ratesThrottle(publish: () => void, everyMs: number, now: () => number = Date.now, later: (fn: () => void, ms: number) => void = setTimeout) {
  let lastAt = Number.NEGATIVE_INFINITY;
  let pending = false;
  return () => {
    const at = now();
    if (at - lastAt >= everyMs) {
      lastAt = at;
      publish();
      return;
    }
    if (pending) return;
    pending = true;
    later(
      () => {
        pending = false;
        lastAt = now();
        publish();
      },
      lastAt + everyMs - at,
    );
  };
}
