import type { TExchangePair, TLocale } from '@obmen/shared';
import { displayAmount, displayPercent, isZeroAmount } from '@obmen/shared/format';
import type { TTranslate } from './i18n.ts';

/** "0,6% over the market rate" (fee and spread together), plus a fixed fee when the pair has one. */
export function pairCostText(pair: TExchangePair, locale: TLocale, t: TTranslate): string {
  const percent = t('exchangepage.cost_pair', { percent: displayPercent(pair.cost_percent, locale, 2) });
  return isZeroAmount(pair.fee_fixed)
    ? percent
    : `${percent} ${t('exchangepage.cost_fixed', { fee: displayAmount(pair.fee_fixed, locale), currency: pair.src })}`;
}
