import type { TExchangePair, TLocale } from '@obmen/shared';
import { displayAmount, displayPercent, isZeroAmount } from '@obmen/shared/format';

export function pairFeeText(pair: TExchangePair, locale: TLocale): string {
  return `${displayPercent(pair.fee_percent, locale)}%${isZeroAmount(pair.fee_fixed) ? '' : ` + ${displayAmount(pair.fee_fixed, locale)} ${pair.src}`}`;
}
