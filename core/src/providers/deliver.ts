import type { TPaymentWebhookEvent } from '@obmen/shared';
import type { Db } from '../db/index.ts';
import type { TPaymentProviderAdapter } from '../domains/payments/providers.ts';
import { receiveWebhook, type TWebhookResult } from '../domains/payments/webhooks.ts';
import { signWebhook } from '../inbox/signature.ts';

/**
 * Signs `event` with the provider's secret, at `now`, and delivers it to our webhook: how a
 * provider that lives in this process reaches us, the same raw body, signature check, inbox row
 * and exactly-once event id as a remote one.
 */
export async function deliverProviderEvent(db: Db, adapter: TPaymentProviderAdapter, event: TPaymentWebhookEvent, now: Date): Promise<TWebhookResult> {
  if (!adapter.webhookSecret) throw new Error(`${adapter.id} has no webhook secret`);
  const rawBody = Buffer.from(JSON.stringify(event));
  const signature = signWebhook(adapter.webhookSecret, rawBody, Math.floor(now.getTime() / 1000));
  return (await receiveWebhook(db, adapter, { rawBody, signature, now })).result;
}
