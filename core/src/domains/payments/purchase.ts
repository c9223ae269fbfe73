import { formatAmount, type TDepositPayment, type TPaymentSystem, type TPaymentTerms, type TPurchaseBody, type TPurchaseQuote } from '@obmen/shared';
import type { Db, Queryable } from '../../db/index.ts';
import { AppError } from '../../errors.ts';
import { moneyError } from '../../money-errors.ts';
import { currencies, enabledCurrency, type TCurrency } from '../currencies/service.ts';
import { houseAccount, postTransaction, systemAccount, userAccount } from '../ledger/posting.ts';
import { quoteFromPay, type TPairTerms, type TQuoteAmounts } from '../rates/quote.ts';
import type { RateSource } from '../rates/source.ts';
import { TableRateSource } from '../rates/source.ts';
import { assessPayment, listPaymentSystems, type TPaymentAssessment } from './catalogue.ts';
import { refuseOverLimits, userLevel } from '../limits/service.ts';
import { DEPOSIT_COLUMNS, DEPOSIT_LIFETIME_MS, paymentView, type TDepositRow } from './deposits.ts';
import { paymentProvider } from './providers.ts';

/** A purchase's quote holds this long: the card page, 3-D Secure included, fits in it. */
export const PURCHASE_QUOTE_TTL_MS = 10 * 60_000;
/**
 * Paid after the quote expired: re-quoted at the current rate, the exchange still runs when the
 * user gets at least this share of the locked amount (98 %); otherwise they keep the fiat.
 */
export const PURCHASE_REQUOTE_TOLERANCE_PERCENT = 2n;

/**
 * GET /api/purchase/ps/{x}: the ways to buy `x`: each purchase system and currency it charges
 * in, for which the pair (that currency → x) is quoted now.
 */
export async function listPurchaseSystems(db: Queryable, rates: RateSource, userId: string, buy: string): Promise<TPaymentSystem[]> {
  const target = await enabledCurrency(db, buy, 'buy');
  const entries = await listPaymentSystems(db, { direction: 'purchase', userLevel: await userLevel(db, userId) });
  const out: TPaymentSystem[] = [];
  for (const entry of entries) {
    if (entry.currency.code === target.code) continue;
    const terms = await rates.pair(entry.currency.code, target.code);
    if (!terms) continue;
    const range = purchaseRange(entry.terms, terms);
    const shown = (value: bigint) => formatAmount(value, entry.currency.precision);
    out.push({ ...entry.system, min: shown(range.min), max: shown(range.max) });
  }
  return out;
}

/**
 * What a purchase may charge: within the system's range and the pair's. Both apply to the amount
 * the user states and pays (the form shows this range); the system's fee comes off afterwards.
 */
function purchaseRange(system: TPaymentTerms, pair: TPairTerms): { min: bigint; max: bigint } {
  const min = system.min > pair.min ? system.min : pair.min;
  const max = pair.max !== null && pair.max < system.max ? pair.max : system.max;
  return { min, max };
}

export type TPurchaseRow = {
  buy_currency: string;
  pay: string;
  pair_fee: string;
  spent: string;
  remainder: string;
  receive: string;
  rate: string;
  quote_expires_at: Date;
  outcome: 'exchanged' | 'requoted' | 'kept_fiat' | null;
  final_receive: string | null;
  final_rate: string | null;
};

export async function quoteView(db: Queryable, row: TPurchaseRow): Promise<TPurchaseQuote> {
  const byCode = await currencies(db);
  const precision = byCode.get(row.buy_currency)?.precision ?? 0;
  return {
    buy: row.buy_currency,
    receive: formatAmount(row.receive, precision),
    rate: row.rate,
    expires_at: row.quote_expires_at.toISOString(),
    tolerance_percent: PURCHASE_REQUOTE_TOLERANCE_PERCENT.toString(),
    outcome: row.outcome,
    final_receive: row.final_receive === null ? null : formatAmount(row.final_receive, precision),
    final_rate: row.final_rate,
  };
}

/**
 * A purchase's figures without opening it (POST /api/purchase/integration_json and the check):
 * the payment assessed as the catalogue does (the system's fee off first), then what is left
 * quoted as exchange quotes it. Refusals name their field.
 */
export async function quotePurchase(
  db: Queryable,
  rates: RateSource,
  level: number,
  body: Pick<TPurchaseBody, 'ps' | 'currency' | 'buy' | 'amount'>,
): Promise<{ assessed: TPaymentAssessment; buy: TCurrency; quote: TQuoteAmounts }> {
  const buy = await enabledCurrency(db, body.buy, 'buy');
  if (buy.code === body.currency) throw moneyError('same_currency', {}, 'buy');
  const assessed = await assessPayment(db, { direction: 'purchase', ps: body.ps, currency: body.currency, amount: body.amount, userLevel: level });
  const { currency } = assessed.entry;
  const terms = await rates.pair(currency.code, buy.code);
  if (!terms) throw moneyError('pair_unavailable', { src: currency.code, dst: buy.code }, 'buy');
  const range = purchaseRange(assessed.entry.terms, terms);
  const shown = (value: bigint) => formatAmount(value, currency.precision);
  if (assessed.amount < range.min) throw moneyError('amount_too_small', { min: shown(range.min), currency: currency.code }, 'amount');
  if (assessed.amount > range.max) throw moneyError('amount_too_large', { max: shown(range.max), currency: currency.code }, 'amount');
  // The pair's limits were applied to the stated amount above, not again to what the fee leaves.
  const quote = quoteFromPay({ ...terms, min: 0n, max: null }, { src: currency.precision, dst: buy.precision }, assessed.receive, 'amount');
  return { assessed, buy, quote };
}

/**
 * POST /api/purchase/integration_json: a purchase of `buy` paid with `amount` of `currency`
 * through system `ps`. The system's fee comes off first; what is left is quoted (as exchange
 * quotes) and the quote is locked for PURCHASE_QUOTE_TTL_MS. The payment opens in `created`
 * with the hosted card page to pay on. No money moves until the provider says paid.
 */
export async function openPurchase(
  db: Db,
  rates: RateSource,
  userId: string,
  body: TPurchaseBody,
  now: Date,
): Promise<{ status: 'ok'; payment: TDepositPayment; quote: TPurchaseQuote }> {
  const level = await userLevel(db, userId);
  const { assessed, buy, quote } = await quotePurchase(db, rates, level, body);
  const { system, currency } = assessed.entry;
  const opening = paymentProvider(system.provider).openPayment({ direction: 'purchase' });
  // The payment and its locked quote together or not at all, within the deposit limits.
  const { row, purchase } = await db.transaction(async (tx) => {
    await refuseOverLimits(tx, { userId, level, now, operation: 'deposit', currency: currency.code, amount: assessed.amount });
    const [opened] = await tx.query<TDepositRow>(
      `INSERT INTO payments (direction, provider, system_id, user_id, currency, amount, fee, expires_at, created_at, updated_at, reference)
       VALUES ('purchase', $1, $2, $3, $4, $5, $6, $7, $8, $8, $9) RETURNING ${DEPOSIT_COLUMNS}`,
      [
        system.provider,
        system.id,
        userId,
        currency.code,
        assessed.amount.toString(),
        assessed.fee.toString(),
        new Date(now.getTime() + (opening.lifetimeMs ?? DEPOSIT_LIFETIME_MS)),
        now,
        opening.reference ?? null,
      ],
    );
    const [locked] = await tx.query<TPurchaseRow>(
      `INSERT INTO purchases (payment_id, buy_currency, pay, pair_fee, spent, remainder, receive, rate, quote_expires_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9) RETURNING *`,
      [
        opened!.id,
        buy.code,
        quote.pay.toString(),
        quote.fee.toString(),
        quote.spent.toString(),
        quote.remainder.toString(),
        quote.receive.toString(),
        quote.rate,
        new Date(now.getTime() + PURCHASE_QUOTE_TTL_MS),
      ],
    );
    return { row: opened!, purchase: locked! };
  });
  return { status: 'ok', payment: await paymentView(db, row, buy.code), quote: await quoteView(db, purchase) };
}

/** The purchase part of a payment (check and history show it). */
export async function purchaseQuote(db: Queryable, paymentId: string): Promise<TPurchaseQuote | null> {
  const [row] = await db.query<TPurchaseRow>('SELECT * FROM purchases WHERE payment_id = $1', [paymentId]);
  return row ? quoteView(db, row) : null;
}

/**
 * The purchase's payment was paid (inside the webhook's transaction, payment row locked): ONE
 * ledger transaction takes the amount from the provider's clearing account, the system's fee to
 * the house, and either exchanges the rest at the locked quote (still valid), or at a fresh
 * quote within the tolerance (expired), or credits it to the user's wallet in the paid currency
 * (the fresh quote is worse than the tolerance, or the pair is gone). The outcome and its i18n
 * reason are stored with the payment.
 */
export async function settlePurchase(tx: Queryable, payment: TDepositRow, now: Date): Promise<void> {
  const [purchase] = await tx.query<TPurchaseRow>('SELECT * FROM purchases WHERE payment_id = $1 FOR UPDATE', [payment.id]);
  if (!purchase) throw new AppError('internal');
  const net = BigInt(purchase.pay);
  let quote: Pick<TQuoteAmounts, 'fee' | 'spent' | 'remainder' | 'receive' | 'rate'> | null = {
    fee: BigInt(purchase.pair_fee),
    spent: BigInt(purchase.spent),
    remainder: BigInt(purchase.remainder),
    receive: BigInt(purchase.receive),
    rate: purchase.rate,
  };
  let outcome: 'exchanged' | 'requoted' | 'kept_fiat' = 'exchanged';
  if (now > purchase.quote_expires_at) {
    quote = await requote(tx, payment.currency, purchase.buy_currency, net);
    const floor = (BigInt(purchase.receive) * (100n - PURCHASE_REQUOTE_TOLERANCE_PERCENT) + 99n) / 100n;
    outcome = quote && quote.receive >= floor ? 'requoted' : 'kept_fiat';
    if (outcome === 'kept_fiat') quote = null;
  }
  const fee = BigInt(payment.fee);
  const memo = `purchase ${payment.public_id}`;
  const actor = `provider:${payment.provider}`;
  const { user_id: user, currency, provider } = payment;
  const paid = [
    { account: systemAccount('clearing', currency, provider), amount: -BigInt(payment.amount) },
    { account: houseAccount('fees', currency, user), amount: quote ? fee + quote.fee + quote.remainder : fee },
  ];
  const postings = quote
    ? [
        ...paid,
        { account: houseAccount('liquidity', currency, user), amount: quote.spent },
        { account: houseAccount('liquidity', purchase.buy_currency, user), amount: -quote.receive },
        { account: userAccount(user, purchase.buy_currency), amount: quote.receive },
      ]
    : [...paid, { account: userAccount(user, currency), amount: net }];
  const posted = await postTransaction(tx, { kind: 'purchase', postings, memo, actor });
  await tx.query('UPDATE purchases SET outcome = $2, final_receive = $3, final_rate = $4 WHERE payment_id = $1', [
    payment.id,
    outcome,
    quote ? quote.receive.toString() : null,
    quote ? quote.rate : null,
  ]);
  await tx.query(
    `UPDATE payments SET state = 'credited', reason = $4, ledger_transaction_id = $2, paid_at = $3, credited_at = $3, updated_at = $3 WHERE id = $1`,
    [payment.id, posted, now, outcome === 'exchanged' ? null : `purchase.${outcome}`],
  );
}

async function requote(tx: Queryable, src: string, dst: string, net: bigint): Promise<TQuoteAmounts | null> {
  const byCode = await currencies(tx);
  const from = byCode.get(src);
  const to = byCode.get(dst);
  if (!from?.enabled || !to?.enabled) return null;
  const terms = await new TableRateSource(tx).pair(src, dst);
  if (!terms) return null;
  try {
    return quoteFromPay(terms, { src: from.precision, dst: to.precision }, net);
  } catch {
    return null;
  }
}
