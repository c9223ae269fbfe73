import type { z } from 'zod';
import type { Db, Queryable } from '../db/index.ts';
import { withRetry } from '../money-errors.ts';
import { refuseDelivery, type TInboxResult, type TInboxTables, type TRefusalReason } from './refusals.ts';
import type { TSignatureCheck } from './signature.ts';

/*
 * The one inbox for everything a provider signs: payment providers' webhooks and card issuers'
 * callbacks. Each consumer defines its inbox (TInbox: its tables, and the apply handler that
 * moves its money or cards), and every delivery goes the same way: the signature and its time
 * window are checked before anything is stored (a forged or stale one is only counted:
 * refusals.ts); a validly signed delivery is stored first, as received; its event is applied
 * in ONE transaction that inserts the event id into the events table (exactly once: a copy
 * finds the id taken and moves nothing); a failed apply is retried with backoff
 * (processDueDeliveries), and an operator can replay one (replayDelivery).
 */

/** The one who signs deliveries to an inbox: checks a delivery's signature and reads its event. */
export type TSender<E> = {
  id: string;
  verify(input: { rawBody: Buffer; signature: string | undefined; now: Date }): TSignatureCheck;
  /** The event of a validly signed body; null when it is not one (answered `malformed`). */
  parse(rawBody: Buffer): E | null;
};

/** The event a body carries when it is JSON that `schema` accepts; null otherwise (a sender's parse). */
export function parseEventBody<E>(rawBody: Buffer, schema: z.ZodType<E>): E | null {
  let json: unknown;
  try {
    json = JSON.parse(rawBody.toString('utf8'));
  } catch {
    return null;
  }
  const parsed = schema.safeParse(json);
  return parsed.success ? parsed.data : null;
}

/** An inbox: where its deliveries are kept, and what applying its events does. */
export type TInbox<E extends { id: string }, R extends string> = {
  /** What its deliveries are called in messages: webhook, callback. */
  name: string;
  tables: TInboxTables;
  /**
   * Applies events whose ids this transaction has just claimed (each once), in order; answers
   * per event its result and what it was about (a payment, a card).
   */
  apply(tx: Queryable, items: Array<{ source: string; event: E }>, now: Date): Promise<Array<{ result: R; subjectId: string | null }>>;
};

/** A valid delivery left unprocessed this long is taken up by the retry (the live request may still be on it before). */
export const INBOX_RETRY_GRACE_MS = 60_000;
// The backoff after the n-th failed attempt (in SQL below): 10 s, 20 s, 40 s … up to an hour.

/** One delivery as received, and the sender's address (its refusals are limited per address). */
export type TDeliveryInput = { rawBody: Buffer; signature: string | undefined; now: Date; address?: string };
/** A delivery's answer; deliveryId null: refused by its signature, so not stored (refuseDelivery). */
export type TReceived<R extends string> = { deliveryId: string | null; result: TInboxResult<R> };

/** A stored, validly signed delivery whose event is still to be applied. */
type TStoredEvent<E> = { deliveryId: string; source: string; event: E };
/** A validly signed delivery as checked on arrival: its event when well formed, else `malformed`. */
type TChecked<E> = { source: string; input: TDeliveryInput; event: E | null; refused: 'malformed' | null };
/** A delivery refused by its signature: never stored. */
type TRefused = { source: string; input: TDeliveryInput; refusal: TRefusalReason };

function checkDelivery<E>(sender: TSender<E>, input: TDeliveryInput): TChecked<E> | TRefused {
  const check = sender.verify(input);
  if (check !== 'valid') return { source: sender.id, input, refusal: check };
  const event = sender.parse(input.rawBody);
  return { source: sender.id, input, event, refused: event ? null : 'malformed' };
}

/** Counts and samples a refused delivery (429 past its sender's limit: refuseDelivery). */
async function refuse<R extends string>(db: Db, tables: TInboxTables, { source, input, refusal }: TRefused): Promise<TReceived<R>> {
  await refuseDelivery(db, { inbox: tables.deliveries, source, reason: refusal, address: input.address }, input);
  return { deliveryId: null, result: refusal };
}

function isStoredEvent<E, R extends string>(entry: TReceived<R> | TStoredEvent<E>): entry is TStoredEvent<E> {
  return 'event' in entry;
}

function answerOf<R extends string>(deliveryId: string, result: TInboxResult<R> | Error): TReceived<R> | Error {
  return result instanceof Error ? result : { deliveryId, result };
}

/** One delivery (a batch of one: see receiveDeliveries). */
export async function receiveDelivery<E extends { id: string }, R extends string>(
  db: Db,
  inbox: TInbox<E, R>,
  sender: TSender<E>,
  input: TDeliveryInput,
): Promise<TReceived<R>> {
  const [received] = await receiveDeliveries(db, inbox, [{ sender, input }], input.now);
  if (received instanceof Error) throw received;
  return received!;
}

/**
 * Deliveries received together. A forged or stale one is refused before anything is stored
 * (refuseDelivery: counted, sampled, limited per sender). Each validly signed delivery is
 * stored first, as received, by ONE statement for all of them that also answers at once what
 * needs no processing: a malformed delivery, or a copy of an event carried already
 * (`duplicate`: storeDeliveries). A failed delivery stays on record. The new events are then
 * applied in ONE transaction that inserts their ids into the events table: a duplicate,
 * concurrent or later, finds the id taken and moves nothing. A forged or stale delivery never
 * reaches the events table, so it cannot use up a real event's id either. When the processing
 * fails (the database, a crash before the commit), each stored delivery is processed again on
 * its own (processDueDeliveries). Answers per delivery, in order: its result, or the Error its
 * processing ended with.
 */
export async function receiveDeliveries<E extends { id: string }, R extends string>(
  db: Db,
  inbox: TInbox<E, R>,
  incoming: Array<{ sender: TSender<E>; input: TDeliveryInput }>,
  now: Date,
): Promise<Array<TReceived<R> | Error>> {
  const checked = incoming.map(({ sender, input }) => checkDelivery(sender, input));
  const signed = checked.filter((c): c is TChecked<E> => !('refusal' in c));
  const stored = signed.length ? await storeDeliveries<E, R>(db, inbox.tables, signed) : [];
  const toApply = stored.filter(isStoredEvent);
  const applied = toApply.length ? await processEvents(db, inbox, toApply, now) : new Map<string, TInboxResult<R> | Error>();
  const answers = stored.map((entry) => (isStoredEvent(entry) ? answerOf(entry.deliveryId, applied.get(entry.deliveryId)!) : entry));
  const results: Array<TReceived<R> | Error> = [];
  for (const c of checked) results.push('refusal' in c ? await refuse<R>(db, inbox.tables, c).catch((err: Error) => err) : answers.shift()!);
  return results;
}

/**
 * Stores validly signed deliveries as received, by ONE statement, in their order. Answers per
 * delivery its result when the statement decided it, or else the stored event still to apply.
 * Decided are a malformed delivery and a copy of an event that is carried already:
 * applied, or delivered before and still being processed (stored, not failed yet: the earlier
 * delivery is retried until it is processed), or delivered earlier in the same statement. Such a
 * copy is `duplicate` at once, so copies of an event never queue behind its first delivery. A
 * copy of an event whose delivery failed processing is applied (it may succeed now). Another
 * instance's copy stored at the same moment is not seen here: the claim of the event id
 * (applyEvents) keeps that one exactly-once.
 */
async function storeDeliveries<E extends { id: string }, R extends string>(
  db: Db,
  { deliveries, events, source }: TInboxTables,
  checked: Array<TChecked<E>>,
): Promise<Array<TReceived<R> | TStoredEvent<E>>> {
  // Rows are inserted in the input's order; their ids come from one sequence in that order.
  const stored = await db.query<{ id: string; result: TInboxResult<R> | null }>(
    `INSERT INTO ${deliveries} (${source}, raw_body, signature, signature_valid, event_id, received_at, next_attempt_at, processed_at, result)
     SELECT d.source, d.raw_body, d.signature, true, d.event_id, d.received_at,
            d.received_at + $7::int * interval '1 millisecond',
            CASE WHEN d.refused IS NOT NULL OR d.carried THEN d.received_at END,
            coalesce(d.refused, CASE WHEN d.carried THEN 'duplicate' END)
     FROM (SELECT d.*, d.event_id IS NOT NULL AND (
                    row_number() OVER (PARTITION BY d.source, d.event_id ORDER BY d.n) > 1 OR applied.x IS NOT NULL OR in_flight.x IS NOT NULL) AS carried
           FROM unnest($1::text[], $2::bytea[], $3::text[], $4::text[], $5::text[], $6::timestamptz[]) WITH ORDINALITY
                  AS d(source, raw_body, signature, event_id, refused, received_at, n)
           -- Looked up by key, delivery by delivery (LIMIT 1): a hash of all of the events table,
           -- which the planner preferred while the table was small, grows with it.
           LEFT JOIN LATERAL (SELECT true AS x FROM ${events} e WHERE e.${source} = d.source AND e.event_id = d.event_id LIMIT 1) applied ON true
           LEFT JOIN LATERAL (SELECT true AS x FROM ${deliveries} w
                              WHERE w.${source} = d.source AND w.event_id = d.event_id AND w.processed_at IS NULL AND w.signature_valid
                                AND w.attempts = 0 LIMIT 1) in_flight ON true) d
     ORDER BY d.n
     RETURNING id::text AS id, result`,
    [
      checked.map((c) => c.source),
      checked.map((c) => c.input.rawBody),
      checked.map((c) => c.input.signature ?? null),
      checked.map((c) => c.event?.id ?? null),
      checked.map((c) => c.refused),
      checked.map((c) => c.input.now),
      INBOX_RETRY_GRACE_MS,
    ],
  );
  stored.sort((a, b) => (BigInt(a.id) < BigInt(b.id) ? -1 : 1));
  return checked.map((c, i) => {
    const { id, result } = stored[i]!;
    return result === null ? { deliveryId: id, source: c.source, event: c.event! } : { deliveryId: id, result };
  });
}

/** Deliveries stored by one statement, and events applied by one transaction, at most. */
const INTAKE_BATCH = 256;
/**
 * An apply running this long is stuck (a row held by another transaction, a user's cancel or
 * an operator's command): the next gathering is applied beside it rather than wait. A normal
 * apply takes a few milliseconds.
 */
const INTAKE_STALL_MS = 50;

/**
 * A route's way in: a pipeline of two stages, each one gathering at a time (group commit).
 * Deliveries that arrive while a gathering is being stored wait and are stored together next;
 * the events stored wait for the gathering being applied and are applied together next, while
 * the following deliveries are stored. One apply at a time keeps the gatherings large (the cost
 * of a transaction is shared by more events) and keeps them from queueing on each other's row
 * locks (a provider's clearing account is in every one); only an apply stuck past
 * INTAKE_STALL_MS lets the next one start beside it. A forged or stale delivery never enters the
 * pipeline (refuse); one the store decides (malformed, or a copy of an event carried already:
 * storeDeliveries) is answered at once. Each request is still answered only after its own
 * delivery is stored and, when it carries its event, applied and committed: nothing is
 * acknowledged that a crash could lose.
 */
export function inboxIntake<E extends { id: string }, R extends string>(db: Db, inbox: TInbox<E, R>, now: () => Date) {
  type TWaiting = { checked: TChecked<E>; resolve: (received: TReceived<R>) => void; reject: (err: Error) => void };
  let waiting: TWaiting[] = [];
  let stored: Array<{ waiter: TWaiting; item: TStoredEvent<E> }> = [];
  let storing = false;
  /** Applies running, and how many of them are stuck: one that is not stuck runs at a time. */
  let applying = 0;
  let stuck = 0;
  const answer = (waiter: TWaiting, received: TReceived<R> | Error) => {
    if (received instanceof Error) waiter.reject(received);
    else waiter.resolve(received);
  };
  const store = () => {
    const batch = waiting.slice(0, INTAKE_BATCH);
    waiting = waiting.slice(INTAKE_BATCH);
    storing = true;
    storeDeliveries<E, R>(
      db,
      inbox.tables,
      batch.map((w) => w.checked),
    )
      .then(
        (entries) =>
          entries.forEach((entry, i) => {
            if (isStoredEvent(entry)) stored.push({ waiter: batch[i]!, item: entry });
            else answer(batch[i]!, entry);
          }),
        (err: Error) => {
          for (const w of batch) answer(w, err);
        },
      )
      .finally(() => {
        storing = false;
        pump();
      });
  };
  const apply = () => {
    const batch = stored.slice(0, INTAKE_BATCH);
    stored = stored.slice(INTAKE_BATCH);
    applying++;
    let isStuck = false;
    const watch = setTimeout(() => {
      isStuck = true;
      stuck++;
      pump();
    }, INTAKE_STALL_MS);
    processEvents(
      db,
      inbox,
      batch.map((b) => b.item),
      now(),
    )
      .then(
        (results) => {
          for (const { waiter, item } of batch) answer(waiter, answerOf(item.deliveryId, results.get(item.deliveryId)!));
        },
        (err: Error) => {
          for (const { waiter } of batch) answer(waiter, err);
        },
      )
      .finally(() => {
        clearTimeout(watch);
        if (isStuck) stuck--;
        applying--;
        pump();
      });
  };
  const pump = () => {
    if (applying === stuck && stored.length) apply();
    if (!storing && waiting.length) store();
  };
  return (sender: TSender<E>, input: TDeliveryInput): Promise<TReceived<R>> => {
    const checked = checkDelivery(sender, input);
    if ('refusal' in checked) return refuse<R>(db, inbox.tables, checked);
    return new Promise<TReceived<R>>((resolve, reject) => {
      waiting.push({ checked, resolve, reject });
      pump();
    });
  };
}

/**
 * Applies stored, validly signed deliveries' events, exactly once per event id: all in ONE
 * transaction (one commit, and the rows they share locked once for all of them). Event ids are
 * claimed in one order (source, event id, delivery), so two batches never wait on each other's
 * ids; only the first delivery of an id claims it, the others are duplicates. When the batch
 * fails, each delivery is processed on its own, so that one event's failure holds back no other;
 * a failure of one is written on its delivery (attempts, next attempt after the backoff, the
 * error) and answered as that Error. Only an unprocessed delivery gets its result written: a
 * replay of a processed one answers `duplicate` and leaves its record as it was.
 */
async function processEvents<E extends { id: string }, R extends string>(
  db: Db,
  inbox: TInbox<E, R>,
  items: Array<TStoredEvent<E>>,
  now: Date,
): Promise<Map<string, TInboxResult<R> | Error>> {
  try {
    return await withRetry(() => db.transaction((tx) => applyEvents(tx, inbox, items, now)));
  } catch (err) {
    if (items.length > 1) {
      const results = new Map<string, TInboxResult<R> | Error>();
      for (const item of items) for (const [id, result] of await processEvents(db, inbox, [item], now)) results.set(id, result);
      return results;
    }
    await db
      .query(
        `UPDATE ${inbox.tables.deliveries} SET attempts = attempts + 1, last_error = $3,
           next_attempt_at = $2::timestamptz + make_interval(secs => least(3600, 10 * power(2, attempts))) WHERE id = $1`,
        [items[0]!.deliveryId, now, err instanceof Error ? err.message.slice(0, 500) : String(err)],
      )
      .catch(() => undefined);
    return new Map([[items[0]!.deliveryId, err instanceof Error ? err : new Error(String(err))]]);
  }
}

async function applyEvents<E extends { id: string }, R extends string>(
  tx: Queryable,
  inbox: TInbox<E, R>,
  items: Array<TStoredEvent<E>>,
  now: Date,
): Promise<Map<string, TInboxResult<R>>> {
  const { deliveries, events, source, delivery, subject } = inbox.tables;
  const claimed = await tx.query<{ delivery_id: string }>(
    `INSERT INTO ${events} (${source}, event_id, ${delivery}, result, processed_at)
     SELECT d.source, d.event_id, d.delivery_id, 'processing', $4 FROM unnest($1::text[], $2::text[], $3::bigint[]) AS d(source, event_id, delivery_id)
     ORDER BY d.source, d.event_id, d.delivery_id
     ON CONFLICT (${source}, event_id) DO NOTHING RETURNING ${delivery}::text AS delivery_id`,
    [items.map((i) => i.source), items.map((i) => i.event.id), items.map((i) => i.deliveryId), now],
  );
  const claims = new Set(claimed.map((row) => row.delivery_id));
  const fresh = items.filter((item) => claims.has(item.deliveryId));
  const outcomes = new Map<TStoredEvent<E>, { result: R; subjectId: string | null }>();
  (await inbox.apply(tx, fresh, now)).forEach((outcome, i) => {
    outcomes.set(fresh[i]!, outcome);
  });
  const results = new Map<string, TInboxResult<R>>();
  const applied: Array<{ item: TStoredEvent<E>; result: R; subjectId: string | null }> = [];
  for (const item of items) {
    const outcome = outcomes.get(item);
    results.set(item.deliveryId, outcome?.result ?? 'duplicate');
    if (outcome) applied.push({ item, ...outcome });
  }
  await tx.query(
    `WITH events AS (
       UPDATE ${events} e SET result = a.result, ${subject} = a.subject_id
       FROM unnest($1::text[], $2::text[], $3::text[], $4::bigint[]) AS a(source, event_id, result, subject_id)
       WHERE e.${source} = a.source AND e.event_id = a.event_id)
     UPDATE ${deliveries} w SET processed_at = $7, result = d.result
     FROM unnest($5::bigint[], $6::text[]) AS d(id, result) WHERE w.id = d.id AND w.processed_at IS NULL`,
    [
      applied.map((a) => a.item.source),
      applied.map((a) => a.item.event.id),
      applied.map((a) => a.result),
      applied.map((a) => a.subjectId),
      [...results.keys()],
      [...results.values()],
      now,
    ],
  );
  return results;
}

type TStoredDelivery = { id: string; source: string; raw_body: Buffer; processed_at: Date | null; signature_valid: boolean };

/**
 * Processes again the validly signed deliveries left unprocessed past their next attempt
 * (failed processing, or a core that died between storing and applying). Each is claimed by
 * moving its next attempt on first (SKIP LOCKED: instances share the work); the event id keeps
 * it exactly-once whoever gets there. `receivedBefore` (a starting core: its own start) also
 * takes the ones received before it, without waiting for their next attempt. Returns how many
 * were processed and how many failed.
 */
export async function processDueDeliveries<E extends { id: string }, R extends string>(
  db: Db,
  inbox: TInbox<E, R>,
  senders: ReadonlyMap<string, TSender<E>>,
  now: Date,
  options: { limit?: number; receivedBefore?: Date } = {},
): Promise<{ processed: number; failed: number }> {
  const { deliveries, source } = inbox.tables;
  const due = await db.query<TStoredDelivery>(
    `UPDATE ${deliveries} SET next_attempt_at = $1::timestamptz + make_interval(secs => least(3600, 10 * power(2, attempts)))
     WHERE id IN (SELECT id FROM ${deliveries} WHERE processed_at IS NULL AND signature_valid
                    AND (next_attempt_at <= $1 OR received_at < $3::timestamptz)
                  ORDER BY next_attempt_at LIMIT $2 FOR UPDATE SKIP LOCKED)
     RETURNING id::text AS id, ${source} AS source, raw_body, processed_at, signature_valid`,
    [now, options.limit ?? 100, options.receivedBefore ?? null],
  );
  const results = await processStored(db, inbox, senders, due, now);
  const failed = results.filter((result) => result instanceof Error).length;
  return { processed: results.length - failed, failed };
}

/** Stored deliveries processed again: their events parsed from the bodies as received. */
async function processStored<E extends { id: string }, R extends string>(
  db: Db,
  inbox: TInbox<E, R>,
  senders: ReadonlyMap<string, TSender<E>>,
  stored: TStoredDelivery[],
  now: Date,
): Promise<Array<TInboxResult<R> | Error>> {
  const items: Array<TStoredEvent<E>> = [];
  const malformed: string[] = [];
  for (const delivery of stored) {
    const sender = senders.get(delivery.source);
    const event = sender?.parse(delivery.raw_body);
    if (sender && event) items.push({ deliveryId: delivery.id, source: sender.id, event });
    else malformed.push(delivery.id);
  }
  if (malformed.length) {
    await db.query(`UPDATE ${inbox.tables.deliveries} SET processed_at = $2, result = 'malformed' WHERE id = ANY($1::bigint[]) AND processed_at IS NULL`, [
      malformed,
      now,
    ]);
  }
  const results = items.length ? await processEvents(db, inbox, items, now) : new Map<string, TInboxResult<R> | Error>();
  return stored.map((delivery) => results.get(delivery.id) ?? 'malformed');
}

/**
 * Processes one stored delivery again, now (an operator's replay). Only a delivery whose
 * signature was valid when it arrived is processed (its signature's time window was checked
 * then); its event id keeps it from applying twice.
 */
export async function replayDelivery<E extends { id: string }, R extends string>(
  db: Db,
  inbox: TInbox<E, R>,
  senders: ReadonlyMap<string, TSender<E>>,
  deliveryId: string,
  now: Date,
): Promise<{ wasProcessed: boolean; result: TInboxResult<R> }> {
  const { deliveries, source } = inbox.tables;
  const [delivery] = await db.query<TStoredDelivery>(
    `SELECT id::text AS id, ${source} AS source, raw_body, processed_at, signature_valid FROM ${deliveries} WHERE id = $1`,
    [deliveryId],
  );
  if (!delivery) throw new Error(`no ${inbox.name} delivery ${deliveryId}`);
  if (!delivery.signature_valid) throw new Error(`${inbox.name} delivery ${deliveryId} was not validly signed: it is never processed`);
  const [result] = await processStored(db, inbox, senders, [delivery], now);
  if (result instanceof Error) throw result;
  return { wasProcessed: delivery.processed_at !== null, result: result! };
}
