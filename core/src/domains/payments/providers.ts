import type { TPaymentProvider } from '@obmen/shared';
import type { TConfig } from '../../config.ts';

/**
 * A payment provider as the core sees it. Providers differ in how the payer pays (hosted card
 * page, bank transfer, chain address); all of them report to us by signed webhook, and money in
 * flight with a provider sits in its clearing account (ledger kind 'clearing', name = id). The
 * systems users choose (catalogue.ts, table payment_systems) each run on one provider.
 */
export type TProviderAdapter = {
  id: TPaymentProvider;
  /** Undefined: no secret configured, every webhook is refused. */
  webhookSecret: string | undefined;
};

/** Outside production, so that a fresh checkout runs: never used when NODE_ENV=production. */
export const DEV_WEBHOOK_SECRETS: Readonly<Record<TPaymentProvider, string>> = {
  'sandbox-card': 'obmen-development-sandbox-card-webhook-secret',
  'sandbox-bank': 'obmen-development-sandbox-bank-webhook-secret',
  'sandbox-chain': 'obmen-development-sandbox-chain-webhook-secret',
};
export const DEV_WEBHOOK_SECRET_SANDBOX_CARD = DEV_WEBHOOK_SECRETS['sandbox-card'];

export type TProviders = ReadonlyMap<TPaymentProvider, TProviderAdapter>;

type TSecrets = Pick<TConfig, 'NODE_ENV' | 'WEBHOOK_SECRET_SANDBOX_CARD' | 'WEBHOOK_SECRET_SANDBOX_BANK' | 'WEBHOOK_SECRET_SANDBOX_CHAIN'>;

/** The providers of this core, with their secrets from the configuration. */
export function loadProviders(config: TSecrets): TProviders {
  const secret = (configured: string | undefined, provider: TPaymentProvider) =>
    configured ?? (config.NODE_ENV === 'production' ? undefined : DEV_WEBHOOK_SECRETS[provider]);
  return new Map<TPaymentProvider, TProviderAdapter>([
    ['sandbox-card', { id: 'sandbox-card', webhookSecret: secret(config.WEBHOOK_SECRET_SANDBOX_CARD, 'sandbox-card') }],
    ['sandbox-bank', { id: 'sandbox-bank', webhookSecret: secret(config.WEBHOOK_SECRET_SANDBOX_BANK, 'sandbox-bank') }],
    ['sandbox-chain', { id: 'sandbox-chain', webhookSecret: secret(config.WEBHOOK_SECRET_SANDBOX_CHAIN, 'sandbox-chain') }],
  ]);
}
