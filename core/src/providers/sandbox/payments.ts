import { randomBytes } from 'node:crypto';
import { addressFormatOf, addressFromBytes, formatAmount, type TPaymentProvider, type TPaymentWebhookEvent } from '@obmen/shared';
import type { Db, Queryable } from '../../db/index.ts';
import { currencies, operatorCurrency, parseOperatorAmount } from '../../domains/currencies/service.ts';
import type { TProviders } from '../../domains/payments/providers.ts';
import type { TWebhookResult } from '../../domains/payments/webhooks.ts';
import { deliverProviderEvent } from '../deliver.ts';

/*
 * The built-in sandbox providers' side: what each provider records and the signed events it
 * sends to our webhook. They keep their own books (sandbox_payments) apart from ours, and reach
 * us only through receiveWebhook, the function behind POST /api/payments/webhook/{provider}:
 * the same raw body, signature check, inbox row and exactly-once event id as any provider.
 */

/** The bank account sandbox-bank deposits are paid to (the IBAN is the registry's German example). */
export const SANDBOX_BANK = {
  bank: 'Sandbox Bank AG',
  beneficiary: 'Obmen Sandbox Ltd',
  iban: 'DE89 3704 0044 0532 0130 00',
  bic: 'SANDDEFFXXX',
} as const;

/** The chain sandbox makes a block this often (the sandbox-chain job, core/src/jobs). */
export const SANDBOX_BLOCK_MS = 10_000;

/** Signs `event` with the provider's secret, at `now`, and delivers it to our webhook. */
export async function deliverSandboxEvent(
  db: Db,
  providers: TProviders,
  provider: TPaymentProvider,
  event: TPaymentWebhookEvent,
  now: Date,
): Promise<TWebhookResult> {
  const adapter = providers.get(provider);
  if (!adapter?.webhookSecret) throw new Error(`${provider} has no webhook secret: set WEBHOOK_SECRET_${provider.slice(8).toUpperCase()}`);
  return deliverProviderEvent(db, adapter, event, now);
}

// ---- sandbox-card: the hosted page's outcomes -------------------------------------------------

/** Test cards: any other card number that passes Luhn is approved. */
export const SANDBOX_CARDS = {
  approve: '4242424242424242',
  decline: '4000000000000002',
  challenge: '4000000000003220',
} as const;
/** The 3-D Secure code the sandbox's challenge accepts. */
export const SANDBOX_CHALLENGE_CODE = '1234';
const CHALLENGE_ATTEMPTS = 3;

export type TCardPayment = {
  id: string;
  state: 'open' | 'challenge' | 'paid' | 'declined';
  currency: string;
  amount: string;
  payment_state: string;
  expires_at: Date;
  direction: string;
  system_id: string;
  challenge_attempts: number;
};

/** The card sandbox's view of one of our payments (its hosted page shows it). */
export async function cardPayment(db: Queryable, paymentId: string): Promise<TCardPayment | null> {
  if (!/^[0-9a-f-]{36}$/i.test(paymentId)) return null;
  const [row] = await db.query<{
    public_id: string;
    currency: string;
    amount: string;
    state: string;
    expires_at: Date;
    direction: string;
    system_id: string;
    sandbox_state: TCardPayment['state'] | null;
    challenge_attempts: number | null;
  }>(
    `SELECT p.public_id::text AS public_id, p.currency, p.amount::text AS amount, p.state, p.expires_at, p.direction, p.system_id,
       s.state AS sandbox_state, s.challenge_attempts
     FROM payments p LEFT JOIN sandbox_payments s ON s.provider = 'sandbox-card' AND s.id = p.public_id::text
     WHERE p.public_id = $1 AND p.provider = 'sandbox-card'`,
    [paymentId],
  );
  if (!row) return null;
  const precision = (await currencies(db)).get(row.currency)?.precision ?? 0;
  return {
    id: row.public_id,
    state: row.sandbox_state ?? 'open',
    currency: row.currency,
    amount: formatAmount(row.amount, precision),
    payment_state: row.state,
    expires_at: row.expires_at,
    direction: row.direction,
    system_id: row.system_id,
    challenge_attempts: Number(row.challenge_attempts ?? 0),
  };
}

async function setCardState(db: Queryable, payment: TCardPayment, state: TCardPayment['state'], now: Date, extra: { last4?: string; attempts?: number } = {}) {
  await db.query(
    `INSERT INTO sandbox_payments (provider, id, payment_id, currency, amount, state, card_last4, challenge_attempts, created_at, updated_at)
     VALUES ('sandbox-card', $1, $8::uuid, $2, $3, $4, $5, $6, $7, $7)
     ON CONFLICT (provider, id) DO UPDATE SET state = $4, card_last4 = coalesce($5, sandbox_payments.card_last4),
       challenge_attempts = $6, updated_at = $7`,
    [payment.id, payment.currency, payment.amount, state, extra.last4 ?? null, extra.attempts ?? payment.challenge_attempts, now, payment.id],
  );
}

const cardEvent = (payment: TCardPayment, type: TPaymentWebhookEvent['type'], suffix: string): TPaymentWebhookEvent => ({
  id: `card_${payment.id}_${suffix}`,
  type,
  payment_id: payment.id,
  amount: payment.amount,
  currency: payment.currency,
});

export type TCardOutcome = 'paid' | 'declined' | 'challenge' | 'closed';

/**
 * The payer submitted a (Luhn-valid) card on the hosted page: the decline card is declined, the
 * 3-D Secure card opens the challenge (and tells us the payment is pending), any other is paid.
 * Each outcome is sent to our webhook at once. A payment no longer open answers `closed`.
 */
export async function submitCard(db: Db, providers: TProviders, payment: TCardPayment, cardNumber: string, now: Date): Promise<TCardOutcome> {
  if (payment.state !== 'open' || (payment.payment_state !== 'created' && payment.payment_state !== 'pending')) return 'closed';
  const last4 = cardNumber.slice(-4);
  if (cardNumber === SANDBOX_CARDS.decline) {
    await setCardState(db, payment, 'declined', now, { last4 });
    await deliverSandboxEvent(db, providers, 'sandbox-card', cardEvent(payment, 'payment.declined', 'declined'), now);
    return 'declined';
  }
  if (cardNumber === SANDBOX_CARDS.challenge) {
    await setCardState(db, payment, 'challenge', now, { last4 });
    await deliverSandboxEvent(db, providers, 'sandbox-card', cardEvent(payment, 'payment.pending', 'pending'), now);
    return 'challenge';
  }
  await setCardState(db, payment, 'paid', now, { last4 });
  await deliverSandboxEvent(db, providers, 'sandbox-card', cardEvent(payment, 'payment.paid', 'paid'), now);
  return 'paid';
}

/** The 3-D Secure step: the right code pays; the third wrong one declines. */
export async function submitChallenge(db: Db, providers: TProviders, payment: TCardPayment, code: string, now: Date): Promise<TCardOutcome | 'wrong_code'> {
  if (payment.state !== 'challenge') return 'closed';
  if (code.trim() === SANDBOX_CHALLENGE_CODE) {
    await setCardState(db, payment, 'paid', now);
    await deliverSandboxEvent(db, providers, 'sandbox-card', cardEvent(payment, 'payment.paid', 'paid'), now);
    return 'paid';
  }
  const attempts = payment.challenge_attempts + 1;
  if (attempts < CHALLENGE_ATTEMPTS) {
    await setCardState(db, payment, 'challenge', now, { attempts });
    return 'wrong_code';
  }
  await setCardState(db, payment, 'declined', now, { attempts });
  await deliverSandboxEvent(db, providers, 'sandbox-card', cardEvent(payment, 'payment.declined', 'declined'), now);
  return 'declined';
}

/** The payer gave up on the hosted page: the provider declines the payment. */
export async function cancelCard(db: Db, providers: TProviders, payment: TCardPayment, now: Date): Promise<TCardOutcome> {
  if (payment.state !== 'open' && payment.state !== 'challenge') return 'closed';
  await setCardState(db, payment, 'declined', now);
  await deliverSandboxEvent(db, providers, 'sandbox-card', cardEvent(payment, 'payment.declined', 'declined'), now);
  return 'declined';
}

// ---- sandbox-bank: a transfer received with a reference ------------------------------------

/** Who pays a sandbox bank transfer unless the command names someone. */
const SANDBOX_PAYER = 'Sandbox Payer';

/**
 * payments:bank:received: the bank got a transfer quoting `reference` (of `amount`, by default
 * the expected one) from `payer` and tells us. A transfer of another amount, or quoting a
 * reference no deposit has (then `amount` and `currency` are needed), is reported as such: our
 * side credits nothing and holds it for an operator to match (the payments desk).
 */
export async function bankReceived(db: Db, providers: TProviders, input: { reference: string; amount?: string; currency?: string; payer?: string; now: Date }) {
  const reference = input.reference.trim().toUpperCase();
  const [payment] = await db.query<{ public_id: string; currency: string; amount: string }>(
    `SELECT public_id::text AS public_id, currency, amount::text AS amount FROM payments WHERE provider = 'sandbox-bank' AND reference = $1`,
    [reference],
  );
  if (!payment && (input.amount === undefined || input.currency === undefined))
    throw new Error(`no bank deposit with reference ${input.reference}: give amount= and currency= to send it anyway`);
  const currency = await operatorCurrency(db, payment?.currency ?? input.currency!);
  const amount = input.amount === undefined ? payment!.amount : parseOperatorAmount('amount', input.amount, currency);
  const shown = formatAmount(amount, currency.precision);
  const transfer = `${reference}/${randomBytes(6).toString('hex')}`;
  await db.query(
    `INSERT INTO sandbox_payments (provider, id, payment_id, currency, amount, state, created_at, updated_at)
     VALUES ('sandbox-bank', $1, $2::uuid, $3, $4, 'received', $5, $5)`,
    [transfer, payment?.public_id ?? null, currency.code, shown, input.now],
  );
  const result = await deliverSandboxEvent(
    db,
    providers,
    'sandbox-bank',
    {
      id: `bank_${transfer}`,
      type: 'payment.paid',
      payment_id: payment?.public_id ?? transfer,
      amount: shown,
      currency: currency.code,
      reference,
      payer: input.payer ?? SANDBOX_PAYER,
    },
    input.now,
  );
  return { reference, amount: shown, currency: currency.code, result };
}

// ---- sandbox-chain: addresses, transactions, blocks ----------------------------------------

/** The user's deposit address for a currency on a chain system: made once, in the currency's real format. */
export async function sandboxDepositAddress(db: Queryable, input: { userId: string; currency: string; systemId: string; now: Date }): Promise<string> {
  const format = addressFormatOf(input.currency);
  if (!format) throw new Error(`${input.currency} has no address format`);
  const [existing] = await db.query<{ address: string }>(
    `SELECT address FROM deposit_addresses WHERE user_id = $1 AND currency = $2 AND provider = 'sandbox-chain'`,
    [input.userId, input.currency],
  );
  if (existing) return existing.address;
  const address = addressFromBytes(format, randomBytes(32));
  const [row] = await db.query<{ address: string }>(
    `INSERT INTO deposit_addresses (user_id, currency, provider, system_id, address, created_at) VALUES ($1, $2, 'sandbox-chain', $3, $4, $5)
     ON CONFLICT (user_id, currency, provider) DO UPDATE SET user_id = EXCLUDED.user_id RETURNING address`,
    [input.userId, input.currency, input.systemId, address, input.now],
  );
  return row!.address;
}

async function chainHeight(db: Queryable, now: Date): Promise<{ height: number; mined_at: Date }> {
  await db.query('INSERT INTO sandbox_chain (id, height, mined_at) VALUES (1, 0, $1) ON CONFLICT (id) DO NOTHING', [now]);
  const [row] = await db.query<{ height: string; mined_at: Date }>('SELECT height::text AS height, mined_at FROM sandbox_chain WHERE id = 1');
  return { height: Number(row!.height), mined_at: row!.mined_at };
}

/** One output of a sandbox chain transaction: an amount to one of our deposit addresses. */
export type TChainOutput = { address: string; amount: string };

/**
 * payments:chain:send: a transaction paying `outputs` (one or more of our deposit addresses, of
 * one user or several) appears in the mempool; it is included in the next block, and each block
 * after adds a confirmation. We hear of each output at once (0 confirmations), then at every new
 * confirmation until the currency's required number.
 */
export async function chainSend(db: Db, providers: TProviders, input: { outputs: TChainOutput[]; now: Date; txid?: string }) {
  const txid = input.txid ?? randomBytes(32).toString('hex');
  if (!/^[0-9a-f]{64}$/.test(txid)) throw new Error('txid must be 64 hex digits');
  if (!input.outputs.length) throw new Error('a transaction pays at least one output');
  const { height } = await chainHeight(db, input.now);
  const paid = [];
  for (const [output, { address, amount: text }] of input.outputs.entries()) {
    const [owner] = await db.query<{ currency: string }>(`SELECT currency FROM deposit_addresses WHERE address = $1 AND provider = 'sandbox-chain'`, [address]);
    if (!owner) throw new Error(`no sandbox-chain deposit address ${address}`);
    const currency = await operatorCurrency(db, owner.currency);
    const amount = formatAmount(parseOperatorAmount('amount', text, currency), currency.precision);
    await db.query(
      `INSERT INTO sandbox_payments (provider, id, currency, amount, state, address, included_height, created_at, updated_at)
       VALUES ('sandbox-chain', $1, $2, $3, 'seen', $4, $5, $6, $6)`,
      [chainOutputId(txid, output), currency.code, amount, address, height + 1, input.now],
    );
    const event = { type: 'payment.pending' as const, payment_id: txid, output, amount, currency: currency.code, address, confirmations: 0 };
    const result = await deliverSandboxEvent(db, providers, 'sandbox-chain', { id: `chain_${chainOutputId(txid, output)}_0`, ...event }, input.now);
    paid.push({ output, address, currency: currency.code, amount, result });
  }
  return { txid, outputs: paid };
}

/** The sandbox's row of one output: `<txid>:<output>`. */
const chainOutputId = (txid: string, output: number) => `${txid}:${output}`;

/**
 * Makes `blocks` blocks (payments:chain:mine; the payments timer makes one every
 * SANDBOX_BLOCK_MS), then reports each unconfirmed transaction's new confirmation count.
 */
export async function chainMine(db: Db, providers: TProviders, input: { blocks: number; now: Date }) {
  await chainHeight(db, input.now);
  await db.query('UPDATE sandbox_chain SET height = height + $1, mined_at = $2 WHERE id = 1', [input.blocks, input.now]);
  return { height: (await chainHeight(db, input.now)).height, reported: await reportConfirmations(db, providers, input.now) };
}

/** One block when SANDBOX_BLOCK_MS has passed since the last (the payments timer). */
export async function chainTick(db: Db, providers: TProviders, now: Date): Promise<number> {
  const { mined_at } = await chainHeight(db, now);
  if (now.getTime() - mined_at.getTime() < SANDBOX_BLOCK_MS) return 0;
  const [mined] = await db.query('UPDATE sandbox_chain SET height = height + 1, mined_at = $1 WHERE id = 1 AND mined_at = $2 RETURNING 1', [now, mined_at]);
  return mined ? reportConfirmations(db, providers, now) : 0;
}

/** Tells us every confirmation count that changed; a transaction stops being watched once we hear it is enough. */
async function reportConfirmations(db: Db, providers: TProviders, now: Date): Promise<number> {
  const { height } = await chainHeight(db, now);
  const open = await db.query<{ id: string; currency: string; amount: string; address: string; included_height: string; reported_confirmations: number }>(
    `SELECT id, currency, amount, address, included_height::text AS included_height, reported_confirmations FROM sandbox_payments
     WHERE provider = 'sandbox-chain' AND state = 'seen' AND included_height <= $1 ORDER BY included_height, id`,
    [height],
  );
  let reported = 0;
  for (const tx of open) {
    const confirmations = height - Number(tx.included_height) + 1;
    if (confirmations <= Number(tx.reported_confirmations)) continue;
    const [terms] = await db.query<{ confirmations: number }>(
      `SELECT c.confirmations FROM deposit_addresses a JOIN payment_system_currencies c
         ON c.direction = 'deposit' AND c.system_id = a.system_id AND c.currency = a.currency WHERE a.address = $1`,
      [tx.address],
    );
    const enough = confirmations >= Number(terms?.confirmations ?? 0);
    const [txid = tx.id, output = '0'] = tx.id.split(':');
    const result = await deliverSandboxEvent(
      db,
      providers,
      'sandbox-chain',
      {
        id: `chain_${tx.id}_${confirmations}`,
        type: enough ? 'payment.paid' : 'payment.pending',
        payment_id: txid,
        output: Number(output),
        amount: tx.amount,
        currency: tx.currency,
        address: tx.address,
        confirmations,
      },
      now,
    );
    // Once the required number is reported, the provider stops watching (whatever our side made of it: the inbox says).
    await db.query(`UPDATE sandbox_payments SET reported_confirmations = $2, state = $3, updated_at = $4 WHERE provider = 'sandbox-chain' AND id = $1`, [
      tx.id,
      confirmations,
      enough ? 'confirmed' : 'seen',
      now,
    ]);
    void result;
    reported++;
  }
  return reported;
}
