import type { FastifyPluginAsync } from 'fastify';
import type { TCardIssuer, TPaymentProvider } from '@obmen/shared';
import { sandboxesAllowed, type TConfig } from '../config.ts';
import type { TIssuerAdapter, TIssuers } from '../domains/cards/issuer.ts';
import type { TPaymentProviderAdapter, TProviders } from '../domains/payments/providers.ts';
import type { TDocumentCipher } from '../domains/verification/cipher.ts';
import { DEV_CHAIN_ID, evmChainOf, type TEvmConfig } from './evm/chain.ts';
import evmDevRoutes from './evm/dev-routes.ts';
import { evmPaymentProvider, type TEvmAdapter } from './evm/index.ts';
import sandboxCardPage from './sandbox/card-page.ts';
import sandboxDevRoutes from './sandbox/dev-routes.ts';
import { sandboxCardIssuer, sandboxPaymentProviders } from './sandbox/index.ts';

/*
 * The registry of providers: which payment providers and card issuers this core runs with,
 * decided by its configuration. The domains only know the adapter types (payments/providers.ts,
 * cards/issuer.ts); app.ts and the CLI load the adapters here and hand them over. A new
 * provider family gets a folder beside sandbox/ and a line below, under its own switch.
 */

/** What choosing the providers reads (the staging switch is false when not given). */
type TProviderConfig = Pick<TConfig, 'NODE_ENV' | 'WEBHOOK_SECRET_SANDBOX_CARD' | 'WEBHOOK_SECRET_SANDBOX_BANK' | 'WEBHOOK_SECRET_SANDBOX_CHAIN'> &
  Partial<Pick<TConfig, 'SANDBOX_PROVIDERS_IN_PRODUCTION'>> &
  Partial<Omit<TEvmConfig, 'NODE_ENV'>>;

const sandboxesHere = (config: Pick<TConfig, 'NODE_ENV'> & Partial<Pick<TConfig, 'SANDBOX_PROVIDERS_IN_PRODUCTION'>>) =>
  sandboxesAllowed({ NODE_ENV: config.NODE_ENV, SANDBOX_PROVIDERS_IN_PRODUCTION: config.SANDBOX_PROVIDERS_IN_PRODUCTION ?? false });

/** The payment providers of this core, with their secrets from the configuration. */
export function loadPaymentProviders(config: TProviderConfig): TProviders {
  const adapters: TPaymentProviderAdapter[] = [...(sandboxesHere(config) ? sandboxPaymentProviders(config) : [])];
  // The EVM chain wherever a node is configured (the sandbox chain stays for the other networks).
  const chain = config.EVM_RPC_URL ? evmChainOf(config as TEvmConfig) : null;
  if (chain) adapters.push(evmPaymentProvider(chain));
  return new Map<TPaymentProvider, TPaymentProviderAdapter>(adapters.map((adapter) => [adapter.id, adapter]));
}

/** The card issuers of this core (their secrets from the configuration, card numbers sealed with `cipher`). */
export function loadCardIssuers(
  config: Pick<TConfig, 'NODE_ENV' | 'CARD_ISSUER_SECRET_SANDBOX'> & Partial<Pick<TConfig, 'SANDBOX_PROVIDERS_IN_PRODUCTION'>>,
  cipher: TDocumentCipher,
): TIssuers {
  const adapters: TIssuerAdapter[] = [...(sandboxesHere(config) ? [sandboxCardIssuer(config, cipher)] : [])];
  return new Map<TCardIssuer, TIssuerAdapter>(adapters.map((adapter) => [adapter.id, adapter]));
}

/** The providers' own routes: the card sandbox's hosted page. */
export const providerRoutes: FastifyPluginAsync<{ providers: TProviders; now: () => Date }> = async (app, { providers, now }) => {
  if (providers.has('sandbox-card')) await app.register(sandboxCardPage, { providers, now });
};

/** The providers' operator commands for e2e runs, and the development chain's outside wallet (registered inside the dev routes, outside production only). */
export function providerDevCommands(providers: TProviders): FastifyPluginAsync {
  return async (app) => {
    if (providers.has('sandbox-bank') || providers.has('sandbox-chain')) await app.register(sandboxDevRoutes, { providers });
    const evm = providers.get('evm') as TEvmAdapter | undefined;
    if (evm?.chain.chainId === DEV_CHAIN_ID) await app.register(evmDevRoutes, { evm });
  };
}
