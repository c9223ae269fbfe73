/**
 * The payment providers of a chain (shared/src/payments.ts PAYMENT_PROVIDERS): each user has a
 * deposit address, and a deposit opens when a transfer to it is seen. Apart from payments.ts so
 * that the pages that ask import no schema.
 */
const CHAIN_PROVIDERS: ReadonlySet<string> = new Set(['sandbox-chain', 'evm']);

export const isChainProvider = (provider: string): boolean => CHAIN_PROVIDERS.has(provider);
