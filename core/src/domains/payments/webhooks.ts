import { ZPaymentWebhookEvent } from '@obmen/shared';
import type { Db, Queryable } from '../../db/index.ts';
import { receiveSigned, type TInboxResult } from '../../lib/signed-inbox.ts';
import { applyDepositEvent, type TEventResult } from './deposits.ts';
import type { TProviderAdapter } from './providers.ts';
import { applyPayoutEvent, type TPayoutResult } from './withdrawals.ts';

export type TWebhookResult = TInboxResult<TEventResult | TPayoutResult>;

/**
 * One delivery to a provider's webhook, through the signed inbox (lib/signed-inbox.ts): stored
 * first as received; only a delivery signed with the provider's secret within the time window
 * is applied, in ONE transaction that also inserts its event id into payment_events, so a
 * duplicate, concurrent or later, moves nothing.
 */
export async function receiveWebhook(
  db: Db,
  provider: TProviderAdapter,
  input: { rawBody: Buffer; signature: string | undefined; now: Date },
): Promise<{ webhookId: string; result: TWebhookResult }> {
  const { deliveryId, result } = await receiveSigned(
    db,
    { deliveries: 'payment_webhooks', events: 'payment_events', source: 'provider', delivery: 'webhook_id', subject: 'payment_id' },
    { id: provider.id, secret: provider.webhookSecret },
    input,
    (json) => {
      const parsed = ZPaymentWebhookEvent.safeParse(json);
      return parsed.success ? parsed.data : null;
    },
    async (tx, event) => {
      // payout.*: a withdrawal's payout (withdrawals.ts); payment.*: a deposit.
      const applied = event.type.startsWith('payout.')
        ? await applyPayoutEvent(tx, provider.id, event, input.now)
        : await applyDepositEvent(tx, provider.id, event, input.now);
      return { result: applied.result, subjectId: applied.paymentId };
    },
  );
  return { webhookId: deliveryId, result };
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
