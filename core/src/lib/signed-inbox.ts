import type { Db, Queryable } from '../db/index.ts';
import { withRetry } from '../money-errors.ts';
import { checkWebhookSignature } from '../domains/payments/signature.ts';

/*
 * The inbox of signed deliveries from outside (payment providers' webhooks, card issuers'
 * callbacks): one way for both.
 *
 * A delivery is stored first, as received, whatever it holds (its own statement: a refused or
 * failed one stays on record). Then, only when signed with the sender's secret within the time
 * window (payments/signature.ts), its event is applied in ONE transaction that also inserts the
 * event id into the events table: a duplicate, concurrent or later, waits on the key, finds it
 * taken and moves nothing. A forged or stale delivery never reaches the events table, so it
 * cannot use up a real event's id either.
 */

/** The two tables of one inbox and the names of their columns (fixed strings, never input). */
export type TInboxTables = {
  /** Every delivery: (source, raw_body, signature, signature_valid, event_id, received_at, processed_at, result). */
  deliveries: 'payment_webhooks' | 'card_issuer_callbacks';
  /** The exactly-once keys: (source, event_id, <delivery>, <subject>, result, processed_at). */
  events: 'payment_events' | 'card_issuer_events';
  source: 'provider' | 'issuer';
  delivery: 'webhook_id' | 'callback_id';
  /** What the event was about (a payment, a card). */
  subject: 'payment_id' | 'card_id';
};

export type TInboxResult<R extends string> = R | 'duplicate' | 'bad_signature' | 'stale' | 'malformed';

export async function receiveSigned<E extends { id: string }, R extends string>(
  db: Db,
  tables: TInboxTables,
  sender: { id: string; secret: string | undefined },
  input: { rawBody: Buffer; signature: string | undefined; now: Date },
  parse: (json: unknown) => E | null,
  apply: (tx: Queryable, event: E) => Promise<{ result: R; subjectId: string | null }>,
): Promise<{ deliveryId: string; result: TInboxResult<R> }> {
  const { deliveries, events, source, delivery, subject } = tables;
  const check = checkWebhookSignature(sender.secret, input.signature, input.rawBody, input.now);
  const event = check === 'valid' ? parseJson(input.rawBody, parse) : null;
  const [stored] = await db.query<{ id: string }>(
    `INSERT INTO ${deliveries} (${source}, raw_body, signature, signature_valid, event_id, received_at)
     VALUES ($1, $2, $3, $4, $5, $6) RETURNING id::text AS id`,
    [sender.id, input.rawBody, input.signature ?? null, check === 'valid', event?.id ?? null, input.now],
  );
  const deliveryId = stored!.id;
  if (check !== 'valid' || !event) {
    const result: TInboxResult<R> = check !== 'valid' ? check : 'malformed';
    await db.query(`UPDATE ${deliveries} SET processed_at = $2, result = $3 WHERE id = $1`, [deliveryId, input.now, result]);
    return { deliveryId, result };
  }
  const result = await withRetry(() =>
    db.transaction(async (tx) => {
      const [claimed] = await tx.query(
        `INSERT INTO ${events} (${source}, event_id, ${delivery}, result, processed_at) VALUES ($1, $2, $3, 'processing', $4)
         ON CONFLICT (${source}, event_id) DO NOTHING RETURNING 1`,
        [sender.id, event.id, deliveryId, input.now],
      );
      let outcome: TInboxResult<R> = 'duplicate';
      if (claimed) {
        const applied = await apply(tx, event);
        outcome = applied.result;
        await tx.query(`UPDATE ${events} SET result = $3, ${subject} = $4 WHERE ${source} = $1 AND event_id = $2`, [
          sender.id,
          event.id,
          outcome,
          applied.subjectId,
        ]);
      }
      await tx.query(`UPDATE ${deliveries} SET processed_at = $2, result = $3 WHERE id = $1`, [deliveryId, input.now, outcome]);
      return outcome;
    }),
  );
  return { deliveryId, result };
}

function parseJson<E>(rawBody: Buffer, parse: (json: unknown) => E | null): E | null {
  let json: unknown;
  try {
    json = JSON.parse(rawBody.toString('utf8'));
  } catch {
    return null;
  }
  return parse(json);
}
