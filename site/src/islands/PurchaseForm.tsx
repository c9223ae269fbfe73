import { useEffect, useState, type FormEvent } from 'react';
import { useTranslation } from 'react-i18next';
import type { TPurchaseCheckQuote } from '@obmen/shared';
import { displayAmount, displayMoney, displayPairRate } from '@obmen/shared/format';
import { api, ApiError } from '../lib/api.ts';
import { CALLS } from '@obmen/shared/calls';
import { fieldErrors } from '../lib/field-errors.ts';
import { useMoneyForm } from '../lib/use-money-form.ts';
import { AmountInput, FieldNote, FormError } from './FormParts.tsx';
import { IslandRoot, type TIslandProps } from './IslandRoot.tsx';

/** One currency the system charges in, with its range (major units). */
export type TPurchaseOption = { currency: string; min: string; max: string };

type TProps = TIslandProps & { ps: string; buy: string; options: TPurchaseOption[]; initialCurrency: string };

const FIELDS = ['amount', 'currency'];

type TCheck = { ok: boolean; fee: string | null; receive: string | null; fields: Record<string, string>; quote: TPurchaseCheckQuote | null };

/**
 * /purchase/form/{id}/{x}: the currency to pay in and the amount, quoted as typed (POST
 * /api/purchase/check: the system's fee, the rate, what arrives); Submit locks the quote
 * (POST /api/purchase/integration_json) and goes to the hosted card page.
 */
function PurchaseFormBody({ ps, buy, options, initialCurrency, locale }: Omit<TProps, 'messages'>) {
  const { t } = useTranslation();
  const [currency, setCurrency] = useState(initialCurrency);
  const [amount, setAmount] = useState('');
  const [check, setCheck] = useState<TCheck | null>(null);
  const [checking, setChecking] = useState(false);
  const { errors, formError, busy, formRef, submit, edit, hydrated } = useMoneyForm(FIELDS);
  const option = options.find((entry) => entry.currency === currency) ?? options[0]!;

  useEffect(() => {
    if (!amount.trim()) {
      setCheck(null);
      return;
    }
    const controller = new AbortController();
    setChecking(true);
    const timer = setTimeout(() => {
      api(CALLS['POST /api/{x}/check'], { params: { x: 'purchase' }, body: { ps, currency, buy, amount: amount.trim() }, signal: controller.signal })
        .then((answer) => {
          setCheck(answer);
          setChecking(false);
        })
        .catch((err: unknown) => {
          if (controller.signal.aborted) return;
          setChecking(false);
          setCheck(err instanceof ApiError ? { ok: false, fee: null, receive: null, fields: fieldErrors(err), quote: null } : null);
        });
    }, 400);
    return () => {
      clearTimeout(timer);
      controller.abort();
    };
  }, [amount, currency]);

  async function onSubmit(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    // Opening a purchase moves no money (it is paid on the card's page): the call takes no key.
    const answer = await submit(() => api(CALLS['POST /api/purchase/integration_json'], { body: { ps, currency, buy, amount: amount.trim() } }), {
      leaving: true,
    });
    if (answer) window.location.assign(answer.payment.pay_url ?? answer.payment.url);
  }

  const amountError =
    errors.amount || (check && !check.ok && amount.trim() ? (check.fields.amount ?? check.fields._ ?? Object.values(check.fields)[0]) : '') || '';
  const quoteState = !amount.trim() ? 'idle' : checking ? 'loading' : check?.ok ? 'ready' : 'error';
  return (
    <form method="post" className="xf wf" noValidate onSubmit={onSubmit} ref={formRef} data-testid="purchase-form">
      <FormError text={formError} testId="form-error" />
      {options.length > 1 && (
        <label className="field">
          <span className="field-label">{t('purchase.pay_currency')}</span>
          <select
            name="currency"
            value={currency}
            onChange={(event) => {
              setCurrency(event.target.value);
              // The amount's message was about the other currency's range.
              edit('amount');
            }}
            data-testid="purchase-currency"
          >
            {options.map((entry) => (
              <option key={entry.currency} value={entry.currency}>
                {entry.currency}
              </option>
            ))}
          </select>
        </label>
      )}
      <label className="field">
        <span className="field-label">
          {t('purchase.amount')}, {option.currency}
        </span>
        <AmountInput
          id="pf-amount"
          name="amount"
          value={amount}
          onValue={(value) => {
            setAmount(value);
            edit('amount');
          }}
          error={amountError}
          aria-describedby="pf-amount-note"
          data-testid="purchase-amount"
        />
        <FieldNote
          error={amountError}
          errorId="pf-amount-note"
          testId="error-amount"
          hint={t('purchase.range_line', { min: displayAmount(option.min, locale), max: displayAmount(option.max, locale), currency: option.currency })}
          hintId="pf-amount-note"
        />
      </label>
      <div data-testid="purchase-quote" data-state={quoteState} aria-live="polite">
        {check?.ok && check.quote && (
          <dl className="xf-terms">
            <div>
              <dt>{t('purchase.fee')}</dt>
              <dd data-testid="purchase-fee">{displayMoney(check.fee ?? '0', option.currency, locale)}</dd>
            </div>
            <div>
              <dt>{t('purchase.exchanged_amount')}</dt>
              <dd>{displayMoney(check.receive ?? '0', option.currency, locale)}</dd>
            </div>
            <div>
              <dt>{t('purchase.rate')}</dt>
              <dd data-testid="purchase-rate">
                {displayPairRate({ src: option.currency, dst: buy, rate: check.quote.rate, rate_inverse: check.quote.rate_inverse }, locale)}
              </dd>
            </div>
            <div>
              <dt>{t('purchase.receive')}</dt>
              <dd data-testid="purchase-receive">{displayMoney(check.quote.receive, buy, locale)}</dd>
            </div>
          </dl>
        )}
      </div>
      <p className="field-hint">{t('purchase.quote_note')}</p>
      <button className="btn btn-primary" type="submit" disabled={busy || !hydrated} data-testid="purchase-submit">
        {busy ? t('purchase.sending') : t('purchase.submit')}
      </button>
    </form>
  );
}

export default function PurchaseForm({ locale, messages, ...props }: TProps) {
  return (
    <IslandRoot locale={locale} messages={messages}>
      <PurchaseFormBody locale={locale} {...props} />
    </IslandRoot>
  );
}
