import { useEffect, useRef, useState, type FormEvent, type Ref } from 'react';
import { useTranslation } from 'react-i18next';
import { ZPasskeyAnswerText } from '@obmen/shared/passkeys';
import { ZSecondFactorCode } from '@obmen/shared/security';
import { api, ApiError } from '../lib/api.ts';
import { CALLS } from '@obmen/shared/calls';
import { passkeySignInStep } from '../lib/passkey.ts';
import { FieldNote, FormError, useSingleFieldForm } from './FormParts.tsx';
import { PasskeyProofButton } from './PasskeyParts.tsx';

/** What a sign-in answers when 2FA is on (no session yet). */
export type TSecondFactorAnswer = { second_factor?: { challenge: string; expires_in: number; totp: boolean }; message?: string };

/**
 * The second step a sign-in's answer asks for: its challenge, its message ("Password accepted.
 * Enter the code…") and whether a typed code is possible (TOTP on; otherwise a passkey only).
 */
export type TCodeStep = { challenge: string; lead: string; totp: boolean };

/** The second step an answer asks for, or null when the answer signed in. */
export function codeStepOf(answer: TSecondFactorAnswer): TCodeStep | null {
  const step = answer.second_factor;
  return step ? { challenge: step.challenge, lead: answer.message ?? '', totp: step.totp } : null;
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
 * The second step of a sign-in with two-factor authentication on: a TOTP or recovery code (when
 * TOTP is on), or "Confirm with a passkey" by one of the account's passkeys. Not an island of
 * its own: the password form, the reset form and the link sign-in show it when their answer
 * carries `second_factor`.
 */
export function SecondFactorStep({ step: { challenge, lead, totp }, landing, onRestart }: TProps) {
  const { t } = useTranslation();
  const [code, setCode] = useState('');
  const { error, formError, sending, formRef, submit, setFormError } = useSingleFieldForm('code');
  const inputRef = useRef<HTMLInputElement>(null);
  useEffect(() => inputRef.current?.focus(), []);

  async function signIn(proof: { code: string } | { passkey: string }) {
    try {
      await api(CALLS['POST /api/auth/login_second_factor'], { body: { challenge, ...proof } });
    } catch (err) {
      // The challenge is spent or expired: the sign-in starts again, with the answer's message.
      if (err instanceof ApiError && err.code === 'challenge_invalid') return onRestart(err.message);
      throw err;
    }
    window.location.assign(landing);
  }

  async function onSubmit(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    const outcome = await submit(ZSecondFactorCode, code, (parsed) => signIn({ code: parsed }));
    if (outcome === 'refused') setCode('');
  }

  const passkey = (
    <PasskeyProofButton
      onProof={async (proof) => {
        await submit(ZPasskeyAnswerText, proof, (parsed) => signIn({ passkey: parsed ?? '' }));
      }}
      onError={setFormError}
      disabled={sending}
      ask={() => passkeySignInStep(challenge)}
    />
  );
  return (
    <form className="auth-form" method="post" noValidate onSubmit={onSubmit} ref={formRef} data-testid="form-second-factor">
      <p className="form-lead" role="status">
        {lead}
      </p>
      <FormError text={formError} testId="form-error" />
      {totp ? (
        <>
          <CodeField
            id="second-factor"
            value={code}
            error={error}
            onChange={setCode}
            hint={t('secondfactor.hint')}
            inputRef={inputRef}
            errorTestId="error-code"
          />
          <button className="btn btn-primary submit" type="submit" disabled={sending}>
            {sending ? t('authpage.sending') : t('secondfactor.submit')}
          </button>
          {passkey}
        </>
      ) : (
        passkey
      )}
    </form>
  );
}
