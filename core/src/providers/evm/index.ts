import { ZPaymentWebhookEvent } from '@obmen/shared';
import type { TPaymentProviderAdapter } from '../../domains/payments/providers.ts';
import { parseEventBody } from '../../inbox/intake.ts';
import { checkWebhookSignature } from '../../inbox/signature.ts';
import { evmDepositAddress } from './addresses.ts';
import { processSecret, type TEvmChain } from './chain.ts';

/*
 * The `evm` provider: Ether and ERC-20 tokens on an Ethereum JSON-RPC node (the development
 * chain the start scripts run, or any network by EVM_RPC_URL). Deposits go to addresses of our
 * own (addresses.ts); the evm-watcher job (watcher.ts) reads the chain and reports what it sees
 * to our webhook as a chain provider does, so deposits are opened, confirmed and credited by the
 * same inbox and deposit path as every provider's. Payouts are not made here yet: the system is
 * seeded for deposits only.
 */

export type TEvmAdapter = TPaymentProviderAdapter & { chain: TEvmChain };

export function evmPaymentProvider(chain: TEvmChain): TEvmAdapter {
  // The watcher lives in this process: its events are signed with a secret nobody else has, so
  // the public webhook path refuses any body that claims to come from the chain.
  const webhookSecret = processSecret();
  return {
    id: 'evm',
    chain,
    webhookSecret,
    verifyEvent: ({ rawBody, signature, now }) => checkWebhookSignature(webhookSecret, signature, rawBody, now),
    parseEvent: (rawBody) => parseEventBody(rawBody, ZPaymentWebhookEvent),
    deposits: 'address',
    openDepositAddress: (db, input) => evmDepositAddress(db, chain, input),
    openPayment: () => ({}),
    payWith: () => ({ payUrl: null, bank: null }),
    payoutEtaMs: 30 * 60_000,
    sendPayout: () => Promise.reject(new Error('evm payouts are not made yet')),
  };
}
