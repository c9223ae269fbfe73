import { CARD_REQUIRED_LEVEL, type TCardIssuerEvent, type TCardOrder, type TCardOrderBody, type TI18nKey } from '@obmen/shared';
import type { Db, Queryable } from '../../db/index.ts';
import { AppError } from '../../errors.ts';
import { oweMoneyMail } from '../../mail/money.ts';
import { currencies } from '../currencies/service.ts';
import { runIdempotent } from '../idempotency/service.ts';
import { captureHold, placeHold, releaseHold } from '../ledger/holds.ts';
import { accountSql, accountsSql, holdAccount, houseAccount, lockAccounts, postTransaction, sqlParams, systemAccount, userAccount } from '../ledger/posting.ts';
import { ledgerCall } from '../ledger/service.ts';
import { userLevel } from '../limits/service.ts';
import { findProduct } from './catalogue.ts';
import type { TIssuers } from './issuer.ts';
import { CARD_SELECT, addActivity, cardByOrderRef, ownCard, toOrder, type TCardRow } from './store.ts';

/*
 * Card orders: the state machine up to the card's issue.
 *
 *   placed ──confirm──► confirmed ──order.accepted──► issuing ──card.issued──► issued
 *     │                    │                            │
 *     cancel            order.failed                 order.failed
 *     ▼                    ▼                            ▼
 *   cancelled           failed (fee refunded)        failed (fee refunded)
 *
 * Placing holds the issue fee (the ledger holds of domains/ledger: available → held). Confirm
 * captures the hold into the card-fees account (one ledger transaction) and sends the order to
 * the issuer, in one database transaction. Cancel releases the hold; it is allowed only while
 * the order is `placed`: once confirmed, the order is with the issuer. Every change of an order
 * locks its row first, so a confirm and a cancel racing each other queue: the second finds the
 * first's state and is refused, and the fee moves exactly once (captured or released).
 */

/** Open (placed) orders a user may have at once: each holds a fee. */
export const MAX_PLACED_ORDERS = 3;

export type TCardContext = { db: Db; issuers: TIssuers; now: () => Date };

const conflict = (key: TI18nKey) => new AppError('card_state', { key });

/** GET /api/card/order: the caller's orders, newest first, whatever became of them. */
export async function listOrders(db: Queryable, userId: string): Promise<TCardOrder[]> {
  const byCode = await currencies(db);
  const rows = await db.query<TCardRow>(`${CARD_SELECT} WHERE c.user_id = $1 ORDER BY c.id DESC LIMIT 100`, [userId]);
  return rows.map((row) => toOrder(row, byCode));
}

export async function getOrder(db: Queryable, userId: string, id: string): Promise<TCardOrder> {
  return toOrder(await ownCard(db, userId, id), await currencies(db));
}

function addressOf(body: TCardOrderBody) {
  const fields = { country: body.address_country, city: body.address_city, postcode: body.address_postcode, line: body.address_line };
  const missing = Object.entries(fields).filter(([, value]) => !value);
  if (missing.length) {
    throw new AppError('validation', { fields: Object.fromEntries(missing.map(([name]) => [`address_${name}`, 'validation.required'])) });
  }
  return fields as Record<keyof typeof fields, string>;
}

/** POST /api/card/order: a new order in `placed`, its issue fee held. */
export async function placeOrder(ctx: TCardContext, userId: string, key: string, body: TCardOrderBody): Promise<{ order: TCardOrder; replayed: boolean }> {
  const { db } = ctx;
  const product = await findProduct(db, body.product);
  const byCode = await currencies(db);
  if (!product?.enabled) throw new AppError('validation', { fields: { product: 'cards.product_unknown' } });
  if (!product.currencies.includes(body.currency) || !byCode.get(body.currency)?.enabled) {
    throw new AppError('validation', { fields: { currency: 'cards.currency_not_offered' } });
  }
  const address = product.kind === 'physical' ? addressOf(body) : null;
  const now = ctx.now();
  const { result, replayed } = await ledgerCall(db, () =>
    runIdempotent(db, { userId, key, scope: 'card.order', payload: body }, async (tx) => {
      // The user row orders a user's own calls: the count of open orders below stays true.
      if ((await userLevel(tx, userId, true)) < CARD_REQUIRED_LEVEL) throw new AppError('card_verification_required');
      const [open] = await tx.query<{ n: number }>(`SELECT count(*)::int AS n FROM cards WHERE user_id = $1 AND status = 'placed'`, [userId]);
      if (open!.n >= MAX_PLACED_ORDERS) throw conflict('cards.too_many_open');
      const [card] = await tx.query<{ id: string; public_id: string }>(
        `INSERT INTO cards (user_id, product_id, kind, currency, name_on_card, address, fee_currency, issue_fee, monthly_fee, issuer, created_at, updated_at)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $11) RETURNING id::text AS id, public_id::text AS public_id`,
        [
          userId,
          product.id,
          product.kind,
          body.currency,
          body.name_on_card,
          address ? JSON.stringify(address) : null,
          product.fee_currency,
          product.issue_fee,
          product.monthly_fee,
          product.issuer,
          now,
        ],
      );
      let holdTx: string | null = null;
      if (BigInt(product.issue_fee) > 0n) {
        const hold = await placeHold(tx, {
          userId,
          currency: product.fee_currency,
          amount: BigInt(product.issue_fee),
          purpose: `card_order:${card!.public_id}`,
          actor: `user:${userId}`,
          currencies: byCode,
        });
        await tx.query('UPDATE cards SET hold_id = $2 WHERE id = $1', [card!.id, hold.id]);
        holdTx = hold.place_transaction_id;
      }
      const row = await ownCard(tx, userId, card!.public_id);
      await addActivity(tx, row, 'placed', `user:${userId}`, now, { amount: product.issue_fee, currency: product.fee_currency, transactionId: holdTx });
      return toOrder(row, byCode);
    }),
  );
  return { order: result, replayed };
}

/**
 * POST /api/card/order/confirm: captures the held fee into card fees (one ledger transaction)
 * and sends the order to its issuer, in one transaction; only a `placed` order.
 */
export async function confirmOrder(ctx: TCardContext, userId: string, key: string, cardId: string): Promise<{ order: TCardOrder; replayed: boolean }> {
  const { db } = ctx;
  const byCode = await currencies(db);
  const { result, replayed } = await ledgerCall(db, () =>
    runIdempotent(db, { userId, key, scope: 'card.confirm', payload: { card: cardId } }, async (tx) => {
      const now = ctx.now();
      const row = await ownCard(tx, userId, cardId, true);
      if (row.status === 'cancelled') throw conflict('cards.confirm_cancelled');
      if (row.status !== 'placed') throw conflict('cards.already_confirmed');
      const issuer = ctx.issuers.get(row.issuer as never);
      if (!issuer) throw conflict('cards.issuer_unavailable');
      let feeTx: string | null = null;
      if (row.hold_id) {
        // The referee's fee earns their referrer's share here (referral_accrue): its accounts are
        // locked with the capture's first, in one order.
        const fees = houseAccount('card_fees', row.fee_currency, userId);
        await lockAccounts(tx, [holdAccount(userId, row.fee_currency), fees], (param) => `referral_accounts(${param(userId)}, ${param(row.fee_currency)})`);
        feeTx = await captureHold(tx, row.hold_id, {
          kind: 'card',
          destinations: [{ account: fees, amount: BigInt(row.issue_fee) }],
          memo: `card issue fee ${row.id}`,
          actor: `user:${userId}`,
          currencies: byCode,
        });
        const { values, param } = sqlParams();
        await tx.query(
          `SELECT referral_accrue(${param(userId)}, ${param(row.fee_currency)}, ${param(row.issue_fee)}, ${accountSql(fees, param)}, 'card', ${param(feeTx)})`,
          values,
        );
      }
      await tx.query(`UPDATE cards SET status = 'confirmed', fee_transaction_id = $2, confirmed_at = $3, updated_at = $3 WHERE id = $1`, [
        row.row_id,
        feeTx,
        now,
      ]);
      await issuer.submit(tx, { orderRef: row.id, kind: row.kind, currency: row.currency, nameOnCard: row.name_on_card, deliveryDays: row.delivery_days }, now);
      await addActivity(tx, row, 'confirmed', `user:${userId}`, now, { amount: row.issue_fee, currency: row.fee_currency, transactionId: feeTx });
      await oweMoneyMail(tx, userId, 'card_ordered', { currency: row.fee_currency, amount: String(row.issue_fee), id: row.id });
      return toOrder(await ownCard(tx, userId, cardId), byCode);
    }),
  );
  return { order: result, replayed };
}

/** POST /api/card/order/cancel: releases the held fee; only while the order is `placed`. */
export async function cancelOrder(ctx: TCardContext, userId: string, key: string, cardId: string): Promise<{ order: TCardOrder; replayed: boolean }> {
  const { db } = ctx;
  const byCode = await currencies(db);
  const { result, replayed } = await ledgerCall(db, () =>
    runIdempotent(db, { userId, key, scope: 'card.cancel', payload: { card: cardId } }, async (tx) => {
      const now = ctx.now();
      const row = await ownCard(tx, userId, cardId, true);
      if (row.status === 'cancelled') throw conflict('cards.already_cancelled');
      if (row.status !== 'placed') throw conflict('cards.cancel_too_late');
      let releaseTx: string | null = null;
      if (row.hold_id) {
        releaseTx = await releaseHold(tx, row.hold_id, { memo: `card order cancelled ${row.id}`, actor: `user:${userId}`, currencies: byCode });
      }
      await tx.query(`UPDATE cards SET status = 'cancelled', updated_at = $2 WHERE id = $1`, [row.row_id, now]);
      await addActivity(tx, row, 'cancelled', `user:${userId}`, now, { amount: row.issue_fee, currency: row.fee_currency, transactionId: releaseTx });
      return toOrder(await ownCard(tx, userId, cardId), byCode);
    }),
  );
  return { order: result, replayed };
}

export type TIssuerEventResult = 'applied' | 'unknown_order' | 'wrong_state';

/** Which status each event moves a card from, and to. */
const TRANSITIONS: Record<Exclude<TCardIssuerEvent['type'], 'order.failed'>, { from: readonly string[]; to: string; kinds?: readonly string[] }> = {
  'order.accepted': { from: ['confirmed'], to: 'issuing' },
  'card.issued': { from: ['issuing'], to: 'issued' },
  'card.shipped': { from: ['issued'], to: 'shipped', kinds: ['physical'] },
  'card.delivered': { from: ['shipped'], to: 'delivered', kinds: ['physical'] },
  'card.activated': { from: ['issued', 'delivered'], to: 'active' },
};

/**
 * Applies one issuer event to its card inside the caller's transaction (the one that recorded
 * the event id): the card row is locked first, then any ledger accounts. An event that does not
 * fit the card's state moves nothing (`wrong_state`, kept in the inbox).
 */
export async function applyIssuerEvent(
  tx: Queryable,
  issuer: string,
  event: TCardIssuerEvent,
  now: Date,
): Promise<{ result: TIssuerEventResult; cardId: string | null }> {
  const row = await cardByOrderRef(tx, event.order, issuer);
  if (!row) return { result: 'unknown_order', cardId: null };
  const done = (result: TIssuerEventResult) => ({ result, cardId: row.row_id });
  const actor = `issuer:${issuer}`;
  // A physical card is active only once delivered; a virtual one goes from issued straight on.
  if (event.type === 'card.activated' && row.kind === 'physical' && row.status !== 'delivered') return done('wrong_state');

  if (event.type === 'order.failed') {
    if (row.status !== 'confirmed' && row.status !== 'issuing') return done('wrong_state');
    let refundTx: string | null = null;
    if (row.fee_transaction_id && BigInt(row.issue_fee) > 0n) {
      // The fee's referral accrual goes back with it (referral_reverse, which locks the refund's accounts too).
      const [fees, wallet] = [houseAccount('card_fees', row.fee_currency, row.user_id), userAccount(row.user_id, row.fee_currency)];
      const { values, param } = sqlParams();
      await tx.query(`SELECT referral_reverse('card', ${param(row.fee_transaction_id)}, ${accountsSql([fees, wallet], param)}, ${param(actor)})`, values);
      const fee = BigInt(row.issue_fee);
      refundTx = await postTransaction(tx, {
        kind: 'card',
        postings: [
          { account: fees, amount: -fee },
          { account: wallet, amount: fee },
        ],
        memo: `card issue fee refund ${row.id}`,
        actor,
      });
    }
    await tx.query(`UPDATE cards SET status = 'failed', reason = 'cards.failed_by_issuer', refund_transaction_id = $2, updated_at = $3 WHERE id = $1`, [
      row.row_id,
      refundTx,
      now,
    ]);
    await addActivity(tx, row, 'failed', actor, now, { amount: row.issue_fee, currency: row.fee_currency, transactionId: refundTx });
    return done('applied');
  }

  const move = TRANSITIONS[event.type];
  if (!move.from.includes(row.status) || (move.kinds && !move.kinds.includes(row.kind))) return done('wrong_state');
  if (event.type === 'order.accepted') {
    await tx.query(`UPDATE cards SET status = 'issuing', issuer_ref = $2, updated_at = $3 WHERE id = $1`, [row.row_id, event.reference, now]);
    await addActivity(tx, row, 'issuing', actor, now);
  } else if (event.type === 'card.issued') {
    // The card's own account: a system account named after the card, in its currency.
    const { values, param } = sqlParams();
    const at = param(now);
    await tx.query(
      `UPDATE cards SET status = 'issued', bin = ${param(event.bin)}, last4 = ${param(event.last4)}, expiry_month = ${param(event.expiry_month)},
         expiry_year = ${param(event.expiry_year)}, issued_at = ${at}, updated_at = ${at},
         account_id = ${accountSql(systemAccount('card', row.currency, `card:${row.id}`), param)} WHERE id = ${param(row.row_id)}`,
      values,
    );
    await addActivity(tx, row, 'issued', actor, now);
    await oweMoneyMail(tx, row.user_id, 'card_issued', { id: row.id });
  } else {
    await tx.query('UPDATE cards SET status = $2, updated_at = $3 WHERE id = $1', [row.row_id, move.to, now]);
    await addActivity(tx, row, event.type === 'card.activated' ? 'activated' : event.type === 'card.shipped' ? 'shipped' : 'delivered', actor, now);
  }
  return done('applied');
}
