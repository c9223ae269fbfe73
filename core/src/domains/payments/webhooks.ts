import type { TPaymentProvider, TPaymentWebhookEvent } from '@obmen/shared';
import type { Db, Queryable } from '../../db/index.ts';
import { withRetry } from '../../money-errors.ts';
import { refuseDelivery, type TRefusalReason } from '../../lib/signed-inbox.ts';
import { applyDepositEvents, type TEventResult } from './payment-events.ts';
import type { TPaymentProviderAdapter, TProviders } from './providers.ts';
import { applyPayoutEvent, type TPayoutResult } from './withdrawal-states.ts';

export type TWebhookResult = TEventResult | TPayoutResult | 'duplicate' | 'bad_signature' | 'stale' | 'malformed';

/** A valid delivery left unprocessed this long is taken up by the retry (the live request may still be on it before). */
export const WEBHOOK_RETRY_GRACE_MS = 60_000;
// The backoff after the n-th failed attempt (in SQL below): 10 s, 20 s, 40 s … up to an hour.

/** What the webhook route hands over: one delivery as received, and the sender's address (its refusals are limited per address). */
export type TWebhookInput = { rawBody: Buffer; signature: string | undefined; now: Date; address?: string };
type TIncoming = { provider: TPaymentProviderAdapter; input: TWebhookInput };
/** A stored, validly signed delivery whose event is still to be applied. */
type TStoredEvent = { webhookId: string; provider: TPaymentProvider; event: TPaymentWebhookEvent };
/** A delivery's answer; webhookId null: refused by its signature, so not stored (refuseDelivery). */
type TReceived = { webhookId: string | null; result: TWebhookResult };

/**
 * One delivery to a provider's webhook (a batch of one: see receiveWebhooks). Used by the
 * providers that live in this process (core/src/providers/), which reach us only this way.
 */
export async function receiveWebhook(db: Db, provider: TPaymentProviderAdapter, input: TWebhookInput): Promise<TReceived> {
  const [received] = await receiveWebhooks(db, [{ provider, input }], input.now);
  if (received instanceof Error) throw received;
  return received!;
}

/**
 * Deliveries to the providers' webhooks, received together (the route gathers those that
 * arrive while the previous gathering is being stored: webhookIntake). A forged or stale one is
 * refused before anything is stored (refuseDelivery: counted, sampled, limited per sender). Each
 * validly signed delivery is stored first, as received, by ONE statement for all of them that
 * also answers at once what needs no processing: a malformed delivery, or a copy of an event
 * carried already (`duplicate`: storeDeliveries). A failed delivery stays on record.
 * The new events are then applied in ONE transaction that inserts their ids into
 * payment_events: a duplicate, concurrent or later, finds the id taken and moves nothing. A
 * forged or stale delivery never reaches payment_events, so it cannot use up a real event's id
 * either. When the processing fails (the database, a crash before the commit), each stored
 * delivery is processed again on its own (processDueWebhooks). Answers per delivery, in order:
 * its result, or the Error its processing ended with.
 */
export async function receiveWebhooks(db: Db, incoming: TIncoming[], now: Date): Promise<Array<TReceived | Error>> {
  const checked = incoming.map(checkDelivery);
  const signed = checked.filter((c): c is TChecked => !('refusal' in c));
  const stored = signed.length ? await storeDeliveries(db, signed) : [];
  const toApply = stored.filter(isStoredEvent);
  const applied = toApply.length ? await processEvents(db, toApply, now) : new Map<string, TWebhookResult | Error>();
  const answers = stored.map((entry) => (isStoredEvent(entry) ? answerOf(entry.webhookId, applied.get(entry.webhookId)!) : entry));
  const results: Array<TReceived | Error> = [];
  for (const c of checked) results.push('refusal' in c ? await refuse(db, c).catch((err: Error) => err) : answers.shift()!);
  return results;
}

/** A validly signed delivery as checked on arrival: its event when well formed, else `malformed`. */
type TChecked = { provider: TPaymentProvider; input: TWebhookInput; event: TPaymentWebhookEvent | null; refused: 'malformed' | null };
/** A delivery refused by its signature: never stored. */
type TRefused = { provider: TPaymentProvider; input: TWebhookInput; refusal: TRefusalReason };

function checkDelivery({ provider, input }: TIncoming): TChecked | TRefused {
  const check = provider.verifyEvent(input);
  if (check !== 'valid') return { provider: provider.id, input, refusal: check };
  const event = provider.parseEvent(input.rawBody);
  return { provider: provider.id, input, event, refused: event ? null : 'malformed' };
}

/** Counts and samples a refused delivery (429 past its sender's limit: refuseDelivery). */
async function refuse(db: Db, { provider, input, refusal }: TRefused): Promise<TReceived> {
  await refuseDelivery(db, { inbox: 'payment_webhooks', source: provider, reason: refusal, address: input.address }, input);
  return { webhookId: null, result: refusal };
}

function isStoredEvent(entry: TReceived | TStoredEvent): entry is TStoredEvent {
  return 'event' in entry;
}

function answerOf(webhookId: string, result: TWebhookResult | Error): TReceived | Error {
  return result instanceof Error ? result : { webhookId, result };
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
async function storeDeliveries(db: Db, checked: TChecked[]): Promise<Array<TReceived | TStoredEvent>> {
  // Rows are inserted in the input's order; their ids come from one sequence in that order.
  const stored = await db.query<{ id: string; result: TWebhookResult | null }>(
    `INSERT INTO payment_webhooks (provider, raw_body, signature, signature_valid, event_id, received_at, next_attempt_at, processed_at, result)
     SELECT d.provider, d.raw_body, d.signature, true, d.event_id, d.received_at,
            d.received_at + $7::int * interval '1 millisecond',
            CASE WHEN d.refused IS NOT NULL OR d.carried THEN d.received_at END,
            coalesce(d.refused, CASE WHEN d.carried THEN 'duplicate' END)
     FROM (SELECT d.*, d.event_id IS NOT NULL AND (
                    row_number() OVER (PARTITION BY d.provider, d.event_id ORDER BY d.n) > 1 OR applied.x IS NOT NULL OR in_flight.x IS NOT NULL) AS carried
           FROM unnest($1::text[], $2::bytea[], $3::text[], $4::text[], $5::text[], $6::timestamptz[]) WITH ORDINALITY
                  AS d(provider, raw_body, signature, event_id, refused, received_at, n)
           -- Looked up by key, delivery by delivery (LIMIT 1): a hash of all of payment_events,
           -- which the planner preferred while the table was small, grows with it.
           LEFT JOIN LATERAL (SELECT true AS x FROM payment_events e WHERE e.provider = d.provider AND e.event_id = d.event_id LIMIT 1) applied ON true
           LEFT JOIN LATERAL (SELECT true AS x FROM payment_webhooks w
                              WHERE w.provider = d.provider AND w.event_id = d.event_id AND w.processed_at IS NULL AND w.signature_valid
                                AND w.attempts = 0 LIMIT 1) in_flight ON true) d
     ORDER BY d.n
     RETURNING id::text AS id, result`,
    [
      checked.map((c) => c.provider),
      checked.map((c) => c.input.rawBody),
      checked.map((c) => c.input.signature ?? null),
      checked.map((c) => c.event?.id ?? null),
      checked.map((c) => c.refused),
      checked.map((c) => c.input.now),
      WEBHOOK_RETRY_GRACE_MS,
    ],
  );
  stored.sort((a, b) => (BigInt(a.id) < BigInt(b.id) ? -1 : 1));
  return checked.map((c, i) => {
    const { id, result } = stored[i]!;
    return result === null ? { webhookId: id, provider: c.provider, event: c.event! } : { webhookId: id, result };
  });
}

/** Deliveries stored by one statement, and events applied by one transaction, at most. */
const INTAKE_BATCH = 256;
/**
 * An apply running this long is stuck (a payment's row held by another transaction, a user's
 * cancel or an operator's command): the next gathering is applied beside it rather than wait.
 * A normal apply takes a few milliseconds.
 */
const INTAKE_STALL_MS = 50;

/**
 * The webhook route's way in: a pipeline of two stages, each one gathering at a time (group
 * commit). Deliveries that arrive while a gathering is being stored wait and are stored
 * together next; the events stored wait for the gathering being applied and are applied together
 * next, while the following deliveries are stored. One apply at a time keeps the gatherings
 * large (the cost of a transaction is shared by more events) and keeps them from queueing on
 * each other's row locks (the provider's clearing account is in every one); only an apply stuck
 * past INTAKE_STALL_MS lets the next one start beside it. A forged or stale delivery never enters
 * the pipeline (refuse); one the store decides (malformed, or a copy of an event carried
 * already: storeDeliveries) is answered at once. Each request is
 * still answered only after its own delivery is stored and, when it carries its event, applied
 * and committed: nothing is acknowledged that a crash could lose.
 */
export function webhookIntake(db: Db, now: () => Date) {
  type TWaiting = { checked: TChecked; resolve: (received: TReceived) => void; reject: (err: Error) => void };
  let waiting: TWaiting[] = [];
  let stored: Array<{ waiter: TWaiting; item: TStoredEvent }> = [];
  let storing = false;
  /** Applies running, and how many of them are stuck: one that is not stuck runs at a time. */
  let applying = 0;
  let stuck = 0;
  const answer = (waiter: TWaiting, received: TReceived | Error) => {
    if (received instanceof Error) waiter.reject(received);
    else waiter.resolve(received);
  };
  const store = () => {
    const batch = waiting.slice(0, INTAKE_BATCH);
    waiting = waiting.slice(INTAKE_BATCH);
    storing = true;
    storeDeliveries(
      db,
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
      batch.map((b) => b.item),
      now(),
    )
      .then(
        (results) => {
          for (const { waiter, item } of batch) answer(waiter, answerOf(item.webhookId, results.get(item.webhookId)!));
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
  return (provider: TPaymentProviderAdapter, input: TWebhookInput) => {
    const checked = checkDelivery({ provider, input });
    if ('refusal' in checked) return refuse(db, checked);
    return new Promise<TReceived>((resolve, reject) => {
      waiting.push({ checked, resolve, reject });
      pump();
    });
  };
}

/**
 * Applies stored, validly signed deliveries' events, exactly once per event id: all in ONE
 * transaction (one commit, and the provider's clearing account locked once for all of them).
 * Event ids are claimed in one order (provider, event id, delivery), so two batches never wait
 * on each other's ids; only the first delivery of an id claims it, the others are duplicates.
 * When the batch fails, each delivery is processed on its own, so that one event's failure holds
 * back no other; a failure of one is written on its delivery (attempts, next attempt after the
 * backoff, the error) and answered as that Error. Only an unprocessed delivery gets its result
 * written: a replay of a processed one answers `duplicate` and leaves its record as it was.
 */
async function processEvents(db: Db, items: TStoredEvent[], now: Date): Promise<Map<string, TWebhookResult | Error>> {
  try {
    return await withRetry(() => db.transaction((tx) => applyEvents(tx, items, now)));
  } catch (err) {
    if (items.length > 1) {
      const results = new Map<string, TWebhookResult | Error>();
      for (const item of items) for (const [id, result] of await processEvents(db, [item], now)) results.set(id, result);
      return results;
    }
    await db
      .query(
        `UPDATE payment_webhooks SET attempts = attempts + 1, last_error = $3,
           next_attempt_at = $2::timestamptz + make_interval(secs => least(3600, 10 * power(2, attempts))) WHERE id = $1`,
        [items[0]!.webhookId, now, err instanceof Error ? err.message.slice(0, 500) : String(err)],
      )
      .catch(() => undefined);
    return new Map([[items[0]!.webhookId, err instanceof Error ? err : new Error(String(err))]]);
  }
}

async function applyEvents(tx: Queryable, items: TStoredEvent[], now: Date): Promise<Map<string, TWebhookResult>> {
  const claimed = await tx.query<{ webhook_id: string }>(
    `INSERT INTO payment_events (provider, event_id, webhook_id, result, processed_at)
     SELECT d.provider, d.event_id, d.webhook_id, 'processing', $4 FROM unnest($1::text[], $2::text[], $3::bigint[]) AS d(provider, event_id, webhook_id)
     ORDER BY d.provider, d.event_id, d.webhook_id
     ON CONFLICT (provider, event_id) DO NOTHING RETURNING webhook_id::text AS webhook_id`,
    [items.map((i) => i.provider), items.map((i) => i.event.id), items.map((i) => i.webhookId), now],
  );
  const claims = new Set(claimed.map((row) => row.webhook_id));
  const results = new Map<string, TWebhookResult>();
  const fresh = items.filter((item) => claims.has(item.webhookId));
  // payment.*: deposits and purchases, applied together (payment-events.ts); payout.*: a withdrawal's payout, one by one (withdrawals.ts).
  const deposits = fresh.filter((item) => !item.event.type.startsWith('payout.'));
  const outcomes = new Map<TStoredEvent, { result: TWebhookResult; paymentId: string | null }>();
  (await applyDepositEvents(tx, deposits, now)).forEach((outcome, i) => {
    outcomes.set(deposits[i]!, outcome);
  });
  for (const item of fresh) if (!outcomes.has(item)) outcomes.set(item, await applyPayoutEvent(tx, item.provider, item.event, now));
  const applied: Array<{ item: TStoredEvent; result: TWebhookResult; paymentId: string | null }> = [];
  for (const item of items) {
    const outcome = outcomes.get(item);
    results.set(item.webhookId, outcome?.result ?? 'duplicate');
    if (outcome) applied.push({ item, ...outcome });
  }
  await tx.query(
    `WITH events AS (
       UPDATE payment_events e SET result = a.result, payment_id = a.payment_id
       FROM unnest($1::text[], $2::text[], $3::text[], $4::bigint[]) AS a(provider, event_id, result, payment_id)
       WHERE e.provider = a.provider AND e.event_id = a.event_id)
     UPDATE payment_webhooks w SET processed_at = $7, result = d.result
     FROM unnest($5::bigint[], $6::text[]) AS d(id, result) WHERE w.id = d.id AND w.processed_at IS NULL`,
    [
      applied.map((a) => a.item.provider),
      applied.map((a) => a.item.event.id),
      applied.map((a) => a.result),
      applied.map((a) => a.paymentId),
      [...results.keys()],
      [...results.values()],
      now,
    ],
  );
  return results;
}

type TStoredDelivery = { id: string; provider: string; raw_body: Buffer; processed_at: Date | null; signature_valid: boolean };

/**
 * Processes again the validly signed deliveries left unprocessed past their next attempt
 * (failed processing, or a core that died between storing and crediting). Each is claimed by
 * moving its next attempt on first (SKIP LOCKED: instances share the work); the event id keeps
 * it exactly-once whoever gets there. `receivedBefore` (a starting core: its own start) also takes
 * the ones received before it, without waiting for their next attempt. Returns how many were processed and how many failed.
 */
export async function processDueWebhooks(
  db: Db,
  providers: TProviders,
  now: Date,
  options: { limit?: number; receivedBefore?: Date } = {},
): Promise<{ processed: number; failed: number }> {
  const due = await db.query<TStoredDelivery>(
    `UPDATE payment_webhooks SET next_attempt_at = $1::timestamptz + make_interval(secs => least(3600, 10 * power(2, attempts)))
     WHERE id IN (SELECT id FROM payment_webhooks WHERE processed_at IS NULL AND signature_valid
                    AND (next_attempt_at <= $1 OR received_at < $3::timestamptz)
                  ORDER BY next_attempt_at LIMIT $2 FOR UPDATE SKIP LOCKED)
     RETURNING id::text AS id, provider, raw_body, processed_at, signature_valid`,
    [now, options.limit ?? 100, options.receivedBefore ?? null],
  );
  const results = await processStored(db, providers, due, now);
  const failed = results.filter((result) => result instanceof Error).length;
  return { processed: results.length - failed, failed };
}

/** Stored deliveries processed again: their events parsed from the bodies as received. */
async function processStored(db: Db, providers: TProviders, deliveries: TStoredDelivery[], now: Date): Promise<Array<TWebhookResult | Error>> {
  const items: TStoredEvent[] = [];
  const malformed: string[] = [];
  for (const delivery of deliveries) {
    const provider = providers.get(delivery.provider as TPaymentProvider);
    const event = provider?.parseEvent(delivery.raw_body);
    if (provider && event) items.push({ webhookId: delivery.id, provider: provider.id, event });
    else malformed.push(delivery.id);
  }
  if (malformed.length) {
    await db.query(`UPDATE payment_webhooks SET processed_at = $2, result = 'malformed' WHERE id = ANY($1::bigint[]) AND processed_at IS NULL`, [
      malformed,
      now,
    ]);
  }
  const results = items.length ? await processEvents(db, items, now) : new Map<string, TWebhookResult | Error>();
  return deliveries.map((delivery) => results.get(delivery.id) ?? 'malformed');
}

/**
 * payments:webhook:replay: processes one stored delivery again, now. Only a delivery whose
 * signature was valid when it arrived is processed (its signature's time window was checked
 * then); its event id keeps it from moving money twice.
 */
export async function replayWebhook(db: Db, providers: TProviders, webhookId: string, now: Date) {
  if (!/^\d{1,18}$/.test(webhookId)) throw new Error('usage: payments:webhook:replay <webhook id>');
  const [delivery] = await db.query<TStoredDelivery>(
    'SELECT id::text AS id, provider, raw_body, processed_at, signature_valid FROM payment_webhooks WHERE id = $1',
    [webhookId],
  );
  if (!delivery) throw new Error(`no webhook delivery ${webhookId}`);
  if (!delivery.signature_valid) throw new Error(`webhook delivery ${webhookId} was not validly signed: it is never processed`);
  const wasProcessed = delivery.processed_at !== null;
  const [result] = await processStored(db, providers, [delivery], now);
  if (result instanceof Error) throw result;
  return { webhook_id: webhookId, was_processed: wasProcessed, result };
}

/** The inbox, newest first, for operators (payments:webhooks). The body is shown as received. */
export async function listWebhooks(db: Queryable, filter: { provider?: string; result?: string; limit: number }) {
  return db.query<{
    id: string;
    provider: string;
    event_id: string | null;
    signature_valid: boolean;
    received_at: Date;
    processed_at: Date | null;
    result: string | null;
    attempts: number;
    next_attempt_at: Date | null;
    last_error: string | null;
    body: string;
  }>(
    `SELECT id::text AS id, provider, event_id, signature_valid, received_at, processed_at, result, attempts,
       CASE WHEN processed_at IS NULL THEN next_attempt_at END AS next_attempt_at, last_error, convert_from(raw_body, 'UTF8') AS body
     FROM payment_webhooks
     WHERE ($1::text IS NULL OR provider = $1) AND ($2::text IS NULL OR result = $2)
     ORDER BY id DESC LIMIT $3`,
    [filter.provider ?? null, filter.result ?? null, filter.limit],
  );
}
