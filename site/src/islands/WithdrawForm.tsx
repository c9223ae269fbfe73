import { useEffect, useState, type FormEvent } from 'react';
import { useTranslation } from 'react-i18next';
import type { TFactorFields, TPaymentField, TWithdrawal } from '@obmen/shared';
import { displayAmount } from '@obmen/shared/format';
import { api } from '../lib/api.ts';
import { CALLS } from '@obmen/shared/calls';
import { useMoneyForm } from '../lib/use-money-form.ts';
import { FieldNote, FormError } from './FormParts.tsx';
import { IslandRoot, type TIslandProps } from './IslandRoot.tsx';
import { WithdrawStatus } from './WithdrawStatus.tsx';
import { PasskeyProofButton } from './PasskeyParts.tsx';

type TProps = TIslandProps & {
  ps: string;
  currency: string;
  fields: TPaymentField[];
  /** The second factor's parts the form shows (shared's factorFields). */
  factor: TFactorFields;
  available: string;
  /** A crypto system's network and an example address of it. */
  network?: { name: string; example: string } | undefined;
};

type TCheck = {
  ok: boolean;
  fee: string | null;
  receive: string | null;
  fields: Record<string, string>;
  limits: { currency: string; left_24h: string; left_30d: string };
};

const AUTOCOMPLETE: Record<TPaymentField, string> = {
  card_number: 'off',
  card_holder: 'off',
  iban: 'off',
  account_holder: 'off',
  address: 'off',
  memo: 'off',
};

/** /withdraw/form/{id}/{currency}: the amount and the system's fields, checked as typed; one request per submitted form. */
function WithdrawFormBody({ ps, currency, fields, factor, available, network, locale }: Omit<TProps, 'messages'>) {
  const { t } = useTranslation();
  const names: Array<'amount' | 'code' | TPaymentField> = ['amount', ...fields, ...(factor.code ? (['code'] as const) : [])];
  const [values, setValues] = useState<Record<string, string>>(Object.fromEntries(names.map((name) => [name, ''])));
  const { errors, formError, busy, formRef, submit, edit, hydrated, setFormError } = useMoneyForm(names);
  const [check, setCheck] = useState<TCheck | null>(null);
  const [placed, setPlaced] = useState<TWithdrawal | null>(null);

  const formBody = () => {
    const body: Record<string, string> = { currency };
    for (const name of names) if (values[name]?.trim()) body[name] = values[name]!.trim();
    return body;
  };

  // Checked as typed (debounced): fee, what arrives, limits, field messages.
  useEffect(() => {
    if (!values.amount?.trim()) {
      setCheck(null);
      return;
    }
    const controller = new AbortController();
    const timer = setTimeout(() => {
      const { code: _code, ...body } = formBody();
      api(CALLS['POST /api/withdraw/check'], { body: { ...body, ps }, signal: controller.signal })
        .then(setCheck)
        .catch(() => undefined);
    }, 400);
    return () => {
      clearTimeout(timer);
      controller.abort();
    };
  }, [values]);

  function set(name: string, value: string) {
    setValues((current) => ({ ...current, [name]: value }));
    edit(name);
  }

  async function send(proof: { passkey?: string } = {}) {
    const body = proof.passkey ? { ...formBody(), code: undefined, ...proof } : formBody();
    const answer = await submit((idempotencyKey) => api(CALLS['POST /api/withdraw/form/{id}'], { params: { id: ps }, body, idempotencyKey }));
    if (answer) setPlaced(answer.withdrawal);
  }

  async function onSubmit(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    await send();
  }

  if (placed) return <WithdrawStatus withdrawal={placed} locale={locale} placed />;

  // The check's messages for what the user typed; an empty field is named only when sent.
  const shownError = (name: string) => errors[name] || (check && !check.ok && values[name]?.trim() ? check.fields[name] : '') || '';
  return (
    <form method="post" className="xf wf" noValidate onSubmit={onSubmit} ref={formRef} data-testid="withdraw-form">
      <FormError text={formError} testId="form-error" />
      {names.map((name) => {
        const error = shownError(name);
        const id = `wf-${name}`;
        return (
          <label className="field" key={name}>
            <span className="field-label">{t(`withdraw.${name}`)}</span>
            <input
              id={id}
              name={name}
              value={values[name] ?? ''}
              inputMode={name === 'amount' || name === 'code' ? 'decimal' : undefined}
              autoComplete={name === 'code' ? 'one-time-code' : (AUTOCOMPLETE[name as TPaymentField] ?? 'off')}
              onChange={(event) => set(name, event.target.value)}
              aria-invalid={error ? 'true' : undefined}
              aria-describedby={`${id}-note`}
              data-testid={`withdraw-${name}`}
            />
            <FieldNote
              error={error}
              errorId={`${id}-note`}
              testId={`error-${name}`}
              hint={
                name === 'amount'
                  ? t('withdraw.available', { amount: displayAmount(available, locale), currency })
                  : name === 'code'
                    ? t('withdraw.code_hint')
                    : name === 'address' && network
                      ? t('withdraw.address_hint', { network: network.name, example: network.example })
                      : ''
              }
              hintId={`${id}-note`}
            />
          </label>
        );
      })}
      {check?.fee != null && (
        <dl className="xf-terms" data-testid="withdraw-terms">
          <div>
            <dt>{t('withdraw.fee')}</dt>
            <dd data-testid="withdraw-fee">
              {displayAmount(check.fee, locale)} {currency}
            </dd>
          </div>
          <div>
            <dt>{t('withdraw.receive')}</dt>
            <dd data-testid="withdraw-receive">
              {displayAmount(check.receive ?? '0', locale)} {currency}
            </dd>
          </div>
        </dl>
      )}
      <div className="wf-actions">
        <button className="btn btn-primary" type="submit" disabled={busy || !hydrated} data-testid="withdraw-submit">
          {busy ? t('withdraw.checking') : t('withdraw.submit')}
        </button>
        {factor.passkey && <PasskeyProofButton onProof={(passkey) => send({ passkey })} onError={setFormError} disabled={busy} testId="withdraw-passkey" />}
      </div>
    </form>
  );
}

export default function WithdrawForm({ locale, messages, timeZone, ...props }: TProps) {
  return (
    <IslandRoot locale={locale} messages={messages} timeZone={timeZone}>
      <WithdrawFormBody locale={locale} {...props} />
    </IslandRoot>
  );
}
