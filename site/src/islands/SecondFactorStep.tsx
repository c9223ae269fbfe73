import { useEffect, useRef, useState, type FormEvent } from 'react';
import { useTranslation } from 'react-i18next';
import { ZSecondFactorCode } from '@obmen/shared/security';
import { api, ApiError } from '../lib/api.ts';
import { focusFirstInvalid } from '../lib/focus.ts';
import { FieldNote } from './FormParts.tsx';

/** What a sign-in answers when 2FA is on (no session yet). */
export type TSecondFactorAnswer = { second_factor?: { challenge: string; expires_in: number }; message?: string };

type TProps = {
  challenge: string;
  /** The answer's message ("Password accepted. Enter the code…"). */
  lead: string;
  /** Where to go once signed in. */
  landing: string;
  /** The challenge is spent or expired: back to the first step, with this message. */
  onRestart: (message: string) => void;
};

/**
 * The code step of a sign-in with two-factor authentication on: a TOTP code or a recovery
 * code. Not an island of its own: the password form, the reset form and the link sign-in
 * show it when their answer carries `second_factor`.
 */
export function SecondFactorStep({ challenge, lead, landing, onRestart }: TProps) {
  const { t } = useTranslation();
  const [code, setCode] = useState('');
  const [error, setError] = useState('');
  const [formError, setFormError] = useState('');
  const [sending, setSending] = useState(false);
  const formRef = useRef<HTMLFormElement>(null);
  const inputRef = useRef<HTMLInputElement>(null);
  useEffect(() => inputRef.current?.focus(), []);

  async function onSubmit(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    setFormError('');
    const parsed = ZSecondFactorCode.safeParse(code);
    if (!parsed.success) {
      setError(t(parsed.error.issues[0]?.message ?? 'validation.invalid'));
      focusFirstInvalid(formRef.current);
      return;
    }
    setError('');
    setSending(true);
    try {
      await api('/auth/login_second_factor', { json: { challenge, code: parsed.data } });
      window.location.assign(landing);
      return;
    } catch (err) {
      if (err instanceof ApiError && err.code === 'challenge_invalid') {
        onRestart(err.message);
        return;
      }
      if (err instanceof ApiError) {
        if (err.fields.code) {
          setError(err.fields.code);
          focusFirstInvalid(formRef.current);
        } else setFormError(err.message);
      } else setFormError(t('error.generic'));
      setCode('');
    } finally {
      setSending(false);
    }
  }

  return (
    <form className="auth-form" method="post" noValidate onSubmit={onSubmit} ref={formRef} data-testid="form-second-factor">
      <p className="form-lead" role="status">
        {lead}
      </p>
      {formError && (
        <p className="form-error" role="alert" data-testid="form-error">
          {formError}
        </p>
      )}
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
          value={code}
          onChange={(event) => setCode(event.target.value)}
          aria-invalid={error ? 'true' : undefined}
          aria-describedby={error ? 'second-factor-error' : 'second-factor-hint'}
          required
        />
        <FieldNote error={error} errorId="second-factor-error" testId="error-code" hint={t('secondfactor.hint')} hintId="second-factor-hint" />
      </label>
      <button className="btn btn-primary submit" type="submit" disabled={sending}>
        {sending ? t('authpage.sending') : t('secondfactor.submit')}
      </button>
    </form>
  );
}
