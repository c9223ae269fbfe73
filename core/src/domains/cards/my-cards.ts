import { CARD_REVEAL_SECONDS, formatAmount, type TCard, type TCardDetails, type TCardMoveBody, type TCardReveal, type TI18nKey } from '@obmen/shared';
import type { Queryable } from '../../db/index.ts';
import { AppError } from '../../errors.ts';
import { consumeRateLimit } from '../../rate-limit.ts';
import { verifyPassword } from '../auth/passwords.ts';
import { verifySecondFactor } from '../security/second-factor.ts';
import { currencies, parseUserAmount } from '../currencies/service.ts';
import { runIdempotent } from '../idempotency/service.ts';
import { accountById, postTransaction, userAccount } from '../ledger/posting.ts';
import { ledgerCall, userBalance } from '../ledger/service.ts';
import type { TCardContext } from './orders.ts';
import { CARD_SELECT, addActivity, cardActivity, isIssued, ownCard, toCard, type TCardRow } from './store.ts';

/*
 * Issued cards: active ⇄ frozen → closed. A card's money is its ledger account (kind 'card'):
 * top-ups and withdrawals move money between it and the user's wallet of the card's currency.
 * Closing is final; whatever the card holds goes back to the wallet in the same transaction.
 */

const conflict = (key: TI18nKey) => new AppError('card_state', { key });

/** GET /api/card/my: the caller's issued cards, newest first (closed ones last). */
export async function listCards(db: Queryable, userId: string): Promise<TCard[]> {
  const byCode = await currencies(db);
  const rows = await db.query<TCardRow>(
    `${CARD_SELECT} WHERE c.user_id = $1 AND c.status IN ('issued', 'shipped', 'delivered', 'active', 'frozen', 'closed')
     ORDER BY c.status = 'closed', c.id DESC LIMIT 100`,
    [userId],
  );
  return rows.map((row) => toCard(row, byCode));
}

/** GET /api/card/details/{id}: one issued card with its activity. An order not yet issued is not a card. */
export async function cardDetails(db: Queryable, userId: string, id: string): Promise<TCardDetails> {
  const row = await ownCard(db, userId, id);
  if (!isIssued(row.status)) throw new AppError('card_not_found');
  const byCode = await currencies(db);
  const precision = (code: string) => byCode.get(code)?.precision ?? 0;
  const limits = row.limits[row.currency];
  const usable = row.status === 'active' || row.status === 'frozen';
  return {
    ...toCard(row, byCode),
    fee_currency: row.fee_currency,
    monthly_fee: formatAmount(row.monthly_fee, precision(row.fee_currency)),
    limits: limits ? { day: formatAmount(limits.day, precision(row.currency)), month: formatAmount(limits.month, precision(row.currency)) } : null,
    delivery_days: row.kind === 'physical' ? row.delivery_days : null,
    address: row.address,
    activity: await cardActivity(db, row, byCode),
    can: {
      reveal: row.status === 'active' || row.status === 'frozen' || row.status === 'delivered' || (row.status === 'issued' && row.kind === 'virtual'),
      freeze: row.status === 'active',
      unfreeze: row.status === 'frozen',
      close: row.status !== 'closed',
      topup: usable,
      withdraw: usable && BigInt(row.balance) > 0n,
    },
    wallet_balance: formatAmount(await userBalance(db, userId, row.currency), precision(row.currency)),
  };
}

/**
 * POST /api/card/reveal: the full number and CVC, after the account password or a code of the
 * user's second factor (a user without one must use the password). Every attempt is recorded
 * in the card's activity; a wrong secret is refused and counted against the reveal limit. The
 * answer is never stored.
 */
export async function revealCard(
  ctx: TCardContext,
  userId: string,
  body: { card: string; password?: string | undefined; code?: string | undefined; passkey?: string | undefined },
): Promise<Omit<TCardReveal, 'status'>> {
  const { db } = ctx;
  const row = await ownCard(db, userId, body.card);
  if (!isIssued(row.status) || row.status === 'closed' || !row.issuer_ref) throw conflict('cards.reveal_unavailable');
  await consumeRateLimit(db, 'card_reveal_user', userId);
  const now = ctx.now();
  // The password, or the second factor (a TOTP or recovery code, or a passkey) when one is on.
  let ok = false;
  let field: 'password' | 'code' | 'passkey' = 'password';
  if (body.password !== undefined) {
    const [user] = await db.query<{ password_hash: string | null }>('SELECT password_hash FROM users WHERE id = $1', [userId]);
    ok = await verifyPassword(body.password, user?.password_hash ?? null);
  } else {
    field = body.passkey !== undefined ? 'passkey' : 'code';
    try {
      ok = (await verifySecondFactor(db, userId, { code: body.code, passkey: body.passkey }, now.getTime())) !== 'none';
    } catch (err) {
      if (!(err instanceof AppError) || (err.code !== 'second_factor_invalid' && err.code !== 'passkey_invalid')) throw err;
    }
  }
  if (!ok) {
    await addActivity(db, row, 'reveal_refused', `user:${userId}`, now);
    throw new AppError('card_reveal_refused', { field });
  }
  const issuer = ctx.issuers.get(row.issuer as never);
  if (!issuer) throw conflict('cards.issuer_unavailable');
  const secret = await issuer.reveal(db, row.issuer_ref);
  await addActivity(db, row, 'revealed', `user:${userId}`, now);
  return {
    pan: secret.pan.replace(/(\d{4})(?=\d)/g, '$1 '),
    cvc: secret.cvc,
    expiry: toCard(row, new Map()).expiry ?? '',
    name_on_card: row.name_on_card,
    visible_seconds: CARD_REVEAL_SECONDS,
  };
}

type TChange = 'freeze' | 'unfreeze' | 'close' | 'topup' | 'withdraw';

/** Freeze, unfreeze, close, top up, move back: one transaction each, the card row locked first. */
async function changeCard(
  ctx: TCardContext,
  userId: string,
  key: string,
  change: TChange,
  payload: { card: string; amount?: string },
  work: (tx: Queryable, row: TCardRow, now: Date) => Promise<void>,
): Promise<{ card: TCardDetails; replayed: boolean }> {
  const { db } = ctx;
  const { replayed } = await ledgerCall(db, () =>
    runIdempotent(db, { userId, key, scope: `card.${change}`, payload }, async (tx) => {
      const row = await ownCard(tx, userId, payload.card, true);
      if (!isIssued(row.status)) throw new AppError('card_not_found');
      await work(tx, row, ctx.now());
      return { card: row.id };
    }),
  );
  return { card: await cardDetails(db, userId, payload.card), replayed };
}

export function freezeCard(ctx: TCardContext, userId: string, key: string, card: string) {
  return changeCard(ctx, userId, key, 'freeze', { card }, async (tx, row, now) => {
    if (row.status !== 'active') throw conflict(row.status === 'frozen' ? 'cards.already_frozen' : 'cards.not_active');
    await tx.query(`UPDATE cards SET status = 'frozen', updated_at = $2 WHERE id = $1`, [row.row_id, now]);
    await addActivity(tx, row, 'frozen', `user:${userId}`, now);
  });
}

export function unfreezeCard(ctx: TCardContext, userId: string, key: string, card: string) {
  return changeCard(ctx, userId, key, 'unfreeze', { card }, async (tx, row, now) => {
    if (row.status !== 'frozen') throw conflict('cards.not_frozen');
    await tx.query(`UPDATE cards SET status = 'active', updated_at = $2 WHERE id = $1`, [row.row_id, now]);
    await addActivity(tx, row, 'unfrozen', `user:${userId}`, now);
  });
}

/** Moves `amount` between the card and the wallet of its currency (to the card when > 0). */
async function moveMoney(tx: Queryable, userId: string, row: TCardRow, amount: bigint, memo: string): Promise<string> {
  // The ledger refuses an overdraft of either side (wallet or card) with insufficient_funds.
  return postTransaction(tx, {
    kind: 'card',
    postings: [
      { account: userAccount(userId, row.currency), amount: -amount },
      { account: accountById(row.account_id!), amount },
    ],
    memo,
    actor: `user:${userId}`,
  });
}

export async function closeCard(ctx: TCardContext, userId: string, key: string, card: string) {
  return changeCard(ctx, userId, key, 'close', { card }, async (tx, row, now) => {
    if (row.status === 'closed') throw conflict('cards.already_closed');
    const [account] = await tx.query<{ balance: string }>('SELECT balance::text AS balance FROM ledger_accounts WHERE id = $1 FOR UPDATE', [row.account_id]);
    const left = BigInt(account!.balance);
    let moved: string | null = null;
    if (left > 0n) moved = await moveMoney(tx, userId, row, -left, `card closed ${row.id}`);
    await tx.query(`UPDATE cards SET status = 'closed', closed_at = $2, updated_at = $2 WHERE id = $1`, [row.row_id, now]);
    await addActivity(tx, row, 'closed', `user:${userId}`, now, left > 0n ? { amount: left, currency: row.currency, transactionId: moved } : undefined);
  });
}

/** The amount of a move, in the card's currency (another user's card: 404 before anything else). */
async function moveBody(ctx: TCardContext, userId: string, body: TCardMoveBody): Promise<bigint> {
  const row = await ownCard(ctx.db, userId, body.card);
  const currency = (await currencies(ctx.db)).get(row.currency);
  if (!currency) throw new AppError('card_not_found');
  return parseUserAmount(body.amount, currency);
}

/** POST /api/card/topup: from the wallet of the card's currency to the card. */
export async function topUpCard(ctx: TCardContext, userId: string, key: string, body: TCardMoveBody) {
  const amount = await moveBody(ctx, userId, body);
  return changeCard(ctx, userId, key, 'topup', { card: body.card, amount: body.amount }, async (tx, row, now) => {
    if (row.status !== 'active' && row.status !== 'frozen') throw conflict('cards.not_active');
    const moved = await moveMoney(tx, userId, row, amount, `card top-up ${row.id}`);
    await addActivity(tx, row, 'topup', `user:${userId}`, now, { amount, currency: row.currency, transactionId: moved });
  });
}

/** POST /api/card/withdraw: from the card back to the wallet of its currency. */
export async function withdrawFromCard(ctx: TCardContext, userId: string, key: string, body: TCardMoveBody) {
  const amount = await moveBody(ctx, userId, body);
  return changeCard(ctx, userId, key, 'withdraw', { card: body.card, amount: body.amount }, async (tx, row, now) => {
    if (row.status !== 'active' && row.status !== 'frozen') throw conflict('cards.not_active');
    const moved = await moveMoney(tx, userId, row, -amount, `card withdrawal ${row.id}`);
    await addActivity(tx, row, 'withdraw', `user:${userId}`, now, { amount, currency: row.currency, transactionId: moved });
  });
}
