import { decimalToString, divCeil, divFloor, formatAmount, parseDecimal, pow10, type TDecimal } from '@obmen/shared';
import { moneyError } from '../../money-errors.ts';

/** A pair as the rate source gives it. Amounts in src minor units; rate and percentages exact decimals. */
export type TPairTerms = {
  src: string;
  dst: string;
  /** Mid-market: dst per 1 src, major units. */
  rate: string;
  /** The house's margin: the user gets rate × (1 − spread). */
  spread: string;
  /** Fraction of the paid amount, e.g. "0.001" = 0.1 %. */
  feePercent: string;
  feeFixed: bigint;
  min: bigint;
  max: bigint | null;
  enabled: boolean;
  source: string;
};

export type TQuoteAmounts = {
  /** What the user pays, src minor. */
  pay: bigint;
  /** The pair's fee, src minor. */
  fee: bigint;
  /** The part of pay that buys `receive` at the user rate, rounded up; goes to liquidity. */
  spent: bigint;
  /** pay − fee − spent: the rounding remainder, src minor; goes to the fee account. */
  remainder: bigint;
  /** What the user receives, dst minor: exactly this is credited. */
  receive: bigint;
  /** The user rate (after the spread), dst per 1 src, exact. */
  rate: string;
  /** src per 1 dst, 10 significant digits, for display. */
  rateInverse: string;
};

/** A quote's figures as SQL parameters, in the order money_exchange() and the quotes table take them: pay, fee, spent, remainder, receive, rate. */
export function quoteAmountParams(amounts: TQuoteAmounts): [string, string, string, string, string, string] {
  return [amounts.pay.toString(), amounts.fee.toString(), amounts.spent.toString(), amounts.remainder.toString(), amounts.receive.toString(), amounts.rate];
}

/*
 * ROUNDING RULE: every conversion rounds in the house's favour, and the remainder goes to the
 * fee account.
 *   - The fee (fee_percent × amount + fee_fixed) is rounded UP to the src minor unit.
 *   - The amount the user RECEIVES is rounded DOWN to the dst precision:
 *       receive = floor((pay − fee) × user_rate)
 *   - The amount the user PAYS for a requested receive amount is rounded UP: the smallest pay
 *     whose receive (by the line above) is at least the requested amount.
 *   - Of pay − fee, only spent = ceil(receive / user_rate) (rounded UP) goes to the liquidity
 *     account; the remainder (pay − fee − spent, less than one dst minor unit's worth) is
 *     posted to the fee account with the fee, so no fraction of a minor unit is lost or made.
 * All of it is bigint arithmetic on exact decimals: no float anywhere.
 */

type TRational = { n: bigint; d: bigint };

function decimal(text: string): TDecimal {
  return parseDecimal(text);
}

/** dst_minor = src_minor × n / d, at the user rate. */
function minorRate(terms: TPairTerms, srcPrecision: number, dstPrecision: number): { minor: TRational; major: TDecimal } {
  const mid = decimal(terms.rate);
  const spread = decimal(terms.spread);
  const major: TDecimal = { num: mid.num * (pow10(spread.scale) - spread.num), scale: mid.scale + spread.scale };
  if (major.num <= 0n) throw moneyError('pair_unavailable', { src: terms.src, dst: terms.dst }, 'dst');
  const shift = dstPrecision - srcPrecision;
  return {
    minor: { n: major.num * (shift > 0 ? pow10(shift) : 1n), d: pow10(major.scale) * (shift < 0 ? pow10(-shift) : 1n) },
    major,
  };
}

/** floor(n/d) with at least `digits` significant digits, as decimal text. */
export function significant(n: bigint, d: bigint, digits: number): string {
  let scale = 0;
  const floor = pow10(digits - 1);
  while (scale < 60 && (n * pow10(scale)) / d < floor) scale++;
  return decimalToString({ num: (n * pow10(scale)) / d, scale });
}

function feeOf(terms: TPairTerms, pay: bigint): bigint {
  const percent = decimal(terms.feePercent);
  return divCeil(pay * percent.num, pow10(percent.scale)) + terms.feeFixed;
}

export type TPrecisions = { src: number; dst: number };

/** The user pays `pay` src minor units: what do they receive? Refuses outside the pair's limits. */
export function quoteFromPay(terms: TPairTerms, precision: TPrecisions, pay: bigint, field = 'amount'): TQuoteAmounts {
  const tooSmall = () => moneyError('amount_too_small', { currency: terms.src, min: formatAmount(terms.min, precision.src) }, field);
  if (pay < terms.min) throw tooSmall();
  if (terms.max !== null && pay > terms.max) {
    throw moneyError('amount_too_large', { currency: terms.src, max: formatAmount(terms.max, precision.src) }, field);
  }
  const { minor, major } = minorRate(terms, precision.src, precision.dst);
  const fee = feeOf(terms, pay);
  const net = pay - fee;
  if (net <= 0n) throw tooSmall();
  const receive = divFloor(net * minor.n, minor.d);
  if (receive <= 0n) throw tooSmall();
  const spent = divCeil(receive * minor.d, minor.n);
  return {
    pay,
    fee,
    spent,
    remainder: net - spent,
    receive,
    rate: decimalToString(major),
    rateInverse: significant(pow10(major.scale), major.num, 10),
  };
}

/** The user wants `receive` dst minor units: the smallest pay that yields at least that. */
export function quoteFromReceive(terms: TPairTerms, precision: TPrecisions, receive: bigint, field = 'amount_receive'): TQuoteAmounts {
  const { minor } = minorRate(terms, precision.src, precision.dst);
  const netMin = divCeil(receive * minor.d, minor.n);
  const percent = decimal(terms.feePercent);
  const base = pow10(percent.scale);
  let pay = divCeil((netMin + terms.feeFixed) * base, base - percent.num);
  while (pay - feeOf(terms, pay) < netMin) pay++;
  return quoteFromPay(terms, precision, pay, field);
}

/*
 * THE WHOLE COST: what the user gives up against the mid-market rate, the fee and the spread
 * together, so the page can say "you pay X (Y%) over the market rate" instead of showing the
 * fee beside a rate that already holds the spread.
 */

/** 1 − (1 − spread)(1 − fee_percent), exactly: the share of a payment lost to both (fixed fee aside). */
export function costFraction(terms: Pick<TPairTerms, 'spread' | 'feePercent'>): string {
  const spread = decimal(terms.spread);
  const fee = decimal(terms.feePercent);
  const one = pow10(spread.scale + fee.scale);
  const kept = (pow10(spread.scale) - spread.num) * (pow10(fee.scale) - fee.num);
  return decimalToString({ num: one - kept, scale: spread.scale + fee.scale });
}

/**
 * A quote's cost over the market: `pay` less the market value of `receive` (receive ÷ mid, in
 * src minor units, rounded down so the cost is never understated); its share of `pay` in
 * hundredths of a percent, rounded up.
 */
export function quoteCost(terms: TPairTerms, precision: TPrecisions, amounts: Pick<TQuoteAmounts, 'pay' | 'receive'>): { cost: bigint; fraction: string } {
  const mid = decimal(terms.rate);
  const worth = divFloor(amounts.receive * pow10(precision.src) * pow10(mid.scale), pow10(precision.dst) * mid.num);
  const cost = amounts.pay - worth;
  const basisPoints = amounts.pay > 0n ? divCeil(cost * 10_000n, amounts.pay) : 0n;
  return { cost, fraction: decimalToString({ num: basisPoints, scale: 4 }) };
}
