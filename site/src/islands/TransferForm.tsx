import { useEffect, useMemo, useState, type ChangeEvent, type FormEvent } from 'react';
import { useTranslation } from 'react-i18next';
import { useStore } from '@nanostores/react';
import type { TTransferCheck, TTransferCurrency } from '@obmen/shared';
import { factorFields } from '@obmen/shared/passkeys';
import { api, ApiError, isOutcomeUnknown } from '../lib/api.ts';
import { CALLS } from '@obmen/shared/calls';
import { useMoneyForm } from '../lib/use-money-form.ts';
import { displayAmount, inputAmount, isZeroAmount } from '@obmen/shared/format';
import { $wallets } from '../stores/wallets.ts';
import { FieldNote, FormError } from './FormParts.tsx';
import { IslandRoot, type TIslandProps } from './IslandRoot.tsx';
import {
  COMMENT_MAX,
  FIELDS,
  TransferCheck,
  TransferResult,
  transferFeeText,
  transferFormErrors,
  type TField,
  type TTransferResult,
  type TValues,
} from './TransferParts.tsx';

/** The fields a refusal may name and the form shows: its own, and the code of a checked transfer when TOTP is on (else the refusal goes above the form). */
const formFields = (check: TTransferCheck | null): string[] => [...FIELDS, ...(check && factorFields(check).code ? ['code'] : [])];

/** A refusal of the second factor keeps the checked transfer on screen, to try again. */
const factorRefused = (err: unknown) => err instanceof ApiError && (err.code.startsWith('second_factor') || err.code === 'passkey_invalid');

type TProps = TIslandProps & {
  currencies: TTransferCurrency[];
  initialCurrency?: string;
  initialAccount?: string;
};

/** /transfer: check (recipient's masked name, fee, total), then send once per checked form. */
function TransferFormBody({ currencies, initialCurrency, initialAccount = '', locale }: Omit<TProps, 'messages'>) {
  const { t } = useTranslation();
  const wallets = useStore($wallets);
  const firstCurrency = currencies.find((c) => c.code === initialCurrency) ?? currencies.find((c) => !isZeroAmount(c.balance)) ?? currencies[0];
  const [values, setValues] = useState<TValues>({ account_id: initialAccount, currency: firstCurrency?.code ?? '', amount: '', comment: '' });
  // The key is made on a checked form's first Send, kept for a retry of it, dropped on any edit.
  const [check, setCheck] = useState<TTransferCheck | null>(null);
  const fields = useMemo(() => formFields(check), [check]);
  const { errors, formError, busy, formRef, submit, edit: editField, renewKey, showErrors, hydrated, setFormError } = useMoneyForm(fields);
  const [code, setCode] = useState('');
  const [phase, setPhase] = useState<'check' | 'send'>('check');
  const [result, setResult] = useState<TTransferResult | null>(null);

  // Typed before the island woke up (a slow phone): take what the fields hold.
  useEffect(() => {
    const form = formRef.current;
    if (!form) return;
    const typed: Partial<TValues> = {};
    for (const field of FIELDS) {
      const element = form.elements.namedItem(field) as HTMLInputElement | HTMLSelectElement | null;
      if (element && element.value !== values[field]) typed[field] = element.value;
    }
    if (Object.keys(typed).length) setValues((current) => ({ ...current, ...typed }));
  }, []);

  const currency = currencies.find((c) => c.code === values.currency) ?? firstCurrency;
  const balanceOf = (code: string) => wallets.find((wallet) => wallet.currency === code)?.balance ?? currencies.find((c) => c.code === code)?.balance ?? '0';

  function set(field: TField, value: string) {
    setValues((current) => ({ ...current, [field]: value }));
    editField(field);
    setCheck(null);
  }

  /** What each field's control takes: name, value and change, and its error state (described by `note`). */
  const control = (field: TField, note = errors[field] ? `tf-${field}-error` : undefined) => ({
    name: field,
    value: values[field],
    onChange: (event: ChangeEvent<HTMLInputElement | HTMLSelectElement>) => set(field, event.target.value),
    'aria-invalid': errors[field] ? ('true' as const) : undefined,
    'aria-describedby': note,
  });

  /** Back from the check to the form: the checked operation is dropped. */
  function edit() {
    setCheck(null);
    renewKey();
    requestAnimationFrame(() => document.getElementById('tf-amount')?.focus());
  }

  const body = () => ({
    account_id: values.account_id.replace(/[\s-]/g, ''),
    currency: values.currency,
    amount: values.amount.trim(),
    comment: values.comment.trim(),
  });

  async function onCheck(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    if (busy) return;
    const found = transferFormErrors(values, t);
    showErrors(found);
    if (Object.keys(found).length) return;
    setPhase('check');
    const answer = await submit(() => api(CALLS['POST /api/transfer/check'], { body: body() }), { scope: 'check' });
    if (answer) setCheck(answer);
  }

  async function onSend(proof: { passkey?: string } = {}) {
    if (!check) return;
    setPhase('send');
    const factor = check.second_factor ? (proof.passkey ? proof : { code: code.trim() }) : {};
    const answer = await submit(async (idempotencyKey) => {
      try {
        return await api(CALLS['POST /api/transfer'], { body: { ...body(), ...factor }, idempotencyKey });
      } catch (err) {
        // A final refusal ends this checked operation; an unknown outcome keeps it to send again.
        if (!isOutcomeUnknown(err) && !factorRefused(err)) setCheck(null);
        throw err;
      }
    });
    setCode('');
    if (answer) setResult(answer);
  }

  function again() {
    setResult(null);
    setCheck(null);
    setValues((current) => ({ ...current, amount: '', comment: '' }));
    requestAnimationFrame(() => document.getElementById('tf-amount')?.focus());
  }

  if (result) return <TransferResult result={result} locale={locale} onAgain={again} />;

  const balance = currency ? balanceOf(currency.code) : '0';
  const feeText = currency ? transferFeeText(currency, locale, t('transferpage.no_fee')) : '';

  return (
    <form method="post" className="xf tf" noValidate onSubmit={onCheck} ref={formRef} data-testid="transfer-form">
      <FormError text={formError} testId="form-error" />
      <label className="field">
        <span className="field-label">{t('transferpage.account_id')}</span>
        <input
          {...control('account_id', 'tf-account-note')}
          inputMode="numeric"
          autoComplete="off"
          maxLength={10}
          placeholder="12345678"
          data-testid="transfer-account"
        />
        <FieldNote
          error={errors.account_id}
          errorId="tf-account-note"
          testId="error-account_id"
          hint={t('transferpage.account_hint')}
          hintId="tf-account-note"
        />
      </label>

      <div className="tf-pair">
        <label className="field">
          <span className="field-label">{t('transferpage.currency')}</span>
          <select {...control('currency')} data-testid="transfer-currency">
            {currencies.map((c) => (
              <option key={c.code} value={c.code}>
                {c.code} — {displayAmount(balanceOf(c.code), locale)}
              </option>
            ))}
          </select>
          <FieldNote error={errors.currency} errorId="tf-currency-error" testId="error-currency" />
        </label>
        <div className="field">
          <span className="tf-amount-label">
            <label className="field-label" htmlFor="tf-amount">
              {t('transferpage.amount')}
            </label>
            {!isZeroAmount(balance) && (
              <button type="button" className="xf-balance" onClick={() => set('amount', inputAmount(balance, locale))} data-testid="transfer-max">
                {t('transferpage.max')}
              </button>
            )}
          </span>
          <input
            id="tf-amount"
            {...control('amount', errors.amount ? 'tf-amount-error tf-terms' : 'tf-terms')}
            inputMode="decimal"
            autoComplete="off"
            placeholder="0.00"
            data-testid="transfer-amount"
          />
          <FieldNote error={errors.amount} errorId="tf-amount-error" testId="error-amount" />
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
        <input {...control('comment')} maxLength={COMMENT_MAX} autoComplete="off" data-testid="transfer-comment" />
        <FieldNote error={errors.comment} errorId="tf-comment-error" testId="error-comment" />
      </label>

      {check ? (
        <TransferCheck
          check={check}
          locale={locale}
          busy={busy ? phase : null}
          onSend={() => onSend()}
          onEdit={edit}
          factor={{
            code,
            error: errors.code || errors.passkey || '',
            onCode: setCode,
            onPasskey: (passkey) => onSend({ passkey }),
            onError: setFormError,
          }}
        />
      ) : (
        <button type="submit" className="btn btn-primary xf-submit" disabled={busy || !hydrated} data-testid="transfer-check-button">
          {busy ? t('transferpage.checking') : t('transferpage.check')}
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
