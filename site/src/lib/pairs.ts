import type { TExchangePair, TLocale } from '@obmen/shared';
import { displayAmount, isZeroAmount, percentText, shortDecimal } from './amount.ts';

/** "1 BTC ≈ 65 326.63 USDT": quoted from the side that makes the number at least 1. */
export function pairRateText(pair: TExchangePair, locale: TLocale): string {
  return Number(pair.rate) >= 1
    ? `1 ${pair.src} ≈ ${displayAmount(shortDecimal(pair.rate, 8), locale, 0)} ${pair.dst}`
    : `1 ${pair.dst} ≈ ${displayAmount(shortDecimal(pair.rate_inverse, 8), locale, 0)} ${pair.src}`;
}

export function pairFeeText(pair: TExchangePair, locale: TLocale): string {
  return `${percentText(pair.fee_percent)}%${isZeroAmount(pair.fee_fixed) ? '' : ` + ${displayAmount(pair.fee_fixed, locale)} ${pair.src}`}`;
}
