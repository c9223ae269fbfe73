import { useEffect, useRef, useState, type FormEvent, type Ref } from 'react';
import { useTranslation } from 'react-i18next';
import { ZSecondFactorCode } from '@obmen/shared/security';
import { api, ApiError } from '../lib/api.ts';
import { CALLS } from '@obmen/shared/calls';
import { FieldNote, FormError, useSingleFieldForm } from './FormParts.tsx';

/** What a sign-in answers when 2FA is on (no session yet). */
export type TSecondFactorAnswer = { second_factor?: { challenge: string; expires_in: number }; message?: string };

/** The code step a sign-in's answer asks for: its challenge and its message ("Password accepted. Enter the code…"). */
export type TCodeStep = { challenge: string; lead: string };

/** The code step an answer asks for, or null when the answer signed in. */
export function codeStepOf(answer: TSecondFactorAnswer): TCodeStep | null {
  return answer.second_factor ? { challenge: answer.second_factor.challenge, lead: answer.message ?? '' } : null;
}

type TProps = {
  step: TCodeStep;
  /** Where to go once signed in. */
  landing: string;
  /** The challenge is spent or expired: back to the first step, with this message. */
  onRestart: (message: string) => void;
};

/** A field for a TOTP or recovery code with its error (and hint): the sign-in's code step and every step of enrolment. */
export function CodeField({
  id,
  value,
  error,
  onChange,
  hint,
  inputRef,
  inputTestId,
  errorTestId,
}: {
  id: string;
  value: string;
  error: string;
  onChange: (value: string) => void;
  hint?: string;
  inputRef?: Ref<HTMLInputElement>;
  inputTestId?: string;
  errorTestId?: string;
}) {
  const { t } = useTranslation();
  return (
    <label className="field">
      <span className="field-label">{t('secondfactor.label')}</span>
      <input
        ref={inputRef}
        name="code"
        type="text"
        inputMode="text"
        autoComplete="one-time-code"
        autoCapitalize="none"
        spellCheck={false}
        value={value}
        onChange={(event) => onChange(event.target.value)}
        aria-invalid={error ? 'true' : undefined}
        aria-describedby={error ? `${id}-error` : hint ? `${id}-hint` : undefined}
        data-testid={inputTestId}
        required
      />
      <FieldNote error={error} errorId={`${id}-error`} testId={errorTestId} hint={hint} hintId={hint ? `${id}-hint` : undefined} />
    </label>
  );
}

/**
 * The code step of a sign-in with two-factor authentication on: a TOTP code or a recovery
 * code. Not an island of its own: the password form, the reset form and the link sign-in
 * show it when their answer carries `second_factor`.
 */
export function SecondFactorStep({ step: { challenge, lead }, landing, onRestart }: TProps) {
  const { t } = useTranslation();
  const [code, setCode] = useState('');
  const { error, formError, sending, formRef, submit } = useSingleFieldForm('code');
  const inputRef = useRef<HTMLInputElement>(null);
  useEffect(() => inputRef.current?.focus(), []);

  async function onSubmit(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    const outcome = await submit(ZSecondFactorCode, code, async (parsed) => {
      try {
        await api(CALLS['POST /api/auth/login_second_factor'], { body: { challenge, code: parsed } });
      } catch (err) {
        // The challenge is spent or expired: the sign-in starts again, with the answer's message.
        if (err instanceof ApiError && err.code === 'challenge_invalid') return onRestart(err.message);
        throw err;
      }
      window.location.assign(landing);
    });
    if (outcome === 'refused') setCode('');
  }

  return (
    <form className="auth-form" method="post" noValidate onSubmit={onSubmit} ref={formRef} data-testid="form-second-factor">
      <p className="form-lead" role="status">
        {lead}
      </p>
      <FormError text={formError} testId="form-error" />
      <CodeField id="second-factor" value={code} error={error} onChange={setCode} hint={t('secondfactor.hint')} inputRef={inputRef} errorTestId="error-code" />
      <button className="btn btn-primary submit" type="submit" disabled={sending}>
        {sending ? t('authpage.sending') : t('secondfactor.submit')}
      </button>
    </form>
  );
}
