import { z } from 'zod';
import { ZAmountText, ZCurrencyCode } from './money.ts';

/*
 * Payments (spec §7 "Deposit"): the providers, the states of a deposit and the events a
 * provider sends to our webhook. Messages are i18n keys, as in auth.ts.
 */

export const PAYMENT_PROVIDERS = ['sandbox-card'] as const;
export type TPaymentProvider = (typeof PAYMENT_PROVIDERS)[number];

/** created → pending → paid → credited, or declined / expired; the last three are final. */
export const DEPOSIT_STATES = ['created', 'pending', 'paid', 'credited', 'declined', 'expired'] as const;
export type TDepositState = (typeof DEPOSIT_STATES)[number];

/** A webhook's timestamp may be this far from our clock, either way. */
export const WEBHOOK_TOLERANCE_SECONDS = 300;

/** The signature header: `t=<unix seconds>,v1=<hex HMAC-SHA256 of "t.rawBody">`. */
export const WEBHOOK_SIGNATURE_HEADER = 'x-obmen-signature';

/**
 * What a provider tells us about a payment. `id` is the provider's event id (exactly-once key);
 * the amount is in major units as text, compared exactly with the payment's.
 */
export const ZPaymentWebhookEvent = z.object({
  id: z.string().min(1).max(200),
  type: z.enum(['payment.pending', 'payment.paid', 'payment.declined']),
  payment_id: z.string().min(1).max(200),
  amount: z.string().min(1).max(60),
  currency: z.string().min(1).max(10),
});
export type TPaymentWebhookEvent = z.infer<typeof ZPaymentWebhookEvent>;

/** The path parameter of a provider's webhook: an unknown provider is a missing route. */
export const ZWebhookParams = z.object({ provider: z.enum(PAYMENT_PROVIDERS) });

/** A payment system as GET /api/deposit/ps lists it, under each currency it takes. */
export type TDepositSystem = { id: TPaymentProvider; name: { ru: string; en: string } };
export type TDepositSystems = { status: 'ok'; currencies: Array<{ currency: string; systems: TDepositSystem[] }> };

/** POST /api/deposit/integration_json: a deposit of `amount` (major units) through system `ps`. */
export const ZDepositCreateBody = z.object({
  ps: z.enum(PAYMENT_PROVIDERS, { message: 'payments.unknown_system' }),
  currency: ZCurrencyCode,
  amount: ZAmountText,
});
export type TDepositCreateBody = z.infer<typeof ZDepositCreateBody>;

export type TDepositPayment = {
  id: string;
  ps: TPaymentProvider;
  currency: string;
  amount: string;
  state: TDepositState;
  expires_at: string;
};
