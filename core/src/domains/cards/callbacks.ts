import { ZCardIssuerEvent, type TCardIssuerEvent } from '@obmen/shared';
import type { Db, Queryable } from '../../db/index.ts';
import {
  inboxIntake,
  parseEventBody,
  processDueDeliveries,
  receiveDelivery,
  replayDelivery,
  type TDeliveryInput,
  type TInbox,
  type TSender,
} from '../../inbox/intake.ts';
import type { TInboxResult } from '../../inbox/refusals.ts';
import { checkWebhookSignature } from '../../inbox/signature.ts';
import type { TIssuerAdapter, TIssuers } from './issuer.ts';
import { applyIssuerEvent, type TIssuerEventResult } from './orders.ts';

export type TCallbackResult = TInboxResult<TIssuerEventResult>;

/** The issuers' callbacks: the one inbox (core/src/inbox/intake.ts) with the cards' tables; each event applied by applyIssuerEvent. */
const CARD_INBOX: TInbox<TCardIssuerEvent, TIssuerEventResult> = {
  name: 'callback',
  tables: { deliveries: 'card_issuer_callbacks', events: 'card_issuer_events', source: 'issuer', delivery: 'callback_id', subject: 'card_id' },
  async apply(tx, items, now) {
    const outcomes: Array<{ result: TIssuerEventResult; subjectId: string | null }> = [];
    for (const { source, event } of items) {
      const applied = await applyIssuerEvent(tx, source, event, now);
      outcomes.push({ result: applied.result, subjectId: applied.cardId });
    }
    return outcomes;
  },
};

/** An issuer as the inbox's sender of its callbacks: signed with its callback secret. */
function senderOf(issuer: Pick<TIssuerAdapter, 'id' | 'callbackSecret'>): TSender<TCardIssuerEvent> {
  return {
    id: issuer.id,
    verify: ({ rawBody, signature, now }) => checkWebhookSignature(issuer.callbackSecret, signature, rawBody, now),
    parse: (rawBody) => parseEventBody(rawBody, ZCardIssuerEvent),
  };
}

const sendersOf = (issuers: TIssuers) => new Map([...issuers.values()].map((issuer) => [issuer.id as string, senderOf(issuer)]));

/** One delivery to an issuer's callback. */
export async function receiveIssuerCallback(
  db: Db,
  issuer: Pick<TIssuerAdapter, 'id' | 'callbackSecret'>,
  input: TDeliveryInput,
): Promise<{ callbackId: string | null; result: TCallbackResult }> {
  const { deliveryId, result } = await receiveDelivery(db, CARD_INBOX, senderOf(issuer), input);
  return { callbackId: deliveryId, result };
}

/** The callback route's way in: the inbox's pipelined intake (gatherings stored and applied together). */
export function issuerCallbackIntake(db: Db, now: () => Date) {
  const intake = inboxIntake(db, CARD_INBOX, now);
  return async (issuer: Pick<TIssuerAdapter, 'id' | 'callbackSecret'>, input: TDeliveryInput) => (await intake(senderOf(issuer), input)).result;
}

/** The callbacks left unprocessed past their next attempt, processed again (as processDueWebhooks does for payments). */
export async function processDueCallbacks(db: Db, issuers: TIssuers, now: Date, options: { limit?: number; receivedBefore?: Date } = {}) {
  return processDueDeliveries(db, CARD_INBOX, sendersOf(issuers), now, options);
}

/** cards:callback:replay: one stored, validly signed callback processed again now (its event id keeps it exactly once). */
export async function replayCallback(db: Db, issuers: TIssuers, callbackId: string, now: Date) {
  if (!/^\d{1,18}$/.test(callbackId)) throw new Error('usage: cards:callback:replay <callback id>');
  const { wasProcessed, result } = await replayDelivery(db, CARD_INBOX, sendersOf(issuers), callbackId, now);
  return { callback_id: callbackId, was_processed: wasProcessed, result };
}

/** The inbox, newest first, for operators (cards:callbacks). */
export async function listCallbacks(db: Queryable, limit = 50) {
  return db.query(
    `SELECT id::text AS id, issuer, event_id, signature_valid, received_at, processed_at, result, convert_from(raw_body, 'UTF8') AS body
     FROM card_issuer_callbacks ORDER BY id DESC LIMIT $1`,
    [limit],
  );
}
