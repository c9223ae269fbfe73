import { useState } from 'react';
import { useTranslation } from 'react-i18next';
import type { TCurrencyInfo, TExchangeAllLeg, TExchangeBatch } from '@obmen/shared';
import { api } from '../lib/api.ts';
import { CALLS } from '@obmen/shared/calls';
import { useMoneyForm } from '../lib/use-money-form.ts';
import { sumAmounts } from '@obmen/shared/money';
import { displayAmount } from '@obmen/shared/format';
import { IslandRoot, type TIslandProps } from './IslandRoot.tsx';
import { FormError } from './FormParts.tsx';

type TProps = TIslandProps & {
  /** The currency everything is converted into. */
  currency: string;
  currencies: TCurrencyInfo[];
  preview: TExchangeBatch;
};

type TResult = { message: string; batch: TExchangeBatch };

const plannedCodes = (batch: TExchangeBatch) => batch.legs.filter((leg) => leg.status === 'planned').map((leg) => leg.src);

/** /exchange/all: every non-zero wallet (or the chosen ones) into one currency, each leg reported. */
function ExchangeAllBody({ currency, currencies, preview: initial, locale }: Omit<TProps, 'messages'>) {
  const { t } = useTranslation();
  const [preview, setPreview] = useState(initial);
  const [selected, setSelected] = useState<Set<string>>(() => new Set(plannedCodes(initial)));
  const [refreshing, setRefreshing] = useState(false);
  const [result, setResult] = useState<TResult | null>(null);
  const { busy: sending, formError, setFormError, submit } = useMoneyForm();
  const logo = (code: string) => currencies.find((c) => c.code === code)?.logo ?? '';

  const planned = preview.legs.filter((leg) => leg.status === 'planned');
  const chosen = planned.filter((leg) => selected.has(leg.src));
  const total = sumAmounts(chosen.map((leg) => leg.amount_receive));

  function toggle(code: string, on: boolean) {
    const next = new Set(selected);
    if (on) next.add(code);
    else next.delete(code);
    setSelected(next);
  }

  async function refresh() {
    setRefreshing(true);
    setFormError('');
    try {
      const answer = await api(CALLS['GET /api/exchange/all/{currency}'], { params: { currency } });
      setPreview(answer.preview);
      const codes = plannedCodes(answer.preview);
      setSelected(new Set(codes.filter((code) => selected.has(code) || !preview.legs.some((leg) => leg.src === code))));
    } catch (err) {
      setFormError(err instanceof Error ? err.message : t('error.generic'));
    } finally {
      setRefreshing(false);
    }
  }

  async function confirm() {
    if (chosen.length === 0) return;
    const selection = chosen
      .map((leg) => leg.src)
      .sort()
      .join(',');
    // One key per selection: sending the same one again after an unknown outcome replays it.
    const answer = await submit(
      (idempotencyKey) => api(CALLS['POST /api/exchange/all/{currency}'], { params: { currency }, body: { currencies: selection }, idempotencyKey }),
      {
        scope: selection,
      },
    );
    if (answer) setResult(answer);
  }

  function legStatus(leg: TExchangeAllLeg) {
    return (
      <span className={`badge badge-${leg.status}`} data-testid="leg-status">
        {t(`exchangepage.leg_${leg.status}`)}
      </span>
    );
  }

  if (result) {
    const { batch } = result;
    const variant = batch.status === 'completed' ? 'success' : batch.status === 'partial' ? 'warning' : 'danger';
    return (
      <div className="xa-result" data-testid="exchange-all-result" data-status={batch.status}>
        <p className={`xa-summary xa-summary-${variant}`} role="status" data-testid="exchange-all-message">
          {result.message}
        </p>
        <ul className="xa-legs">
          {batch.legs.map((leg) => (
            <li key={leg.src} className="xa-leg" data-testid={`leg-${leg.src}`} data-status={leg.status}>
              <img src={logo(leg.src)} alt="" width="28" height="28" />
              <div className="xa-leg-main">
                <strong>
                  {displayAmount(leg.amount, locale)} {leg.src}
                </strong>
                {leg.status === 'completed' ? (
                  <span className="xa-leg-sub">
                    → {displayAmount(leg.amount_receive, locale)} {batch.currency}
                  </span>
                ) : (
                  leg.error && <span className="xa-leg-error">{leg.error}</span>
                )}
              </div>
              {legStatus(leg)}
            </li>
          ))}
        </ul>
        <div className="xf-actions">
          <a className="btn btn-primary" href="/history/exchange">
            {t('exchangepage.to_history')}
          </a>
          <a className="btn btn-outline" href={`/exchange/all/${currency}`}>
            {t('exchangepage.all_again')}
          </a>
        </div>
      </div>
    );
  }

  if (preview.legs.length === 0) {
    return (
      <div className="xa-empty" data-testid="exchange-all-empty">
        <p>{t('exchange.all_empty', { currency })}</p>
        <a className="btn btn-outline" href="/exchanges">
          {t('exchangepage.to_pairs')}
        </a>
      </div>
    );
  }

  return (
    <div className="xa" data-testid="exchange-all-form">
      <fieldset className="xa-fieldset">
        <legend className="visually-hidden">{t('exchangepage.all_choose')}</legend>
        <ul className="xa-legs">
          {preview.legs.map((leg) => {
            const available = leg.status === 'planned';
            return (
              <li key={leg.src} className={`xa-leg${available ? '' : ' xa-leg-off'}`} data-testid={`leg-${leg.src}`} data-status={leg.status}>
                <label className="xa-check">
                  <input
                    type="checkbox"
                    checked={available && selected.has(leg.src)}
                    disabled={!available || sending}
                    onChange={(event) => toggle(leg.src, event.target.checked)}
                    data-testid={`leg-check-${leg.src}`}
                  />
                  <img src={logo(leg.src)} alt="" width="28" height="28" />
                  <span className="xa-leg-main">
                    <strong>
                      {displayAmount(leg.amount, locale)} {leg.src}
                    </strong>
                    {available ? (
                      <span className="xa-leg-sub">
                        ≈ {displayAmount(leg.amount_receive, locale)} {currency} · {t('exchangepage.fee')} {displayAmount(leg.fee, locale)} {leg.src}
                      </span>
                    ) : (
                      <span className="xa-leg-error">{leg.error ?? t('exchangepage.leg_unavailable')}</span>
                    )}
                  </span>
                </label>
              </li>
            );
          })}
        </ul>
      </fieldset>
      <div className="xa-total">
        <span>{t('exchangepage.all_total')}</span>
        <strong data-testid="exchange-all-total">
          ≈ {displayAmount(total, locale)} {currency}
        </strong>
      </div>
      <p className="xf-hint">{t('exchangepage.all_hint')}</p>
      <FormError text={formError} testId="form-error" />
      <div className="xf-actions">
        <button
          type="button"
          className="btn btn-primary xf-submit"
          onClick={confirm}
          disabled={sending || chosen.length === 0}
          data-testid="exchange-all-confirm"
        >
          {sending ? t('exchangepage.sending') : t('exchangepage.all_confirm', { n: chosen.length, currency })}
        </button>
        <button type="button" className="btn btn-ghost" onClick={refresh} disabled={refreshing || sending} data-testid="exchange-all-refresh">
          {t('exchangepage.all_refresh')}
        </button>
      </div>
    </div>
  );
}

export default function ExchangeAll({ locale, messages, ...rest }: TProps) {
  return (
    <IslandRoot locale={locale} messages={messages}>
      <ExchangeAllBody locale={locale} {...rest} />
    </IslandRoot>
  );
}
