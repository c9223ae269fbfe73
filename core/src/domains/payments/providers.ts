import type { TPaymentProvider } from '@obmen/shared';
import type { TConfig } from '../../config.ts';

/**
 * A payment system as the core sees it. Providers differ in how the payer pays (hosted card
 * page, bank transfer, chain address); all of them report to us by signed webhook, and money in
 * flight with a provider sits in its clearing account (ledger kind 'clearing', name = id).
 */
export type TProviderAdapter = {
  id: TPaymentProvider;
  names: { ru: string; en: string };
  /** Currencies it takes deposits in. */
  depositCurrencies: readonly string[];
  /** Undefined: no secret configured, every webhook is refused. */
  webhookSecret: string | undefined;
};

/** Outside production, so that a fresh checkout runs: never used when NODE_ENV=production. */
export const DEV_WEBHOOK_SECRET_SANDBOX_CARD = 'obmen-development-sandbox-card-webhook-secret';

export type TProviders = ReadonlyMap<TPaymentProvider, TProviderAdapter>;

/** The providers of this core, with their secrets from the configuration. */
export function loadProviders(config: Pick<TConfig, 'NODE_ENV' | 'WEBHOOK_SECRET_SANDBOX_CARD'>): TProviders {
  const devOnly = (secret: string) => (config.NODE_ENV === 'production' ? undefined : secret);
  return new Map<TPaymentProvider, TProviderAdapter>([
    [
      'sandbox-card',
      {
        id: 'sandbox-card',
        names: { ru: 'Банковская карта (песочница)', en: 'Bank card (sandbox)' },
        depositCurrencies: ['RUB', 'USD', 'EUR', 'KZT', 'UAH'],
        webhookSecret: config.WEBHOOK_SECRET_SANDBOX_CARD ?? devOnly(DEV_WEBHOOK_SECRET_SANDBOX_CARD),
      },
    ],
  ]);
}
