import { ZPaymentWebhookEvent, type TPaymentProvider } from '@obmen/shared';
import type { TConfig } from '../../config.ts';
import type { TIssuerAdapter } from '../../domains/cards/issuer.ts';
import type { TPaymentProviderAdapter } from '../../domains/payments/providers.ts';
import { parseEventBody } from '../../inbox/intake.ts';
import { checkWebhookSignature } from '../../inbox/signature.ts';
import type { TDocumentCipher } from '../../domains/verification/cipher.ts';
import { sandboxIssuer } from './issuer.ts';
import { SANDBOX_BANK, sandboxDepositAddress } from './payments.ts';
import { sendSandboxPayout } from './payouts.ts';

/*
 * The built-in sandbox providers behind the domains' adapters: three payment providers (a card
 * with its hosted page, a bank transfer quoting a reference, a simulated chain) and a card
 * issuer. They keep their own books in this database (sandbox_payments, sandbox_payouts,
 * sandbox_chain, card_sandbox_orders) and reach our side only through the signed webhook and
 * callback, as a remote provider would.
 */

/** Outside production, so that a fresh checkout runs: never used when NODE_ENV=production. */
export const DEV_WEBHOOK_SECRETS: Readonly<Record<TSandboxProvider, string>> = {
  'sandbox-card': 'obmen-development-sandbox-card-webhook-secret',
  'sandbox-bank': 'obmen-development-sandbox-bank-webhook-secret',
  'sandbox-chain': 'obmen-development-sandbox-chain-webhook-secret',
};
export const DEV_WEBHOOK_SECRET_SANDBOX_CARD = DEV_WEBHOOK_SECRETS['sandbox-card'];
/** The same for the sandbox card issuer's callbacks. */
export const DEV_CARD_ISSUER_SECRET_SANDBOX = 'obmen-development-sandbox-card-issuer-secret';

type TSandboxProvider = Extract<TPaymentProvider, `sandbox-${string}`>;

/** The hosted page of the card sandbox (served by core, reached through the BFF's /api proxy). */
export function cardPageUrl(publicId: string): string {
  return `/api/payments/sandbox-card/pay/${publicId}`;
}

/** A bank transfer takes days: the reference stays valid this long. */
export const BANK_DEPOSIT_LIFETIME_MS = 3 * 24 * 60 * 60_000;

/** A reference the payer can type: OBM- and 8 characters without look-alikes. */
function bankReference(): string {
  const alphabet = 'ABCDEFGHJKLMNPQRSTUVWXYZ23456789';
  const bytes = crypto.getRandomValues(new Uint8Array(8));
  return `OBM-${Array.from(bytes, (byte) => alphabet[byte % alphabet.length]).join('')}`;
}

type TSecrets = Pick<TConfig, 'NODE_ENV' | 'WEBHOOK_SECRET_SANDBOX_CARD' | 'WEBHOOK_SECRET_SANDBOX_BANK' | 'WEBHOOK_SECRET_SANDBOX_CHAIN'>;

/** The three sandbox payment providers, with their secrets from the configuration. */
export function sandboxPaymentProviders(config: TSecrets): TPaymentProviderAdapter[] {
  const secret = (configured: string | undefined, provider: TSandboxProvider) =>
    configured ?? (config.NODE_ENV === 'production' ? undefined : DEV_WEBHOOK_SECRETS[provider]);
  const common = (id: TSandboxProvider, webhookSecret: string | undefined) => ({
    id,
    webhookSecret,
    verifyEvent: ({ rawBody, signature, now }: { rawBody: Buffer; signature: string | undefined; now: Date }) =>
      checkWebhookSignature(webhookSecret, signature, rawBody, now),
    parseEvent: (rawBody: Buffer) => parseEventBody(rawBody, ZPaymentWebhookEvent),
    sendPayout: (tx: Parameters<TPaymentProviderAdapter['sendPayout']>[0], payout: Parameters<TPaymentProviderAdapter['sendPayout']>[1], now: Date) =>
      sendSandboxPayout(tx, id, payout, now),
    payoutBook: `SELECT provider, reference, currency, amount, state, settled_at FROM sandbox_payouts WHERE provider = '${id}'`,
  });
  return [
    {
      ...common('sandbox-card', secret(config.WEBHOOK_SECRET_SANDBOX_CARD, 'sandbox-card')),
      deposits: 'payment',
      openPayment: () => ({}),
      payWith: ({ publicId, open }) => ({ payUrl: open ? cardPageUrl(publicId) : null, bank: null }),
      payoutEtaMs: 15 * 60_000,
    },
    {
      ...common('sandbox-bank', secret(config.WEBHOOK_SECRET_SANDBOX_BANK, 'sandbox-bank')),
      deposits: 'payment',
      openPayment: () => ({ lifetimeMs: BANK_DEPOSIT_LIFETIME_MS, reference: bankReference() }),
      payWith: ({ reference }) => ({ payUrl: null, bank: reference ? { ...SANDBOX_BANK, reference } : null }),
      payoutEtaMs: 24 * 3_600_000,
    },
    {
      ...common('sandbox-chain', secret(config.WEBHOOK_SECRET_SANDBOX_CHAIN, 'sandbox-chain')),
      deposits: 'address',
      openDepositAddress: sandboxDepositAddress,
      openPayment: () => ({}),
      payWith: () => ({ payUrl: null, bank: null }),
      payoutEtaMs: 60 * 60_000,
    },
  ];
}

/** The sandbox card issuer, with its secret from the configuration. */
export function sandboxCardIssuer(config: Pick<TConfig, 'NODE_ENV' | 'CARD_ISSUER_SECRET_SANDBOX'>, cipher: TDocumentCipher): TIssuerAdapter {
  const secret = config.CARD_ISSUER_SECRET_SANDBOX ?? (config.NODE_ENV === 'production' ? undefined : DEV_CARD_ISSUER_SECRET_SANDBOX);
  return sandboxIssuer(secret, cipher);
}
