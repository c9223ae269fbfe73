import { ZPaymentWebhookEvent } from '@obmen/shared';
import type { Db, Queryable } from '../../db/index.ts';
import { withRetry } from '../../money-errors.ts';
import { checkWebhookSignature } from './signature.ts';
import { applyDepositEvent, type TEventResult } from './deposits.ts';
import type { TProviderAdapter } from './providers.ts';
import { applyPayoutEvent, type TPayoutResult } from './withdrawals.ts';

export type TWebhookResult = TEventResult | TPayoutResult | 'duplicate' | 'bad_signature' | 'stale' | 'malformed';

/**
 * One delivery to a provider's webhook. It is stored first, as received, whatever it holds
 * (its own statement: a refused or failed delivery stays on record). Then, only when signed
 * with the provider's secret within the time window, its event is applied in ONE transaction
 * that also inserts the event id into payment_events: a duplicate, concurrent or later, finds
 * the id taken and moves nothing. A forged or stale delivery never reaches payment_events, so
 * it cannot use up a real event's id either.
 */
export async function receiveWebhook(
  db: Db,
  provider: TProviderAdapter,
  input: { rawBody: Buffer; signature: string | undefined; now: Date },
): Promise<{ webhookId: string; result: TWebhookResult }> {
  const check = checkWebhookSignature(provider.webhookSecret, input.signature, input.rawBody, input.now);
  const event = check === 'valid' ? parseEvent(input.rawBody) : null;
  const [stored] = await db.query<{ id: string }>(
    `INSERT INTO payment_webhooks (provider, raw_body, signature, signature_valid, event_id, received_at)
     VALUES ($1, $2, $3, $4, $5, $6) RETURNING id::text AS id`,
    [provider.id, input.rawBody, input.signature ?? null, check === 'valid', event?.id ?? null, input.now],
  );
  const webhookId = stored!.id;
  if (check !== 'valid' || !event) {
    const result: TWebhookResult = check !== 'valid' ? check : 'malformed';
    await db.query('UPDATE payment_webhooks SET processed_at = $2, result = $3 WHERE id = $1', [webhookId, input.now, result]);
    return { webhookId, result };
  }
  const result = await withRetry(() =>
    db.transaction(async (tx) => {
      const [claimed] = await tx.query(
        `INSERT INTO payment_events (provider, event_id, webhook_id, result, processed_at) VALUES ($1, $2, $3, 'processing', $4)
         ON CONFLICT (provider, event_id) DO NOTHING RETURNING 1`,
        [provider.id, event.id, webhookId, input.now],
      );
      let outcome: TWebhookResult = 'duplicate';
      if (claimed) {
        // payout.*: a withdrawal's payout (withdrawals.ts); payment.*: a deposit.
        const applied = event.type.startsWith('payout.')
          ? await applyPayoutEvent(tx, provider.id, event, input.now)
          : await applyDepositEvent(tx, provider.id, event, input.now);
        outcome = applied.result;
        await tx.query('UPDATE payment_events SET result = $3, payment_id = $4 WHERE provider = $1 AND event_id = $2', [
          provider.id,
          event.id,
          outcome,
          applied.paymentId,
        ]);
      }
      await tx.query('UPDATE payment_webhooks SET processed_at = $2, result = $3 WHERE id = $1', [webhookId, input.now, outcome]);
      return outcome;
    }),
  );
  return { webhookId, result };
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
    body: string;
  }>(
    `SELECT id::text AS id, provider, event_id, signature_valid, received_at, processed_at, result, convert_from(raw_body, 'UTF8') AS body
     FROM payment_webhooks
     WHERE ($1::text IS NULL OR provider = $1) AND ($2::text IS NULL OR result = $2)
     ORDER BY id DESC LIMIT $3`,
    [filter.provider ?? null, filter.result ?? null, filter.limit],
  );
}
