import type { TBankDetails, TPaymentDirection, TPaymentProvider, TPaymentWebhookEvent } from '@obmen/shared';
import type { Queryable } from '../../db/index.ts';
import type { TSignatureCheck } from '../../inbox/signature.ts';

/**
 * A payment provider as the payments domain sees it: the one door between our payments and a
 * provider's rails. Providers differ in how the payer pays (a hosted card page, a bank transfer
 * quoting a reference, a chain address); all of them report to us by signed events on
 * POST /api/payments/webhook/{id}, and money in flight with a provider sits in its clearing
 * account (ledger kind 'clearing', name = id). The systems users choose (catalogue.ts, table
 * payment_systems) each run on one provider; the domain never names one, it asks its adapter.
 *
 * Adapters live in core/src/providers/ (one folder per provider family) and are registered by
 * configuration in core/src/providers/index.ts (loadPaymentProviders), which app.ts and the CLI
 * hand to registerPaymentProviders. To add a provider, e.g. an EVM chain:
 *   1. its id in PAYMENT_PROVIDERS (shared/src/payments.ts): the webhook path and the API name it;
 *   2. core/src/providers/evm/ implementing this type: `deposits: 'address'` with
 *      openDepositAddress (derive the user's address from the wallet's key), verifyEvent and
 *      parseEvent for the signed notifications of its indexer (a transfer seen, then each
 *      confirmation: the same TPaymentWebhookEvent a chain sends today, `address` and
 *      `confirmations` set), sendPayout handing the transfer to its signer (idempotent by our
 *      reference), payoutEtaMs;
 *   3. registered in loadPaymentProviders under its own configuration (its secrets, node URL),
 *      and its systems added by an operator (payments:system:price) or a seed of its folder.
 * Nothing in core/src/domains changes: deposits, purchases, withdrawals, the inbox and the
 * ledger work on whatever adapter the registry holds.
 */
export type TPaymentProviderAdapter = {
  id: TPaymentProvider;
  /** Undefined: no secret configured, every event is refused (and the provider's own tools cannot sign one). */
  webhookSecret: string | undefined;
  /** Checks a delivery's signature against its raw body, at `now`. */
  verifyEvent(input: { rawBody: Buffer; signature: string | undefined; now: Date }): TSignatureCheck;
  /** The event of a validly signed body; null when it is not one (answered `malformed`). */
  parseEvent(rawBody: Buffer): TPaymentWebhookEvent | null;
  /**
   * How a deposit is opened. `address`: each user has one address per currency, made on request
   * (openDepositAddress); a deposit opens when the provider reports a transfer to it.
   * `payment`: each deposit (and purchase) is a payment we open (openPayment) and the payer pays.
   */
  deposits: 'address' | 'payment';
  /** The user's deposit address for a currency of a system (made once, then the same). */
  openDepositAddress?(db: Queryable, input: { userId: string; currency: string; systemId: string; now: Date }): Promise<string>;
  /** A new deposit or purchase payment: how long it waits to be paid, and the reference the payer quotes (if any). */
  openPayment(input: { direction: Extract<TPaymentDirection, 'deposit' | 'purchase'> }): { lifetimeMs?: number; reference?: string };
  /** Where the payer pays one of our payments (its page and history show it). */
  payWith(payment: { publicId: string; reference: string | null; open: boolean }): { payUrl: string | null; bank: TBankDetails | null };
  /** How long a payout usually takes once handed over (what the user is told). */
  payoutEtaMs: number;
  /**
   * Hands a payout over, inside the transaction that moves the withdrawal to `processing`.
   * Handing the same reference twice (a retry after a crash) gives the same payout. The card
   * number is given unsealed for the provider and must not be kept. Answers the provider's
   * reference of the payout.
   */
  sendPayout(tx: Queryable, payout: TPayoutOrder, now: Date): Promise<string>;
  /**
   * The provider's own record of the payouts it was handed, for reconciliation (reconcile.ts):
   * a SELECT of (provider, reference, currency, amount in minor units, state 'pending' |
   * 'succeeded' | 'failed', settled_at). A provider whose reports are imported names their table.
   */
  payoutBook?: string;
};

/** A payout as handed to its provider (amounts in minor units). */
export type TPayoutOrder = {
  /** Our withdrawal's public id: the provider names the payout by it in its events. */
  reference: string;
  currency: string;
  /** What the receiver gets (the fee stays with us). */
  amount: bigint;
  /** The form, masked (what the provider's book may show). */
  destination: string;
  cardNumber: string | null;
};

export type TProviders = ReadonlyMap<TPaymentProvider, TPaymentProviderAdapter>;

let registered: TProviders = new Map();

/** The providers this process runs with (app.ts and the CLI, from the configuration). */
export function registerPaymentProviders(providers: TProviders): void {
  registered = providers;
}

/** The adapter of a provider; one not registered here cannot open or pay anything. */
export function paymentProvider(id: TPaymentProvider): TPaymentProviderAdapter {
  const adapter = registered.get(id);
  if (!adapter) throw new Error(`payment provider ${id} is not registered here`);
  return adapter;
}

/** Every provider registered here. */
export function registeredPaymentProviders(): Iterable<TPaymentProviderAdapter> {
  return registered.values();
}

/** The adapter of a provider, or undefined when it is not registered (reading old payments). */
export function findPaymentProvider(id: TPaymentProvider): TPaymentProviderAdapter | undefined {
  return registered.get(id);
}
