import type { TPaymentProvider, TPaymentWebhookEvent } from '@obmen/shared';
import type { Db, Queryable } from '../../db/index.ts';
import {
  inboxIntake,
  INBOX_RETRY_GRACE_MS,
  processDueDeliveries,
  receiveDeliveries,
  replayDelivery,
  type TDeliveryInput,
  type TInbox,
  type TReceived,
  type TSender,
} from '../../inbox/intake.ts';
import type { TInboxResult } from '../../inbox/refusals.ts';
import { applyDepositEvents, type TEventResult } from './payment-events.ts';
import type { TPaymentProviderAdapter, TProviders } from './providers.ts';
import { applyPayoutEvent, type TPayoutResult } from './withdrawal-states.ts';

/*
 * The payment providers' webhooks: the one inbox (core/src/inbox/intake.ts) with the payments'
 * tables (payment_webhooks, payment_events) and their apply handler. payment.* events go to
 * deposits and purchases, applied together (payment-events.ts); payout.* to a withdrawal's
 * payout, one by one (withdrawal-states.ts).
 */

export type TWebhookResult = TInboxResult<TEventResult | TPayoutResult>;

/** A valid delivery left unprocessed this long is taken up by the retry (the live request may still be on it before). */
export const WEBHOOK_RETRY_GRACE_MS = INBOX_RETRY_GRACE_MS;

/** What the webhook route hands over: one delivery as received, and the sender's address (its refusals are limited per address). */
export type TWebhookInput = TDeliveryInput;
/** A delivery's answer; webhookId null: refused by its signature, so not stored. */
type TWebhookReceived = { webhookId: string | null; result: TWebhookResult };

const PAYMENT_INBOX: TInbox<TPaymentWebhookEvent, TEventResult | TPayoutResult> = {
  name: 'webhook',
  tables: { deliveries: 'payment_webhooks', events: 'payment_events', source: 'provider', delivery: 'webhook_id', subject: 'payment_id' },
  async apply(tx, items, now) {
    const events = items.map(({ source, event }) => ({ provider: source as TPaymentProvider, event }));
    const deposits = events.filter(({ event }) => !event.type.startsWith('payout.'));
    const applied = (await applyDepositEvents(tx, deposits, now)).values();
    const outcomes: Array<{ result: TEventResult | TPayoutResult; subjectId: string | null }> = [];
    // In the order given: the deposits' outcomes as applied together, each payout's in turn.
    for (const { provider, event } of events) {
      const outcome = event.type.startsWith('payout.') ? await applyPayoutEvent(tx, provider, event, now) : applied.next().value!;
      outcomes.push({ result: outcome.result, subjectId: outcome.paymentId });
    }
    return outcomes;
  },
};

const senders = new WeakMap<TPaymentProviderAdapter, TSender<TPaymentWebhookEvent>>();
/** A provider's adapter as the inbox's sender of its events (made once per adapter). */
function senderOf(provider: TPaymentProviderAdapter): TSender<TPaymentWebhookEvent> {
  let sender = senders.get(provider);
  if (!sender) {
    sender = { id: provider.id, verify: (input) => provider.verifyEvent(input), parse: (rawBody) => provider.parseEvent(rawBody) };
    senders.set(provider, sender);
  }
  return sender;
}

/** The senders of a registry, by provider id. */
function sendersOf(providers: TProviders): ReadonlyMap<string, TSender<TPaymentWebhookEvent>> {
  return new Map([...providers.values()].map((provider) => [provider.id, senderOf(provider)]));
}

const asWebhook = (received: TReceived<TEventResult | TPayoutResult>): TWebhookReceived => ({ webhookId: received.deliveryId, result: received.result });

/**
 * One delivery to a provider's webhook (a batch of one). Used by the providers that live in
 * this process (core/src/providers/), which reach us only this way.
 */
export async function receiveWebhook(db: Db, provider: TPaymentProviderAdapter, input: TWebhookInput): Promise<TWebhookReceived> {
  const [received] = await receiveWebhooks(db, [{ provider, input }], input.now);
  if (received instanceof Error) throw received;
  return received!;
}

/** Deliveries to the providers' webhooks, received together (the inbox's receiveDeliveries). */
export async function receiveWebhooks(
  db: Db,
  incoming: Array<{ provider: TPaymentProviderAdapter; input: TWebhookInput }>,
  now: Date,
): Promise<Array<TWebhookReceived | Error>> {
  const received = await receiveDeliveries(
    db,
    PAYMENT_INBOX,
    incoming.map(({ provider, input }) => ({ sender: senderOf(provider), input })),
    now,
  );
  return received.map((r) => (r instanceof Error ? r : asWebhook(r)));
}

/** The webhook route's way in: the inbox's pipelined intake (inboxIntake). */
export function webhookIntake(db: Db, now: () => Date) {
  const intake = inboxIntake(db, PAYMENT_INBOX, now);
  return async (provider: TPaymentProviderAdapter, input: TWebhookInput): Promise<TWebhookReceived> => asWebhook(await intake(senderOf(provider), input));
}

/**
 * Processes again the deliveries left unprocessed past their next attempt (failed processing,
 * or a core that died between storing and crediting): the inbox's processDueDeliveries.
 */
export async function processDueWebhooks(
  db: Db,
  providers: TProviders,
  now: Date,
  options: { limit?: number; receivedBefore?: Date } = {},
): Promise<{ processed: number; failed: number }> {
  return processDueDeliveries(db, PAYMENT_INBOX, sendersOf(providers), now, options);
}

/**
 * payments:webhook:replay: processes one stored delivery again, now. Only a delivery whose
 * signature was valid when it arrived is processed (its signature's time window was checked
 * then); its event id keeps it from moving money twice.
 */
export async function replayWebhook(db: Db, providers: TProviders, webhookId: string, now: Date) {
  if (!/^\d{1,18}$/.test(webhookId)) throw new Error('usage: payments:webhook:replay <webhook id>');
  const { wasProcessed, result } = await replayDelivery(db, PAYMENT_INBOX, sendersOf(providers), webhookId, now);
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
