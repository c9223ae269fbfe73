import type { TCardIssuer, TCardKind } from '@obmen/shared';
import type { Queryable } from '../../db/index.ts';

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
 * a reveal asks it for them, and nothing of them is stored or logged on our side. Adapters live
 * in core/src/providers/ beside the payment providers' (the sandbox issuer: providers/sandbox/).
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

/** The issuers of this core (core/src/providers/index.ts loads them from the configuration). */
export type TIssuers = ReadonlyMap<TCardIssuer, TIssuerAdapter>;
