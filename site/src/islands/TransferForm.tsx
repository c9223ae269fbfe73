import { useEffect, useRef, useState, type FormEvent } from 'react';
import { useTranslation } from 'react-i18next';
import { useStore } from '@nanostores/react';
import type { TTransferCheck, TTransferCurrency, TTransferRecord } from '@obmen/shared';
import { api, ApiError, isOutcomeUnknown } from '../lib/api.ts';
import { fieldErrors } from '../lib/field-errors.ts';
import { focusFirstInvalid, focusWhenShown } from '../lib/focus.ts';
import { stripTrailingZeros } from '@obmen/shared/money';
import { displayAmount, displayPercent, isAmountText, isZeroAmount } from '@obmen/shared/format';
import { $wallets } from '../stores/wallets.ts';
import { IslandRoot, type TIslandProps } from './IslandRoot.tsx';

type TProps = TIslandProps & {
  currencies: TTransferCurrency[];
  initialCurrency?: string;
  initialAccount?: string;
};

type TField = 'account_id' | 'currency' | 'amount' | 'comment';
type TValues = Record<TField, string>;
type TResult = { message: string; transfer: TTransferRecord };

const ACCOUNT_TEXT = /^\d{8}$/;
const COMMENT_MAX = 140;

/** /transfer: check (recipient's masked name, fee, total), then send once per checked form. */
function TransferFormBody({ currencies, initialCurrency, initialAccount = '', locale }: Omit<TProps, 'messages'>) {
  const { t } = useTranslation();
  const wallets = useStore($wallets);
  const firstCurrency = currencies.find((c) => c.code === initialCurrency) ?? currencies.find((c) => !isZeroAmount(c.balance)) ?? currencies[0];
  const [values, setValues] = useState<TValues>({ account_id: initialAccount, currency: firstCurrency?.code ?? '', amount: '', comment: '' });
  const [errors, setErrors] = useState<Partial<Record<TField, string>>>({});
  const [formError, setFormError] = useState('');
  const [check, setCheck] = useState<TTransferCheck | null>(null);
  const [busy, setBusy] = useState<'check' | 'send' | null>(null);
  const [result, setResult] = useState<TResult | null>(null);
  const busyRef = useRef(false);
  /** Created when a form is checked, used by its Send (and a network retry of it), dropped on any edit. */
  const keyRef = useRef<string | null>(null);

  // Typed before the island woke up (a slow phone): take what the fields hold.
  const formRef = useRef<HTMLFormElement>(null);
  // After a check, a send or "edit": focus moves to what replaced the button pressed.
  const checkRef = useRef<HTMLDivElement>(null);
  const resultRef = useRef<HTMLHeadingElement>(null);
  useEffect(() => focusWhenShown(checkRef.current), [check]);
  useEffect(() => focusWhenShown(resultRef.current), [result]);
  useEffect(() => {
    const form = formRef.current;
    if (!form) return;
    const typed: Partial<TValues> = {};
    for (const field of ['account_id', 'currency', 'amount', 'comment'] as const) {
      const element = form.elements.namedItem(field) as HTMLInputElement | HTMLSelectElement | null;
      if (element && element.value !== values[field]) typed[field] = element.value;
    }
    if (Object.keys(typed).length) setValues((current) => ({ ...current, ...typed }));
  }, []);

  const currency = currencies.find((c) => c.code === values.currency) ?? firstCurrency;
  const balanceOf = (code: string) => wallets.find((wallet) => wallet.currency === code)?.balance ?? currencies.find((c) => c.code === code)?.balance ?? '0';

  function set(field: TField, value: string) {
    setValues((current) => ({ ...current, [field]: value }));
    setErrors((current) => ({ ...current, [field]: undefined }));
    setFormError('');
    setCheck(null);
    keyRef.current = null;
  }

  function localErrors(): Partial<Record<TField, string>> {
    const found: Partial<Record<TField, string>> = {};
    const account = values.account_id.replace(/[\s-]/g, '');
    if (!account) found.account_id = t('validation.required');
    else if (!ACCOUNT_TEXT.test(account)) found.account_id = t('money.account_id_invalid');
    if (!values.amount.trim()) found.amount = t('validation.required');
    else if (!isAmountText(values.amount.trim())) found.amount = t('money.amount_invalid');
    if (values.comment.trim().length > COMMENT_MAX) found.comment = t('validation.too_long');
    return found;
  }

  const body = () => ({
    account_id: values.account_id.replace(/[\s-]/g, ''),
    currency: values.currency,
    amount: values.amount.trim(),
    comment: values.comment.trim(),
  });

  function showError(err: unknown) {
    if (err instanceof ApiError) {
      setErrors(fieldErrors(err) as Partial<Record<TField, string>>);
      focusFirstInvalid(formRef.current);
      const named = Object.keys(err.fields).some((field) => ['account_id', 'currency', 'amount', 'comment'].includes(field));
      if (!named) setFormError(err.message);
    } else setFormError(t('error.generic'));
  }

  async function onCheck(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    if (busyRef.current) return;
    const found = localErrors();
    if (Object.keys(found).length) {
      setErrors(found);
      focusFirstInvalid(formRef.current);
      return;
    }
    busyRef.current = true;
    setBusy('check');
    setErrors({});
    setFormError('');
    try {
      const answer = await api<TTransferCheck>('/transfer/check', { form: body() });
      setCheck(answer);
      keyRef.current = crypto.randomUUID();
    } catch (err) {
      showError(err);
    } finally {
      busyRef.current = false;
      setBusy(null);
    }
  }

  async function onSend() {
    if (busyRef.current || !check || !keyRef.current) return;
    busyRef.current = true;
    setBusy('send');
    setFormError('');
    try {
      const answer = await api<TResult>('/transfer', { form: body(), idempotencyKey: keyRef.current });
      keyRef.current = null;
      setResult(answer);
    } catch (err) {
      // An unknown outcome (lost answer, 502/503/504) keeps the key: sending again replays the first attempt.
      if (!isOutcomeUnknown(err)) {
        keyRef.current = null;
        setCheck(null);
      }
      showError(err);
    } finally {
      busyRef.current = false;
      setBusy(null);
    }
  }

  function again() {
    setResult(null);
    setCheck(null);
    setValues((current) => ({ ...current, amount: '', comment: '' }));
    requestAnimationFrame(() => document.getElementById('tf-amount')?.focus());
  }

  if (result) {
    const { transfer } = result;
    return (
      <div className="xf-result" role="status" data-testid="transfer-result">
        <div className="xf-result-icon" aria-hidden="true">
          ✓
        </div>
        <h2 tabIndex={-1} ref={resultRef}>
          {t('transferpage.done_title')}
        </h2>
        <p className="xf-result-message" data-testid="transfer-result-message">
          {result.message}
        </p>
        <dl className="xf-terms">
          <div>
            <dt>{t('transferpage.recipient')}</dt>
            <dd>
              {transfer.name} · {transfer.account_id}
            </dd>
          </div>
          <div>
            <dt>{t('transferpage.amount')}</dt>
            <dd>
              {displayAmount(transfer.amount, locale)} {transfer.currency}
            </dd>
          </div>
          <div>
            <dt>{t('transferpage.fee')}</dt>
            <dd>
              {displayAmount(transfer.fee, locale)} {transfer.currency}
            </dd>
          </div>
        </dl>
        <div className="xf-actions">
          <button type="button" className="btn btn-primary" onClick={again} data-testid="transfer-again">
            {t('transferpage.again')}
          </button>
          <a className="btn btn-outline" href="/history/transfer">
            {t('transferpage.to_history')}
          </a>
        </div>
      </div>
    );
  }

  const balance = currency ? balanceOf(currency.code) : '0';
  const feeText = currency
    ? [
        isZeroAmount(currency.fee_percent) ? '' : `${displayPercent(currency.fee_percent, locale)}%`,
        isZeroAmount(currency.fee_fixed) ? '' : `${displayAmount(currency.fee_fixed, locale)} ${currency.code}`,
      ]
        .filter(Boolean)
        .join(' + ') || t('transferpage.no_fee')
    : '';

  return (
    <form className="xf tf" noValidate onSubmit={onCheck} ref={formRef} data-testid="transfer-form">
      {formError && (
        <p className="form-error" role="alert" data-testid="form-error">
          {formError}
        </p>
      )}
      <label className="field">
        <span className="field-label">{t('transferpage.account_id')}</span>
        <input
          name="account_id"
          inputMode="numeric"
          autoComplete="off"
          maxLength={10}
          placeholder="12345678"
          value={values.account_id}
          onChange={(event) => set('account_id', event.target.value)}
          aria-invalid={errors.account_id ? 'true' : undefined}
          aria-describedby="tf-account-note"
          data-testid="transfer-account"
        />
        {errors.account_id ? (
          <span className="field-error" id="tf-account-note" role="alert" data-testid="error-account_id">
            {errors.account_id}
          </span>
        ) : (
          <span className="field-hint" id="tf-account-note">
            {t('transferpage.account_hint')}
          </span>
        )}
      </label>

      <div className="tf-pair">
        <label className="field">
          <span className="field-label">{t('transferpage.currency')}</span>
          <select
            name="currency"
            value={values.currency}
            onChange={(event) => set('currency', event.target.value)}
            aria-invalid={errors.currency ? 'true' : undefined}
            aria-describedby={errors.currency ? 'tf-currency-error' : undefined}
            data-testid="transfer-currency"
          >
            {currencies.map((c) => (
              <option key={c.code} value={c.code}>
                {c.code} — {displayAmount(balanceOf(c.code), locale)}
              </option>
            ))}
          </select>
          {errors.currency && (
            <span className="field-error" id="tf-currency-error" role="alert" data-testid="error-currency">
              {errors.currency}
            </span>
          )}
        </label>
        <div className="field">
          <span className="tf-amount-label">
            <label className="field-label" htmlFor="tf-amount">
              {t('transferpage.amount')}
            </label>
            {!isZeroAmount(balance) && (
              <button type="button" className="xf-balance" onClick={() => set('amount', stripTrailingZeros(balance))} data-testid="transfer-max">
                {t('transferpage.max')}
              </button>
            )}
          </span>
          <input
            id="tf-amount"
            name="amount"
            inputMode="decimal"
            autoComplete="off"
            placeholder="0.00"
            value={values.amount}
            onChange={(event) => set('amount', event.target.value)}
            aria-invalid={errors.amount ? 'true' : undefined}
            aria-describedby={errors.amount ? 'tf-amount-error tf-terms' : 'tf-terms'}
            data-testid="transfer-amount"
          />
          {errors.amount && (
            <span className="field-error" id="tf-amount-error" role="alert" data-testid="error-amount">
              {errors.amount}
            </span>
          )}
        </div>
      </div>
      {currency && (
        <p className="field-hint tf-terms" id="tf-terms" data-testid="transfer-terms">
          {t('transferpage.terms', {
            balance: displayAmount(balance, locale),
            currency: currency.code,
            min: displayAmount(currency.min, locale),
            fee: feeText,
          })}
          {currency.max && ` ${t('transferpage.terms_max', { max: displayAmount(currency.max, locale), currency: currency.code })}`}
        </p>
      )}

      <label className="field">
        <span className="field-label">
          {t('transferpage.comment')} <span className="tf-optional">{t('transferpage.optional')}</span>
        </span>
        <input
          name="comment"
          maxLength={COMMENT_MAX}
          autoComplete="off"
          value={values.comment}
          onChange={(event) => set('comment', event.target.value)}
          aria-invalid={errors.comment ? 'true' : undefined}
          aria-describedby={errors.comment ? 'tf-comment-error' : undefined}
          data-testid="transfer-comment"
        />
        {errors.comment && (
          <span className="field-error" id="tf-comment-error" role="alert" data-testid="error-comment">
            {errors.comment}
          </span>
        )}
      </label>

      {check ? (
        <div className="tf-check" tabIndex={-1} ref={checkRef} aria-label={t('transferpage.check_group')} role="group" data-testid="transfer-check">
          <dl className="xf-terms">
            <div>
              <dt>{t('transferpage.recipient')}</dt>
              <dd data-testid="transfer-recipient">
                {check.recipient.name} · {check.recipient.account_id}
              </dd>
            </div>
            <div>
              <dt>{t('transferpage.amount')}</dt>
              <dd>
                {displayAmount(check.amount, locale)} {check.currency}
              </dd>
            </div>
            <div>
              <dt>{t('transferpage.fee')}</dt>
              <dd data-testid="transfer-fee">
                {displayAmount(check.fee, locale)} {check.currency}
              </dd>
            </div>
            <div className="xf-strong">
              <dt>{t('transferpage.total')}</dt>
              <dd data-testid="transfer-total">
                {displayAmount(check.total, locale)} {check.currency}
              </dd>
            </div>
          </dl>
          <div className="xf-actions">
            <button type="button" className="btn btn-primary xf-submit" onClick={onSend} disabled={busy !== null} data-testid="transfer-send">
              {busy === 'send' ? t('transferpage.sending') : t('transferpage.send', { amount: displayAmount(check.total, locale), currency: check.currency })}
            </button>
            <button
              type="button"
              className="btn btn-ghost"
              onClick={() => {
                setCheck(null);
                keyRef.current = null;
                requestAnimationFrame(() => document.getElementById('tf-amount')?.focus());
              }}
              disabled={busy !== null}
              data-testid="transfer-edit"
            >
              {t('transferpage.edit')}
            </button>
          </div>
        </div>
      ) : (
        <button type="submit" className="btn btn-primary xf-submit" disabled={busy !== null} data-testid="transfer-check-button">
          {busy === 'check' ? t('transferpage.checking') : t('transferpage.check')}
        </button>
      )}
    </form>
  );
}

export default function TransferForm({ locale, messages, ...rest }: TProps) {
  return (
    <IslandRoot locale={locale} messages={messages}>
      <TransferFormBody locale={locale} {...rest} />
    </IslandRoot>
  );
}
