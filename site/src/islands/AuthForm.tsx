import { useEffect, useRef, useState, type FormEvent } from 'react';
import { useTranslation } from 'react-i18next';
import { resolveRedirect } from '@obmen/shared/routes';
import { api, ApiError } from '../lib/api.ts';
import { CALLS, checkInput, type TAnyCall } from '@obmen/shared/calls';
import { focusFirstInvalid, focusWhenShown } from '../lib/focus.ts';
import { FieldNote, FormError } from './FormParts.tsx';
import { useHydrated } from '../lib/use-hydrated.ts';
import { issueErrors } from '../lib/field-errors.ts';
import type { TI18nKey } from '@obmen/shared';
import { IslandRoot, type TIslandProps, useKeyTranslate } from './IslandRoot.tsx';
import { codeStepOf, SecondFactorStep, type TCodeStep } from './SecondFactorStep.tsx';
import { PasskeyCancelled, passkeysSupported, signInWithPasskey } from '../lib/passkey.ts';
import { passkeyFailureText } from './PasskeyParts.tsx';

type TField = 'email' | 'password' | 'current_password';

/** One island for every account form: what differs is the fields, the call (its body schema checks the form) and the ending. */
const FORMS = {
  login_password: {
    fields: ['email', 'password'],
    call: CALLS['POST /api/auth/login_by_password'],
    submit: 'authpage.submit_login',
    signsIn: true,
  },
  login_email: { fields: ['email'], call: CALLS['POST /api/auth/login'], submit: 'authpage.submit_link', signsIn: false },
  signup: { fields: ['email', 'password'], call: CALLS['POST /api/auth/register'], submit: 'authpage.submit_signup', signsIn: false },
  forgot: { fields: ['email'], call: CALLS['POST /api/auth/reset'], submit: 'authpage.submit_forgot', signsIn: false },
  reset: { fields: ['password'], call: CALLS['POST /api/auth/reset/{token}'], submit: 'authpage.submit_save', signsIn: true },
  change: { fields: ['current_password', 'password'], call: CALLS['POST /api/auth/change'], submit: 'authpage.submit_save', signsIn: true },
  set_password: { fields: ['password'], call: CALLS['POST /api/auth/change'], submit: 'authpage.submit_save', signsIn: true },
} satisfies Record<string, { fields: TField[]; call: TAnyCall; submit: TI18nKey; signsIn: boolean }>;

export type TAuthFormKind = keyof typeof FORMS;

type TProps = TIslandProps & { kind: TAuthFormKind; token?: string; next?: string };

const LABELS: Record<TField, TI18nKey> = { email: 'authpage.email', password: 'authpage.password', current_password: 'authpage.current_password' };
const AUTOCOMPLETE: Record<TField, string> = { email: 'email', password: 'new-password', current_password: 'current-password' };

function AuthFormBody({ kind, token, next }: Omit<TProps, 'locale' | 'messages'>) {
  const { t } = useTranslation();
  const tk = useKeyTranslate();
  const form = FORMS[kind];
  const [values, setValues] = useState<Record<string, string>>({});
  const [errors, setErrors] = useState<Record<string, string>>({});
  const [formError, setFormError] = useState('');
  const [done, setDone] = useState('');
  const [sending, setSending] = useState(false);
  // Two-factor on: the answer's challenge and message; the code step replaces the form.
  const [codeStep, setCodeStep] = useState<TCodeStep | null>(null);
  // Until React has taken over, a submit would be a native one: the button waits for hydration.
  const hydrated = useHydrated();
  const formRef = useRef<HTMLFormElement>(null);
  useEffect(() => {
    // Typed before the island woke up (a slow phone): take what the fields hold.
    const typed: Record<string, string> = {};
    for (const field of form.fields) {
      const input = formRef.current?.elements.namedItem(field) as HTMLInputElement | null;
      if (input?.value) typed[field] = input.value;
    }
    if (Object.keys(typed).length) setValues((current) => ({ ...current, ...typed }));
  }, []);
  const doneRef = useRef<HTMLParagraphElement>(null);
  useEffect(() => focusWhenShown(doneRef.current), [done]);
  const signIn = kind === 'login_password' || kind === 'login_email';
  const [passkeyBusy, setPasskeyBusy] = useState(false);
  // Conditional UI: where the browser offers it, the account's passkeys appear among the e-mail
  // field's suggestions; picking one signs in. A cancelled wait (the button below starts its own
  // ceremony) says nothing.
  useEffect(() => {
    if (!signIn || !passkeysSupported()) return;
    signInWithPasskey(true)
      .then(() => window.location.assign(landing))
      .catch((err: unknown) => {
        if (!(err instanceof PasskeyCancelled)) setFormError(passkeyFailureText(err, t));
      });
  }, []);

  async function passkeySignIn() {
    setFormError('');
    setPasskeyBusy(true);
    try {
      await signInWithPasskey(false);
      window.location.assign(landing);
    } catch (err) {
      setFormError(passkeyFailureText(err, t));
      setPasskeyBusy(false);
    }
  }

  async function onSubmit(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    setFormError('');
    const parsed = checkInput(form.call.body, values);
    if (!parsed.success) {
      setErrors(issueErrors(tk, parsed.error.issues));
      focusFirstInvalid(formRef.current);
      return;
    }
    setErrors({});
    setSending(true);
    try {
      const answer = await api(form.call, { params: { token: token ?? '' }, body: parsed.input });
      const step = codeStepOf(answer);
      if (step) {
        setCodeStep(step);
        return;
      }
      if (form.signsIn) {
        window.location.assign(landing);
        return;
      }
      setDone(answer.message ?? '');
    } catch (err) {
      if (err instanceof ApiError) {
        setErrors(err.fields);
        focusFirstInvalid(formRef.current);
        if (!Object.keys(err.fields).length || err.fields._) setFormError(err.message);
      } else setFormError(t('error.generic'));
    } finally {
      setSending(false);
    }
  }

  const landing = (next && resolveRedirect(next)) || '/';
  if (codeStep)
    return (
      <SecondFactorStep
        step={codeStep}
        landing={landing}
        onRestart={(message) => {
          setCodeStep(null);
          setValues(kind === 'reset' ? {} : { email: values.email ?? '' });
          setFormError(message);
          if (kind === 'reset') window.location.assign('/login');
        }}
      />
    );

  if (done)
    return (
      <p className="form-success" role="status" tabIndex={-1} ref={doneRef} data-testid="form-success">
        {done}
      </p>
    );

  const formElement = (
    // method="post": even a native submit never puts a password into a URL.
    <form className="auth-form" method="post" noValidate onSubmit={onSubmit} ref={formRef} data-testid={`form-${kind}`}>
      <FormError text={formError} testId="form-error" />
      {form.fields.map((field) => {
        const label = kind === 'change' && field === 'password' ? 'authpage.new_password' : LABELS[field];
        const error = errors[field];
        const hint = field === 'password' && kind !== 'login_password' && !error;
        const described = error ? `${kind}-${field}-error` : hint ? `${kind}-${field}-hint` : undefined;
        return (
          <label key={field} className="field">
            <span className="field-label">{t(label)}</span>
            <input
              name={field}
              type={field === 'email' ? 'email' : 'password'}
              autoComplete={
                kind === 'login_password' && field === 'password' ? 'current-password' : signIn && field === 'email' ? 'username webauthn' : AUTOCOMPLETE[field]
              }
              value={values[field] ?? ''}
              onChange={(event) => setValues({ ...values, [field]: event.target.value })}
              aria-invalid={error ? 'true' : undefined}
              aria-describedby={described}
              required
            />
            {hint && (
              <span className="field-hint" id={described}>
                {t('authpage.password_hint')}
              </span>
            )}
            <FieldNote error={error} errorId={described} testId={`error-${field}`} />
          </label>
        );
      })}
      <button className="btn btn-primary submit" type="submit" disabled={sending || !hydrated}>
        {sending ? t('authpage.sending') : t(form.submit)}
      </button>
    </form>
  );
  // Outside the form: its own way in, not a second submit of the e-mail form.
  const passkeyWay = signIn && hydrated && passkeysSupported() && (
    <div className="auth-form auth-passkey">
      <p className="auth-or">{t('passkey.or')}</p>
      <button className="btn btn-outline submit" type="button" onClick={passkeySignIn} disabled={passkeyBusy || sending} data-testid="passkey-sign-in">
        {passkeyBusy ? t('passkey.asking') : t('passkey.sign_in')}
      </button>
    </div>
  );
  return (
    <>
      {formElement}
      {passkeyWay}
    </>
  );
}

export default function AuthForm({ locale, messages, ...rest }: TProps) {
  return (
    <IslandRoot locale={locale} messages={messages}>
      <AuthFormBody {...rest} />
    </IslandRoot>
  );
}
