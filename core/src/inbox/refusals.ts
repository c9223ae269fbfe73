import type { Queryable } from '../db/index.ts';
import { AppError } from '../errors.ts';
import { consumeRateLimit } from '../rate-limit.ts';

/*
 * What the inbox (intake.ts) does with deliveries it does not apply: a refused one (forged or
 * stale) is only counted, with a bounded sample kept, and past a limit per sender address
 * answered 429 (refuseDelivery); processed ones are purged after the retention (purgeInboxes).
 */

/**
 * The two tables of one inbox and the names of their columns (fixed strings, never input): the
 * payment providers' webhooks and the card issuers' callbacks.
 */
export type TInboxTables = {
  /**
   * Every delivery: (source, raw_body, signature, signature_valid, event_id, received_at,
   * processed_at, result, attempts, next_attempt_at, last_error).
   */
  deliveries: 'payment_webhooks' | 'card_issuer_callbacks';
  /** The exactly-once keys: (source, event_id, <delivery>, <subject>, result, processed_at). */
  events: 'payment_events' | 'card_issuer_events';
  source: 'provider' | 'issuer';
  delivery: 'webhook_id' | 'callback_id';
  /** What the event was about (a payment, a card). */
  subject: 'payment_id' | 'card_id';
};

export type TInboxResult<R extends string> = R | 'duplicate' | 'bad_signature' | 'stale' | 'malformed';

/** Why a delivery is refused before it is stored. */
export type TRefusalReason = 'bad_signature' | 'stale';

/** Refused deliveries kept per inbox, source and reason (the newest; older ones are overwritten). */
export const REFUSED_SAMPLE_SIZE = 100;
/** What a sample keeps of a refused body: enough to see what it was. */
const REFUSED_BODY_HEAD = 2048;

/**
 * A delivery refused by its signature: counted per inbox, source and reason, and kept in the
 * sample ring (inbox_refused_samples, REFUSED_SAMPLE_SIZE slots per key: whatever the flood, the
 * table stays that size). With the sender's address (a request), refusals count against that
 * address's limit (webhook_refused_ip): past it the delivery is only counted, as rate_limited,
 * and this throws the 429. A validly signed delivery never comes here, so it is never limited.
 */
export async function refuseDelivery(
  db: Queryable,
  refusal: { inbox: TInboxTables['deliveries']; source: string; reason: TRefusalReason; address: string | undefined },
  input: { rawBody: Buffer; signature: string | undefined; now: Date },
): Promise<void> {
  let limited: unknown = null;
  if (refusal.address !== undefined) {
    await consumeRateLimit(db, 'webhook_refused_ip', refusal.address).catch((err: unknown) => {
      if (!(err instanceof AppError) || err.code !== 'rate_limited') throw err;
      limited = err;
    });
  }
  await db.query(
    `WITH counted AS (
       INSERT INTO inbox_refusals AS r (inbox, source, reason, refused, first_at, last_at) VALUES ($1, $2, $3, 1, $4, $4)
       ON CONFLICT (inbox, source, reason) DO UPDATE SET refused = r.refused + 1, last_at = greatest(r.last_at, excluded.last_at)
       RETURNING refused)
     INSERT INTO inbox_refused_samples (inbox, source, reason, slot, address, signature, body_head, body_size, received_at)
     SELECT $1, $2, $3, ((refused - 1) % $9)::int, $5, $6, $7, $8, $4 FROM counted WHERE NOT $10
     ON CONFLICT (inbox, source, reason, slot) DO UPDATE SET address = excluded.address, signature = excluded.signature,
       body_head = excluded.body_head, body_size = excluded.body_size, received_at = excluded.received_at`,
    [
      refusal.inbox,
      refusal.source,
      limited ? 'rate_limited' : refusal.reason,
      input.now,
      refusal.address ?? null,
      input.signature?.slice(0, 512) ?? null,
      input.rawBody.subarray(0, REFUSED_BODY_HEAD),
      input.rawBody.length,
      REFUSED_SAMPLE_SIZE,
      limited !== null,
    ],
  );
  if (limited) throw limited;
}

/** Operators' view (webhooks:refused): the counts, and the newest samples of refused deliveries. */
export async function listRefusals(db: Queryable, limit: number) {
  const counts = await db.query('SELECT inbox, source, reason, refused::text AS refused, first_at, last_at FROM inbox_refusals ORDER BY inbox, source, reason');
  const samples = await db.query(
    `SELECT inbox, source, reason, address, signature, received_at, body_size, convert_from(body_head, 'UTF8') AS body_head
     FROM inbox_refused_samples ORDER BY received_at DESC LIMIT $1`,
    [limit],
  );
  return { counts, samples };
}

/** How many processed deliveries one statement of the purge deletes (short transactions on a big table). */
const PURGE_BATCH = 5_000;

/**
 * Deletes the deliveries of both inboxes processed before `now` minus the retention, batch by
 * batch. An unprocessed delivery (its event still to apply or retry) is kept whatever its age.
 * Ids grow with arrival, so each batch walks the primary key only up to the first delivery
 * received within the retention.
 */
export async function purgeInboxes(db: Queryable, now: Date, retentionDays: number): Promise<number> {
  const before = new Date(now.getTime() - retentionDays * 86_400_000);
  let purged = 0;
  for (const table of ['payment_webhooks', 'card_issuer_callbacks'] as const) {
    for (;;) {
      const deleted = await db.query(
        `DELETE FROM ${table} WHERE id IN (
           SELECT id FROM ${table}
           WHERE id < coalesce((SELECT id FROM ${table} WHERE received_at >= $1 ORDER BY id LIMIT 1), (SELECT max(id) + 1 FROM ${table}))
             AND processed_at < $1
           ORDER BY id LIMIT $2)
         RETURNING 1`,
        [before, PURGE_BATCH],
      );
      purged += deleted.length;
      if (deleted.length < PURGE_BATCH) break;
    }
  }
  return purged;
}
