import { ZPaymentWebhookEvent, type TPaymentProvider, type TPaymentWebhookEvent } from '@obmen/shared';
import type { Db, Queryable } from '../../db/index.ts';
import { withRetry } from '../../money-errors.ts';
import { checkWebhookSignature } from './signature.ts';
import { applyDepositEvent, type TEventResult } from './deposits.ts';
import type { TProviderAdapter, TProviders } from './providers.ts';
import { applyPayoutEvent, type TPayoutResult } from './withdrawals.ts';

export type TWebhookResult = TEventResult | TPayoutResult | 'duplicate' | 'bad_signature' | 'stale' | 'malformed';

/** A valid delivery left unprocessed this long is taken up by the retry (the live request may still be on it before). */
export const WEBHOOK_RETRY_GRACE_MS = 60_000;
// The backoff after the n-th failed attempt (in SQL below): 10 s, 20 s, 40 s … up to an hour.

/**
 * One delivery to a provider's webhook. It is stored first, as received, whatever it holds
 * (its own statement: a refused or failed delivery stays on record). Then, only when signed
 * with the provider's secret within the time window, its event is applied in ONE transaction
 * that also inserts the event id into payment_events: a duplicate, concurrent or later, finds
 * the id taken and moves nothing. A forged or stale delivery never reaches payment_events, so
 * it cannot use up a real event's id either. When the processing fails (the database, a crash
 * before the commit), the stored delivery is processed again later (processDueWebhooks).
 */
export async function receiveWebhook(
  db: Db,
  provider: TProviderAdapter,
  input: { rawBody: Buffer; signature: string | undefined; now: Date },
): Promise<{ webhookId: string; result: TWebhookResult }> {
  const check = checkWebhookSignature(provider.webhookSecret, input.signature, input.rawBody, input.now);
  const event = check === 'valid' ? parseEvent(input.rawBody) : null;
  const [stored] = await db.query<{ id: string }>(
    `INSERT INTO payment_webhooks (provider, raw_body, signature, signature_valid, event_id, received_at, next_attempt_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7) RETURNING id::text AS id`,
    [
      provider.id,
      input.rawBody,
      input.signature ?? null,
      check === 'valid',
      event?.id ?? null,
      input.now,
      new Date(input.now.getTime() + WEBHOOK_RETRY_GRACE_MS),
    ],
  );
  const webhookId = stored!.id;
  if (check !== 'valid' || !event) {
    const result: TWebhookResult = check !== 'valid' ? check : 'malformed';
    await db.query('UPDATE payment_webhooks SET processed_at = $2, result = $3 WHERE id = $1', [webhookId, input.now, result]);
    return { webhookId, result };
  }
  return { webhookId, result: await processDelivery(db, provider, webhookId, event, input.now) };
}

/**
 * Applies a stored, validly signed delivery's event, exactly once per event id. A failure is
 * written on the delivery (attempts, next attempt after the backoff, the error) and thrown.
 * Only an unprocessed delivery gets its result written: a replay of a processed one answers
 * `duplicate` and leaves its record as it was.
 */
async function processDelivery(db: Db, provider: TProviderAdapter, webhookId: string, event: TPaymentWebhookEvent, now: Date): Promise<TWebhookResult> {
  try {
    return await withRetry(() =>
      db.transaction(async (tx) => {
        const [claimed] = await tx.query(
          `INSERT INTO payment_events (provider, event_id, webhook_id, result, processed_at) VALUES ($1, $2, $3, 'processing', $4)
           ON CONFLICT (provider, event_id) DO NOTHING RETURNING 1`,
          [provider.id, event.id, webhookId, now],
        );
        let outcome: TWebhookResult = 'duplicate';
        if (claimed) {
          // payout.*: a withdrawal's payout (withdrawals.ts); payment.*: a deposit or a purchase.
          const applied = event.type.startsWith('payout.')
            ? await applyPayoutEvent(tx, provider.id, event, now)
            : await applyDepositEvent(tx, provider.id, event, now);
          outcome = applied.result;
          await tx.query('UPDATE payment_events SET result = $3, payment_id = $4 WHERE provider = $1 AND event_id = $2', [
            provider.id,
            event.id,
            outcome,
            applied.paymentId,
          ]);
        }
        await tx.query('UPDATE payment_webhooks SET processed_at = $2, result = $3 WHERE id = $1 AND processed_at IS NULL', [webhookId, now, outcome]);
        return outcome;
      }),
    );
  } catch (err) {
    await db
      .query(
        `UPDATE payment_webhooks SET attempts = attempts + 1, last_error = $3,
           next_attempt_at = $2::timestamptz + make_interval(secs => least(3600, 10 * power(2, attempts))) WHERE id = $1`,
        [webhookId, now, err instanceof Error ? err.message.slice(0, 500) : String(err)],
      )
      .catch(() => undefined);
    throw err;
  }
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
  let processed = 0;
  let failed = 0;
  for (const delivery of due) {
    try {
      await processStored(db, providers, delivery, now);
      processed++;
    } catch {
      failed++;
    }
  }
  return { processed, failed };
}

async function processStored(db: Db, providers: TProviders, delivery: TStoredDelivery, now: Date): Promise<TWebhookResult> {
  const provider = providers.get(delivery.provider as TPaymentProvider);
  const event = parseEvent(delivery.raw_body);
  if (!provider || !event) {
    await db.query('UPDATE payment_webhooks SET processed_at = $2, result = $3 WHERE id = $1 AND processed_at IS NULL', [delivery.id, now, 'malformed']);
    return 'malformed';
  }
  return processDelivery(db, provider, delivery.id, event, now);
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
  const result = await processStored(db, providers, delivery, now);
  return { webhook_id: webhookId, was_processed: wasProcessed, result };
}

function parseEvent(rawBody: Buffer) {
  let json: unknown;
  try {
    json = JSON.parse(rawBody.toString('utf8'));
  } catch {
    return null;
  }
  const parsed = ZPaymentWebhookEvent.safeParse(json);
  return parsed.success ? parsed.data : null;
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
