import { useEffect, useRef } from 'react';
import { useTranslation } from 'react-i18next';
import type { TCurrencyInfo, TExchangePair, TExchangeQuote, TExchangeRecord, TLocale } from '@obmen/shared';
import { displayAmount, displayPairRate, displayPercent, isZeroAmount } from '@obmen/shared/format';
import { focusWhenShown } from '../lib/focus.ts';

export type TExchangeResult = { message: string; exchange: TExchangeRecord };

/** A confirmed exchange: what was paid and received, and the way to another one or to the history. */
export function ExchangeResult({ result, locale, onAgain }: { result: TExchangeResult; locale: TLocale; onAgain: () => void }) {
  const { t } = useTranslation();
  const resultRef = useRef<HTMLHeadingElement>(null);
  useEffect(() => focusWhenShown(resultRef.current), []);
  const { exchange } = result;
  return (
    <div className="xf-result" data-testid="exchange-result" role="status">
      <div className="xf-result-icon" aria-hidden="true">
        ✓
      </div>
      <h2 tabIndex={-1} ref={resultRef}>
        {t('exchangepage.done_title')}
      </h2>
      <p className="xf-result-message" data-testid="exchange-result-message">
        {result.message}
      </p>
      <dl className="xf-terms">
        <div>
          <dt>{t('exchangepage.you_paid')}</dt>
          <dd>
            {displayAmount(exchange.amount, locale)} {exchange.src}
          </dd>
        </div>
        <div>
          <dt>{t('exchangepage.you_received')}</dt>
          <dd data-testid="exchange-result-received">
            {displayAmount(exchange.amount_receive, locale)} {exchange.dst}
          </dd>
        </div>
        <div>
          <dt>{t('exchangepage.fee')}</dt>
          <dd>
            {displayAmount(exchange.fee, locale)} {exchange.src}
          </dd>
        </div>
      </dl>
      <div className="xf-actions">
        <button type="button" className="btn btn-primary" onClick={onAgain} data-testid="exchange-again">
          {t('exchangepage.again')}
        </button>
        <a className="btn btn-outline" href="/history/exchange">
          {t('exchangepage.to_history')}
        </a>
      </div>
    </div>
  );
}

type TTermsProps = {
  pair: TExchangePair;
  src: TCurrencyInfo;
  dst: TCurrencyInfo;
  quote: TExchangeQuote | null;
  loading: boolean;
  expired: boolean;
  locale: TLocale;
};

/** The rate, cost, fee, amounts and limits: the quote's once there is one, the pair's before. */
export function ExchangeTerms({ pair, src, dst, quote, loading, expired, locale }: TTermsProps) {
  const { t } = useTranslation();
  const rateLine = quote ?? pair;
  const rateText = displayPairRate({ src: src.code, dst: dst.code, rate: rateLine.rate, rate_inverse: rateLine.rate_inverse }, locale);
  return (
    <dl
      className="xf-terms"
      aria-live="polite"
      data-testid="exchange-quote"
      data-state={loading ? 'loading' : quote ? (expired ? 'expired' : 'ready') : 'idle'}
    >
      <div>
        <dt>{t('exchangepage.rate')}</dt>
        <dd>
          <span data-testid="quote-rate">{rateText}</span>
          <span className="xf-cost" title={t('exchangepage.cost_hint')} data-testid="quote-cost">
            {quote
              ? t('exchangepage.cost_quote', {
                  cost: displayAmount(quote.cost, locale),
                  currency: src.code,
                  percent: displayPercent(quote.cost_percent, locale, 2),
                })
              : t('exchangepage.cost_pair', { percent: displayPercent(pair.cost_percent, locale, 2) })}
          </span>
        </dd>
      </div>
      {quote ? (
        <>
          <div>
            <dt>{t('exchangepage.fee')}</dt>
            <dd data-testid="quote-fee">
              {displayAmount(quote.fee, locale)} {src.code}
            </dd>
          </div>
          <div>
            <dt>{t('exchangepage.you_pay')}</dt>
            <dd data-testid="quote-amount">
              {displayAmount(quote.amount, locale)} {src.code}
            </dd>
          </div>
          <div className="xf-strong">
            <dt>{t('exchangepage.you_receive')}</dt>
            <dd data-testid="quote-receive" data-amount={quote.amount_receive}>
              {displayAmount(quote.amount_receive, locale)} {dst.code}
            </dd>
          </div>
        </>
      ) : (
        <div>
          <dt>{t('exchangepage.fee')}</dt>
          <dd>
            {displayPercent(pair.fee_percent, locale)}%{!isZeroAmount(pair.fee_fixed) && ` + ${displayAmount(pair.fee_fixed, locale)} ${src.code}`}
          </dd>
        </div>
      )}
      <div>
        <dt>{t('exchangepage.limits')}</dt>
        <dd>
          {pair.max
            ? t('exchangepage.limits_range', {
                min: displayAmount((quote?.limits ?? pair).min, locale),
                max: displayAmount((quote?.limits ?? pair).max ?? '', locale),
                currency: src.code,
              })
            : t('exchangepage.limits_min', { min: displayAmount(pair.min, locale), currency: src.code })}
        </dd>
      </div>
    </dl>
  );
}

/** To the reverse pair, where there is one. */
export function SwapLink({ src, dst, reverse }: { src: string; dst: string; reverse: boolean }) {
  const { t } = useTranslation();
  return (
    <div className="xf-swap">
      {reverse ? (
        <a
          className="xf-swap-btn"
          href={`/exchange/${dst}/${src}`}
          title={t('exchangepage.swap')}
          aria-label={t('exchangepage.swap')}
          data-testid="exchange-swap"
        >
          <svg width="18" height="18" viewBox="0 0 24 24" aria-hidden="true">
            <path fill="currentColor" d="M7 4 3 8l4 4V9h10V7H7zm10 8v3H7v2h10v3l4-4z" />
          </svg>
        </a>
      ) : (
        <span className="xf-swap-btn" aria-hidden="true">
          ↓
        </span>
      )}
    </div>
  );
}

/** How long the quote can still be confirmed, or that it expired. */
export function QuoteTimer({ quote, remaining }: { quote: TExchangeQuote; remaining: number }) {
  const { t } = useTranslation();
  const expired = remaining === 0;
  return (
    <p className={`xf-timer${expired ? ' xf-timer-expired' : ''}`} data-testid="quote-timer">
      {expired ? t('exchangepage.quote_expired_hint') : t('exchangepage.quote_valid', { seconds: remaining })}
      {!expired && (
        <span className="xf-timer-bar">
          <span className="xf-timer-fill" data-fill={Math.ceil((remaining / quote.expires_in) * 10)} />
        </span>
      )}
    </p>
  );
}
