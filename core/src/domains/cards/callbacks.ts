import { ZCardIssuerEvent } from '@obmen/shared';
import type { Db, Queryable } from '../../db/index.ts';
import { receiveSigned, type TInboxResult } from '../../lib/signed-inbox.ts';
import type { TIssuerAdapter } from './issuer.ts';
import { applyIssuerEvent, type TIssuerEventResult } from './orders.ts';

export type TCallbackResult = TInboxResult<TIssuerEventResult>;

/**
 * One delivery to an issuer's callback: the signed inbox the payment webhooks use too
 * (lib/signed-inbox.ts), with the cards' own tables; the event is applied by applyIssuerEvent.
 */
export async function receiveIssuerCallback(
  db: Db,
  issuer: Pick<TIssuerAdapter, 'id' | 'callbackSecret'>,
  input: { rawBody: Buffer; signature: string | undefined; now: Date; address?: string },
): Promise<{ callbackId: string | null; result: TCallbackResult }> {
  const { deliveryId, result } = await receiveSigned(
    db,
    { deliveries: 'card_issuer_callbacks', events: 'card_issuer_events', source: 'issuer', delivery: 'callback_id', subject: 'card_id' },
    { id: issuer.id, secret: issuer.callbackSecret },
    input,
    (json) => {
      const parsed = ZCardIssuerEvent.safeParse(json);
      return parsed.success ? parsed.data : null;
    },
    async (tx, event) => {
      const applied = await applyIssuerEvent(tx, issuer.id, event, input.now);
      return { result: applied.result, subjectId: applied.cardId };
    },
  );
  return { callbackId: deliveryId, result };
}

/** The inbox, newest first, for operators (cards:callbacks). */
export async function listCallbacks(db: Queryable, limit = 50) {
  return db.query(
    `SELECT id::text AS id, issuer, event_id, signature_valid, received_at, processed_at, result, convert_from(raw_body, 'UTF8') AS body
     FROM card_issuer_callbacks ORDER BY id DESC LIMIT $1`,
    [limit],
  );
}
