import { randomInt } from 'node:crypto';
import type { TCardIssuerEvent } from '@obmen/shared';
import type { Db, Queryable } from '../../db/index.ts';
import { signWebhook } from '../../inbox/signature.ts';
import type { TDocumentCipher } from '../../domains/verification/cipher.ts';
import type { TIssuerAdapter, TIssuerOrder } from '../../domains/cards/issuer.ts';

/*
 * The built-in sandbox issuer: a card issuer that lives in this database (table
 * card_sandbox_orders) and behaves like a real one, over time. A confirmed order is accepted at
 * once, the card is issued SANDBOX_ISSUE_DELAY_MS later (a number from the sandbox BIN range
 * that passes Luhn, an expiry three years ahead, a CVC; the number and CVC sealed with the
 * document cipher), then a virtual card is activated; a physical one is shipped a day later,
 * delivered after the product's delivery days, and activated on delivery. Each step reports
 * through the same signed callback a remote issuer would use. A name on card containing
 * "DECLINE" makes the order fail after acceptance (to try the refund).
 *
 * advanceSandboxIssuer() runs the steps that are due at `now` (the worker in cards/routes.ts every
 * few seconds; tests and `cards:issuer:advance` with their own clock). Each step is taken under
 * FOR UPDATE SKIP LOCKED, so two cores never take the same one; its event is kept in the row's
 * outbox until delivered (again after a failed delivery: the callback inbox drops duplicates).
 */

/** The sandbox's BINs: 400012 to 400019 (the first six digits of its card numbers). */
export const SANDBOX_BINS = ['400012', '400013', '400014', '400015', '400016', '400017', '400018', '400019'] as const;
export const SANDBOX_ISSUE_DELAY_MS = 3_000;
export const SANDBOX_SHIP_DELAY_MS = 24 * 3600_000;
const DAY_MS = 24 * 3600_000;

type TStep = 'accept' | 'issue' | 'ship' | 'deliver' | 'activate' | 'fail';

/** The Luhn check digit of a number's other digits. */
export function luhnCheckDigit(digits: string): string {
  let sum = 0;
  for (let i = 0; i < digits.length; i++) {
    let d = Number(digits[digits.length - 1 - i]);
    if (i % 2 === 0) {
      d *= 2;
      if (d > 9) d -= 9;
    }
    sum += d;
  }
  return String((10 - (sum % 10)) % 10);
}

export function passesLuhn(number: string): boolean {
  return /^\d{12,19}$/.test(number) && luhnCheckDigit(number.slice(0, -1)) === number.slice(-1);
}

/** A 16-digit number from the sandbox BIN range, passing Luhn. */
export function sandboxCardNumber(): string {
  let body = SANDBOX_BINS[randomInt(SANDBOX_BINS.length)]!;
  while (body.length < 15) body += String(randomInt(10));
  return body + luhnCheckDigit(body);
}

type TSandboxRow = {
  reference: string;
  order_ref: string;
  kind: 'virtual' | 'physical';
  delivery_days: number | null;
  name: string;
  next_step: TStep | null;
  outbox: TCardIssuerEvent | null;
  events_sent: number;
};

export type TDeliver = (rawBody: Buffer, signature: string) => Promise<unknown>;

export function sandboxIssuer(secret: string | undefined, cipher: TDocumentCipher): TIssuerAdapter & { cipher: TDocumentCipher } {
  return {
    id: 'sandbox',
    callbackSecret: secret,
    cipher,
    async submit(tx: Queryable, order: TIssuerOrder, now: Date) {
      await tx.query(
        `INSERT INTO card_sandbox_orders (order_ref, kind, delivery_days, name, next_step, next_at, created_at, updated_at)
         VALUES ($1, $2, $3, $4, 'accept', $5, $5, $5)`,
        [order.orderRef, order.kind, order.deliveryDays, order.nameOnCard, now],
      );
    },
    async reveal(db: Queryable, reference: string) {
      const [row] = await db.query<{ pan_enc: Buffer | null; cvc_enc: Buffer | null }>(
        'SELECT pan_enc, cvc_enc FROM card_sandbox_orders WHERE reference::text = $1',
        [reference],
      );
      if (!row?.pan_enc || !row.cvc_enc) throw new Error('sandbox issuer: no such card');
      return { pan: await cipher.decrypt(row.pan_enc), cvc: await cipher.decrypt(row.cvc_enc) };
    },
  };
}

/** What a step does: its event, and the step after it. */
async function takeStep(
  tx: Queryable,
  cipher: TDocumentCipher,
  row: TSandboxRow,
  now: Date,
): Promise<{ event: TCardIssuerEvent; next: TStep | null; nextAt: Date | null }> {
  const id = `${row.reference}:${row.events_sent + 1}`;
  const order = row.order_ref;
  const at = (ms: number) => new Date(now.getTime() + ms);
  switch (row.next_step) {
    case 'accept': {
      const fail = row.name.includes('DECLINE');
      return {
        event: { id, type: 'order.accepted', order, reference: row.reference },
        next: fail ? 'fail' : 'issue',
        nextAt: at(fail ? 0 : SANDBOX_ISSUE_DELAY_MS),
      };
    }
    case 'issue': {
      const pan = sandboxCardNumber();
      const cvc = String(randomInt(1000)).padStart(3, '0');
      const expiryMonth = now.getUTCMonth() + 1;
      const expiryYear = now.getUTCFullYear() + 3;
      await tx.query(
        `UPDATE card_sandbox_orders SET pan_enc = $2, cvc_enc = $3, bin = $4, last4 = $5, expiry_month = $6, expiry_year = $7 WHERE reference = $1`,
        [row.reference, await cipher.encrypt(pan), await cipher.encrypt(cvc), pan.slice(0, 6), pan.slice(-4), expiryMonth, expiryYear],
      );
      return {
        event: { id, type: 'card.issued', order, bin: pan.slice(0, 6), last4: pan.slice(-4), expiry_month: expiryMonth, expiry_year: expiryYear },
        next: row.kind === 'physical' ? 'ship' : 'activate',
        nextAt: at(row.kind === 'physical' ? SANDBOX_SHIP_DELAY_MS : 0),
      };
    }
    case 'ship':
      return { event: { id, type: 'card.shipped', order }, next: 'deliver', nextAt: at(Math.max(1, (row.delivery_days ?? 1) - 1) * DAY_MS) };
    case 'deliver':
      return { event: { id, type: 'card.delivered', order }, next: 'activate', nextAt: at(0) };
    case 'activate':
      return { event: { id, type: 'card.activated', order }, next: null, nextAt: null };
    default:
      return { event: { id, type: 'order.failed', order, reason: 'declined' }, next: null, nextAt: null };
  }
}

/**
 * Runs every sandbox step due at `now` and delivers its event through `deliver` (signed with the
 * sandbox's secret). Returns how many events were delivered. A step whose delivery fails keeps
 * its event for the next run.
 */
export async function advanceSandboxIssuer(db: Db, issuer: ReturnType<typeof sandboxIssuer>, deliver: TDeliver, now: Date, limit = 100): Promise<number> {
  let delivered = 0;
  for (let round = 0; round < limit; round++) {
    const event = await db.transaction(async (tx) => {
      const [row] = await tx.query<TSandboxRow>(
        `SELECT reference::text AS reference, order_ref, kind, delivery_days, name, next_step, outbox, events_sent FROM card_sandbox_orders
         WHERE outbox IS NOT NULL OR (next_step IS NOT NULL AND next_at <= $1)
         ORDER BY next_at LIMIT 1 FOR UPDATE SKIP LOCKED`,
        [now],
      );
      if (!row) return null;
      if (row.outbox) return row.outbox;
      const step = await takeStep(tx, issuer.cipher, row, now);
      await tx.query(
        `UPDATE card_sandbox_orders SET outbox = $2, events_sent = events_sent + 1, next_step = $3, next_at = $4, updated_at = $5 WHERE reference = $1`,
        [row.reference, JSON.stringify(step.event), step.next, step.nextAt, now],
      );
      return step.event;
    });
    if (!event) break;
    const body = Buffer.from(JSON.stringify(event));
    if (!issuer.callbackSecret) break;
    try {
      await deliver(body, signWebhook(issuer.callbackSecret, body, Math.floor(now.getTime() / 1000)));
    } catch {
      // Kept in the outbox: the next run delivers it again.
      break;
    }
    await db.query(`UPDATE card_sandbox_orders SET outbox = NULL WHERE outbox->>'id' = $1`, [event.id]);
    delivered++;
  }
  return delivered;
}

/** For the operator (cards:issuer): every order the sandbox has, with its next step. */
export async function sandboxProgress(db: Queryable, limit = 50) {
  return db.query<{
    reference: string;
    order: string;
    kind: string;
    next_step: string | null;
    next_at: Date | null;
    events: number;
    undelivered: string | null;
  }>(
    `SELECT reference::text AS reference, order_ref AS order, kind, next_step, next_at, events_sent AS events, outbox->>'type' AS undelivered
     FROM card_sandbox_orders ORDER BY created_at DESC LIMIT $1`,
    [limit],
  );
}
