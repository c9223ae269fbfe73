import { useEffect, useState } from 'react';
import { useTranslation } from 'react-i18next';
import type { TDepositPayment, TPurchaseQuote } from '@obmen/shared';
import { displayAmount, displayMoney, displayUprightRate } from '@obmen/shared/format';
import { api, ApiError } from '../lib/api.ts';
import { CALLS } from '@obmen/shared/calls';
import { messageText } from '../lib/field-errors.ts';
import { IslandRoot, useDisplayDateTime, type TIslandProps, useKeyTranslate } from './IslandRoot.tsx';

type TProps = TIslandProps & { url: string };
type TAnswer = { payment: TDepositPayment; quote: TPurchaseQuote | null };

/** A payment still open is asked again this often (the provider's webhook ends it). */
const POLL_MS = 2_000;

/**
 * Back from the hosted card page (…?payment=<id>): the purchase's state through the deposit
 * check (spec §7), asked again while the payment is open, then what became of it and the amounts.
 */
function PurchaseStatusBody({ url, locale }: Omit<TProps, 'messages'>) {
  const { t } = useTranslation();
  const tk = useKeyTranslate();
  const when = useDisplayDateTime();
  const [answer, setAnswer] = useState<TAnswer | null>(null);
  const [error, setError] = useState('');

  useEffect(() => {
    let timer: ReturnType<typeof setTimeout> | undefined;
    let stopped = false;
    const ask = () => {
      api(CALLS['POST /api/deposit/integration_json/check'], { body: { url } })
        .then((next) => {
          if (stopped) return;
          setAnswer(next);
          if (next.payment.state === 'created' || next.payment.state === 'pending' || next.payment.state === 'paid') timer = setTimeout(ask, POLL_MS);
        })
        .catch((err: unknown) => {
          if (!stopped) setError(err instanceof ApiError && err.status === 404 ? t('purchase.not_found') : t('error.generic'));
        });
    };
    ask();
    return () => {
      stopped = true;
      clearTimeout(timer);
    };
  }, [url]);

  if (error) {
    return (
      <p className="form-error" role="alert" data-testid="purchase-status-error">
        {error}
      </p>
    );
  }
  if (!answer) {
    return (
      <p className="wd-expected" role="status" data-testid="purchase-status" data-state="loading">
        {t('purchase.waiting')}
      </p>
    );
  }
  const { payment, quote } = answer;
  const open = payment.state === 'created' || payment.state === 'pending' || payment.state === 'paid';
  // What became of a credited purchase, in words: exchanged at the locked rate, re-quoted within the tolerance, or kept as fiat.
  const vars = { buy: quote?.buy ?? '', tolerance: quote?.tolerance_percent ?? '', currency: payment.currency };
  const outcome =
    quote?.outcome === 'kept_fiat'
      ? t('purchase.outcome_kept_fiat', { ...vars, amount: displayAmount(payment.receive, locale) })
      : quote?.outcome
        ? t(`purchase.outcome_${quote.outcome}`, { ...vars, receive: displayAmount(quote.final_receive ?? quote.receive, locale) })
        : '';
  const money = (amount: string, currency: string) => displayMoney(amount, currency, locale);
  return (
    <div className="pu-status" data-testid="purchase-status" data-state={payment.state} data-outcome={quote?.outcome ?? ''}>
      <p className="pu-outcome" role="status" data-testid="purchase-outcome">
        {outcome ||
          (payment.reason ? messageText(tk, payment.reason) : payment.state === 'created' ? t('purchase.pay_prompt') : open ? t('purchase.waiting') : '')}
      </p>
      <dl className="xf-terms">
        <div>
          <dt>{t('purchase.state')}</dt>
          <dd>
            <span className={`badge badge-${payment.state}`} data-testid="purchase-state">
              {t(`purchase.state_${payment.state}`)}
            </span>
          </dd>
        </div>
        <div>
          <dt>{t('purchase.paid_amount')}</dt>
          <dd data-testid="purchase-paid">{money(payment.amount, payment.currency)}</dd>
        </div>
        <div>
          <dt>{t('purchase.fee')}</dt>
          <dd>{money(payment.fee, payment.currency)}</dd>
        </div>
        {quote && (
          <>
            <div>
              <dt>{t('purchase.locked_rate')}</dt>
              <dd data-testid="purchase-locked-rate">{displayUprightRate(payment.currency, quote.buy, quote.rate, locale)}</dd>
            </div>
            <div>
              <dt>{t('purchase.quoted_receive')}</dt>
              <dd>{money(quote.receive, quote.buy)}</dd>
            </div>
          </>
        )}
        {quote?.outcome === 'requoted' && quote.final_rate && (
          <div>
            <dt>{t('purchase.final_rate')}</dt>
            <dd data-testid="purchase-final-rate">{displayUprightRate(payment.currency, quote.buy, quote.final_rate, locale)}</dd>
          </div>
        )}
        {quote?.outcome && (
          <div>
            <dt>{t('purchase.credited')}</dt>
            <dd data-testid="purchase-credited">
              {quote.outcome === 'kept_fiat' ? money(payment.receive, payment.currency) : money(quote.final_receive ?? quote.receive, quote.buy)}
            </dd>
          </div>
        )}
      </dl>
      {open && quote && <p className="wd-expected">{t('purchase.quote_until', { at: when(quote.expires_at, 'time') })}</p>}
      {payment.pay_url && (
        <a className="btn btn-primary" href={payment.pay_url} data-testid="purchase-pay">
          {t('purchase.pay_now')}
        </a>
      )}
      {!open && (
        <a className="btn btn-outline" href={`/purchase?currency=${quote?.buy ?? ''}`} data-testid="purchase-again">
          {t('purchase.again')}
        </a>
      )}
    </div>
  );
}

export default function PurchaseStatus({ locale, messages, timeZone, ...props }: TProps) {
  return (
    <IslandRoot locale={locale} messages={messages} timeZone={timeZone}>
      <PurchaseStatusBody locale={locale} {...props} />
    </IslandRoot>
  );
}
