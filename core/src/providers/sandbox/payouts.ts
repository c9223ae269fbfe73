import { randomUUID } from 'node:crypto';
import type { Db, Queryable } from '../../db/index.ts';
import { formatAmount, type TPaymentProvider } from '@obmen/shared';
import { currencies } from '../../domains/currencies/service.ts';
import type { TPayoutOrder, TProviders } from '../../domains/payments/providers.ts';
import { signWebhook } from '../../inbox/signature.ts';
import { receiveWebhook } from '../../domains/payments/webhooks.ts';

/*
 * The sandbox providers' payout side. A payout handed to a sandbox provider (sendSandboxPayout,
 * from the withdrawal's dispatch) waits SANDBOX_PAYOUT_DELAY_MS, then succeeds, or fails for the declined test
 * card (SANDBOX_DECLINED_CARD, noted as `declined` when handed over); the provider then reports it by a webhook signed with its secret, delivered through the
 * same path as a provider's HTTP call (receiveWebhook: inbox, signature, exactly-once), until
 * we answer it. `force` settles one payout now with a chosen outcome (operators, tests, e2e).
 */

/** The sandbox providers settle a payout this long after they got it. */
export const SANDBOX_PAYOUT_DELAY_MS = 20_000;
/** A sandbox card payout to this number fails (the others succeed). */
export const SANDBOX_DECLINED_CARD = '4000000000000002';

/**
 * A payout handed to a sandbox provider: its book (sandbox_payouts) is keyed by our reference,
 * so handing it twice gives the same payout; it keeps the masked details and whether the card
 * is the declined test card, never the number.
 */
export async function sendSandboxPayout(tx: Queryable, provider: TPaymentProvider, payout: TPayoutOrder, now: Date): Promise<string> {
  const [row] = await tx.query<{ provider_ref: string }>(
    `INSERT INTO sandbox_payouts (provider_ref, provider, reference, currency, amount, destination, declined, created_at, due_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)
     ON CONFLICT (provider, reference) DO UPDATE SET provider = EXCLUDED.provider RETURNING provider_ref`,
    [
      `po_${randomUUID().replace(/-/g, '')}`,
      provider,
      payout.reference,
      payout.currency,
      payout.amount.toString(),
      payout.destination,
      payout.cardNumber === SANDBOX_DECLINED_CARD,
      now,
      new Date(now.getTime() + SANDBOX_PAYOUT_DELAY_MS),
    ],
  );
  return row!.provider_ref;
}

/**
 * A payout the sandbox's book says it made though nobody asked for it, settled and never
 * reported to us: what reconciliation must find (`payout_missing_in_ledger`). For e2e and demos.
 */
export async function recordUnaskedPayout(
  db: Queryable,
  input: { provider: TPaymentProvider; reference: string; currency: string; amount: bigint; now: Date },
): Promise<void> {
  await db.query(
    `INSERT INTO sandbox_payouts (provider_ref, provider, reference, currency, amount, destination, state, created_at, due_at, settled_at, reported_at)
     VALUES ($1, $2, $3, $4, $5, 'unasked', 'succeeded', $6, $6, $6, $6)`,
    [`po_${randomUUID().replace(/-/g, '')}`, input.provider, input.reference, input.currency, input.amount.toString(), input.now],
  );
}

export type TSettleOptions = { reference?: string; outcome?: 'succeeded' | 'failed'; force?: boolean };

/** Settles the due (or the named) pending sandbox payouts, then reports every unreported one. */
export async function runSandboxPayouts(
  db: Db,
  providers: TProviders,
  now: Date,
  options: TSettleOptions = {},
): Promise<{ settled: number; reported: number }> {
  const settled = await db.query<{ id: string }>(
    `UPDATE sandbox_payouts SET state = CASE
         WHEN $3::text IS NOT NULL THEN $3
         WHEN declined THEN 'failed' ELSE 'succeeded' END,
       settled_at = $1
     WHERE state = 'pending' AND ($2::text IS NULL OR reference = $2) AND ($4 OR due_at <= $1)
     RETURNING id`,
    [now, options.reference ?? null, options.outcome ?? null, options.force ?? false],
  );
  const unreported = await db.query<{
    id: string;
    provider_ref: string;
    provider: TPaymentProvider;
    reference: string;
    currency: string;
    amount: string;
    state: string;
  }>(
    `SELECT id::text AS id, provider_ref, provider, reference, currency, amount::text AS amount, state FROM sandbox_payouts
     WHERE state <> 'pending' AND reported_at IS NULL AND ($1::text IS NULL OR reference = $1) ORDER BY id LIMIT 200`,
    [options.reference ?? null],
  );
  const byCode = await currencies(db);
  let reported = 0;
  for (const payout of unreported) {
    const provider = providers.get(payout.provider);
    if (!provider?.webhookSecret) continue;
    const body = Buffer.from(
      JSON.stringify({
        id: `${payout.provider_ref}.${payout.state}`,
        type: payout.state === 'succeeded' ? 'payout.paid' : 'payout.failed',
        payment_id: payout.reference,
        amount: formatAmount(payout.amount, byCode.get(payout.currency)?.precision ?? 0),
        currency: payout.currency,
      }),
    );
    const signature = signWebhook(provider.webhookSecret, body, Math.floor(now.getTime() / 1000));
    const { result } = await receiveWebhook(db, provider, { rawBody: body, signature, now });
    if (result !== 'bad_signature' && result !== 'stale') {
      await db.query('UPDATE sandbox_payouts SET reported_at = $2 WHERE id = $1', [payout.id, now]);
      reported++;
    }
  }
  return { settled: settled.length, reported };
}
