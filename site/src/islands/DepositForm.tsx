import { useState, type FormEvent } from 'react';
import { useTranslation } from 'react-i18next';
import { checkPaymentAmount, type TPaymentSystem } from '@obmen/shared/payments';
import { paymentFormSchema, type TPaymentField } from '@obmen/shared/payment-fields';
import { formatAmount, MoneyFormatError, parseAmount, ZAmountText } from '@obmen/shared/money';
import { displayAmount } from '@obmen/shared/format';
import { api } from '../lib/api.ts';
import { CALLS } from '@obmen/shared/calls';
import { useMoneyForm } from '../lib/use-money-form.ts';
import { FieldNote, FormError } from './FormParts.tsx';
import { issueErrors, messageText } from '../lib/field-errors.ts';
import { IslandRoot, type TIslandProps, useKeyTranslate } from './IslandRoot.tsx';

type TProps = TIslandProps & { system: TPaymentSystem };

/** The currency's decimals, as the system's terms are written (the minimum is given at full precision). */
const precisionOf = (system: TPaymentSystem) => system.min.split('.')[1]?.length ?? 0;

type TAssessed = { error: string; vars: Record<string, string | number> } | { fee: string; receive: string };

/** The amount by the same rules core applies (shared: the text's format, the currency's precision, min/max, the fee). */
function assessAmount(system: TPaymentSystem, text: string): TAssessed {
  const format = ZAmountText.safeParse(text);
  if (!format.success) return { error: format.error.issues[0]?.message ?? 'money.amount_invalid', vars: {} };
  const precision = precisionOf(system);
  try {
    const amount = parseAmount(format.data, precision);
    const terms = {
      feePercent: system.fee_percent,
      feeFixed: parseAmount(system.fee_fixed, precision),
      min: parseAmount(system.min, precision),
      max: parseAmount(system.max, precision),
    };
    const check = checkPaymentAmount(terms, amount);
    if (check.ok) return { fee: formatAmount(check.fee, precision), receive: formatAmount(check.receive, precision) };
    if (check.reason === 'too_small') return { error: 'money.amount_too_small', vars: { min: system.min, currency: system.currency } };
    if (check.reason === 'too_large') return { error: 'money.amount_too_large', vars: { max: system.max, currency: system.currency } };
    return { error: 'payments.field.fee_exceeds_amount', vars: {} };
  } catch (err) {
    if (err instanceof MoneyFormatError) return { error: err.key, vars: err.vars };
    throw err;
  }
}

/**
 * /deposit/form/{id}/{currency} for a card or bank system: the amount (and the system's own
 * fields, through its shared schema), checked as typed; submitted, it opens the deposit and
 * goes where it is paid: the card's hosted page, or the deposit's page with the bank details.
 */
function DepositFormBody({ system, locale }: Omit<TProps, 'messages'>) {
  const { t } = useTranslation();
  const tk = useKeyTranslate();
  const names: Array<'amount' | TPaymentField> = ['amount', ...system.fields];
  const [values, setValues] = useState<Record<string, string>>(Object.fromEntries(names.map((name) => [name, ''])));
  const { errors, formError, busy, formRef, submit, edit, showErrors, hydrated } = useMoneyForm(names);
  const assessed = values.amount?.trim() ? assessAmount(system, values.amount) : null;
  const amountVars = { min: displayAmount(system.min, locale), max: displayAmount(system.max, locale), currency: system.currency };

  function set(name: string, value: string) {
    setValues((current) => ({ ...current, [name]: value }));
    edit(name);
  }

  /** Every field's message as core would give it, or none. */
  function validate(): Record<string, string> {
    const form = paymentFormSchema(system.fields, system.currency).safeParse(values);
    const found = form.success ? {} : issueErrors(tk, form.error.issues);
    const amount = assessAmount(system, values.amount ?? '');
    if ('error' in amount) found.amount = messageText(tk, amount.error, amount.vars);
    return found;
  }

  async function onSubmit(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    if (busy) return;
    const found = validate();
    showErrors(found);
    if (Object.keys(found).length > 0) return;
    const form: Record<string, string> = { ps: system.id, currency: system.currency };
    for (const name of names) if (values[name]?.trim()) form[name] = values[name]!.trim();
    // Opening a deposit moves no money (it is paid on the provider's page): the call takes no key.
    const answer = await submit(() => api(CALLS['POST /api/deposit/integration_json'], { body: form }), { leaving: true });
    if (answer?.payment) window.location.assign(answer.payment.pay_url ?? answer.payment.url);
  }

  const shown = (name: string) => errors[name] || (name === 'amount' && assessed && 'error' in assessed ? messageText(tk, assessed.error, assessed.vars) : '');
  return (
    <form method="post" className="xf wf" noValidate onSubmit={onSubmit} ref={formRef} data-testid="deposit-form">
      <FormError text={formError} testId="form-error" />
      {names.map((name) => {
        const error = shown(name);
        const id = `df-${name}`;
        return (
          <label className="field" key={name}>
            <span className="field-label">{t(name === 'amount' ? 'deposit.amount' : `withdraw.${name}`)}</span>
            <input
              id={id}
              name={name}
              value={values[name] ?? ''}
              inputMode={name === 'amount' ? 'decimal' : undefined}
              autoComplete="off"
              onChange={(event) => set(name, event.target.value)}
              aria-invalid={error ? 'true' : undefined}
              aria-describedby={`${id}-note`}
              data-testid={`deposit-${name}`}
            />
            <FieldNote
              error={error}
              errorId={`${id}-note`}
              testId={`error-${name}`}
              hint={name === 'amount' ? t('deposit.amount_hint', amountVars) : ''}
              hintId={`${id}-note`}
            />
          </label>
        );
      })}
      {assessed && 'fee' in assessed && (
        <dl className="xf-terms" data-testid="deposit-terms">
          <div>
            <dt>{t('deposit.fee')}</dt>
            <dd data-testid="deposit-fee">
              {displayAmount(assessed.fee, locale)} {system.currency}
            </dd>
          </div>
          <div>
            <dt>{t('deposit.receive')}</dt>
            <dd data-testid="deposit-receive">
              {displayAmount(assessed.receive, locale)} {system.currency}
            </dd>
          </div>
        </dl>
      )}
      <button className="btn btn-primary" type="submit" disabled={busy || !hydrated} data-testid="deposit-submit">
        {busy ? t('deposit.sending') : t('deposit.submit')}
      </button>
    </form>
  );
}

export default function DepositForm({ locale, messages, ...props }: TProps) {
  return (
    <IslandRoot locale={locale} messages={messages}>
      <DepositFormBody locale={locale} {...props} />
    </IslandRoot>
  );
}
