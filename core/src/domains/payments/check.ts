import {
  formatAmount,
  type TDepositPayment,
  type TLocale,
  type TPaymentCheckFlow,
  type TPaymentFormCheckBody,
  type TPaymentLimits,
  type TPurchaseCheckQuote,
  type TPurchaseQuote,
} from '@obmen/shared';
import type { Queryable } from '../../db/index.ts';
import { AppError, notFoundOf } from '../../errors.ts';
import type { RateSource } from '../rates/source.ts';
import { assessPayment, type TPaymentAssessment } from './catalogue.ts';
import { limitError, limitState, limitValue, showLimits, userLevel } from '../limits/service.ts';
import { DEPOSIT_COLUMNS, paymentView, type TDepositRow } from './deposits.ts';
import { purchaseQuote, quotePurchase } from './purchase.ts';
import { describeRefusal } from './withdrawals.ts';

export type TPaymentFormCheck = {
  ok: boolean;
  currency: string;
  fee: string | null;
  receive: string | null;
  /** The deposit limits of the caller's level (purchases count as money coming in). */
  limits: TPaymentLimits;
  fields: Record<string, string>;
  message: string | null;
  /** A purchase: what the rest buys at the current rate (the quote is locked only when the purchase opens). */
  quote: TPurchaseCheckQuote | null;
};

/**
 * POST /api/{x}/check for deposit and purchase: what the form would give (the system's fee,
 * the amount received; for a purchase the quote of the currency bought), the deposit limits
 * left, and every refusal as a localized field message, without creating anything: over
 * what is left of the limits, the refusal the create would give. Always 200.
 */
export async function checkPaymentForm(
  db: Queryable,
  rates: RateSource,
  userId: string,
  flow: TPaymentCheckFlow,
  body: TPaymentFormCheckBody,
  locale: TLocale,
  now: Date,
): Promise<TPaymentFormCheck> {
  const level = await userLevel(db, userId);
  const state = await limitState(db, userId, level, now, 'deposit');
  const answer: TPaymentFormCheck = {
    ok: false,
    currency: body.currency,
    fee: null,
    receive: null,
    limits: showLimits(state),
    fields: {},
    message: null,
    quote: null,
  };
  try {
    let assessed: TPaymentAssessment;
    if (flow === 'purchase') {
      if (body.buy === undefined) throw new AppError('validation', { fields: { buy: 'validation.required' } });
      const purchase = await quotePurchase(db, rates, level, { ...body, buy: body.buy });
      const { buy, quote } = purchase;
      assessed = purchase.assessed;
      const precision = assessed.entry.currency.precision;
      Object.assign(answer, shownTerms(assessed.fee, assessed.receive, precision));
      answer.quote = {
        buy: buy.code,
        receive: formatAmount(quote.receive, buy.precision),
        rate: quote.rate,
        rate_inverse: quote.rateInverse,
        fee: formatAmount(quote.fee, precision),
      };
    } else {
      assessed = await assessPayment(db, { direction: 'deposit', ps: body.ps, currency: body.currency, amount: body.amount, userLevel: level });
      Object.assign(answer, shownTerms(assessed.fee, assessed.receive, assessed.entry.currency.precision));
    }
    const refusal = limitError(state, await limitValue(db, assessed.entry.currency.code, assessed.amount, state.currency), 'deposit');
    if (refusal) throw refusal;
  } catch (err) {
    return Object.assign(answer, describeRefusal(locale, err));
  }
  answer.ok = true;
  return answer;
}

function shownTerms(fee: bigint, receive: bigint, precision: number): Pick<TPaymentFormCheck, 'fee' | 'receive'> {
  return { fee: formatAmount(fee, precision), receive: formatAmount(receive, precision) };
}

/** The payment id in what `check` is given: the payment's page URL (…?payment=<id>), or the id itself. */
export function paymentIdOf(url: string): string | null {
  const match = /(?:^|[?&]payment=)([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})(?:$|&)/i.exec(url.trim());
  return match ? match[1]!.toLowerCase() : null;
}

/**
 * POST /api/deposit/integration_json/check {url}: the state of one of the caller's payments
 * (deposit or purchase). Another user's payment answers exactly like a missing one.
 */
export async function checkPayment(
  db: Queryable,
  userId: string,
  url: string,
): Promise<{ status: 'ok'; payment: TDepositPayment; quote: TPurchaseQuote | null }> {
  const id = paymentIdOf(url);
  if (!id) throw notFoundOf('payment');
  const [row] = await db.query<TDepositRow & { buying: string | null }>(
    `SELECT ${DEPOSIT_COLUMNS}, (SELECT buy_currency FROM purchases WHERE payment_id = payments.id) AS buying
     FROM payments WHERE public_id = $1 AND user_id = $2 AND direction IN ('deposit', 'purchase')`,
    [id, userId],
  );
  if (!row) throw notFoundOf('payment');
  const quote = row.direction === 'purchase' ? await purchaseQuote(db, row.id) : null;
  return { status: 'ok', payment: await paymentView(db, row, row.buying ?? undefined), quote };
}
