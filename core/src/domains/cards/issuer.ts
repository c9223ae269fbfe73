import type { TCardIssuer, TCardKind } from '@obmen/shared';
import type { TConfig } from '../../config.ts';
import type { Queryable } from '../../db/index.ts';
import type { TDocumentCipher } from '../verification/cipher.ts';
import { sandboxIssuer } from './sandbox-issuer.ts';

/** What a confirmed order tells the issuer. */
export type TIssuerOrder = {
  /** Our card's public id: the issuer names the order by it in every callback. */
  orderRef: string;
  kind: TCardKind;
  currency: string;
  nameOnCard: string;
  deliveryDays: number | null;
};

/**
 * A card issuer as the core sees it. We send it a confirmed order; it answers later, by signed
 * callbacks to POST /api/card/issuer/{id}/callback (order.accepted, card.issued, card.shipped,
 * card.delivered, card.activated, order.failed). The card number and CVC stay with the issuer:
 * a reveal asks it for them, and nothing of them is stored or logged on our side.
 */
export type TIssuerAdapter = {
  id: TCardIssuer;
  /** Undefined: no secret configured, every callback is refused. */
  callbackSecret: string | undefined;
  /** Sends a confirmed order, inside the transaction that confirms it (so both happen or neither). */
  submit(tx: Queryable, order: TIssuerOrder, now: Date): Promise<void>;
  /** The full number and CVC of an issued card (its issuer reference). */
  reveal(db: Queryable, reference: string): Promise<{ pan: string; cvc: string }>;
};

/** Outside production, so that a fresh checkout runs: never used when NODE_ENV=production. */
export const DEV_CARD_ISSUER_SECRET_SANDBOX = 'obmen-development-sandbox-card-issuer-secret';

export type TIssuers = ReadonlyMap<TCardIssuer, TIssuerAdapter>;

export function loadIssuers(config: Pick<TConfig, 'NODE_ENV' | 'CARD_ISSUER_SECRET_SANDBOX'>, cipher: TDocumentCipher): TIssuers {
  const secret = config.CARD_ISSUER_SECRET_SANDBOX ?? (config.NODE_ENV === 'production' ? undefined : DEV_CARD_ISSUER_SECRET_SANDBOX);
  return new Map<TCardIssuer, TIssuerAdapter>([['sandbox', sandboxIssuer(secret, cipher)]]);
}
