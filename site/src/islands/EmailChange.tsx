import { useEffect, useRef, useState, type FormEvent } from 'react';
import { useTranslation } from 'react-i18next';
import { ZEmailChangeBody } from '@obmen/shared/security';
import { api, ApiError } from '../lib/api.ts';
import { CALLS } from '@obmen/shared/calls';
import { focusWhenShown } from '../lib/focus.ts';
import { ActionRow, FieldNote, FormError, useSingleFieldForm } from './FormParts.tsx';
import { useHydrated } from '../lib/use-hydrated.ts';
import { IslandRoot, type TIslandProps } from './IslandRoot.tsx';

/**
 * /settings/bind-email: `form` asks for the new address; `confirm` spends the link from the
 * new address once the page runs (a GET changes nothing, so mail scanners burn nothing);
 * `report` ("it was not me") waits for a click, since it signs every device out.
 */
type TMode = { mode: 'form' } | { mode: 'confirm'; token: string } | { mode: 'report'; token: string };
type TProps = TIslandProps & TMode;

function Result({ message, error }: { message: string; error: string }) {
  const ref = useRef<HTMLParagraphElement>(null);
  useEffect(() => focusWhenShown(ref.current), [message, error]);
  if (error)
    return (
      <p className="form-error" role="alert" tabIndex={-1} ref={ref} data-testid="form-error">
        {error}
      </p>
    );
  return (
    <p className="form-success" role="status" tabIndex={-1} ref={ref} data-testid="form-success">
      {message}
    </p>
  );
}

function LinkAction({ mode, token }: { mode: 'confirm' | 'report'; token: string }) {
  const { t } = useTranslation();
  const [message, setMessage] = useState('');
  const [error, setError] = useState('');
  const [sending, setSending] = useState(false);
  const hydrated = useHydrated();
  const send = async () => {
    setSending(true);
    try {
      const answer = await api(mode === 'confirm' ? CALLS['POST /api/user/email/confirm/{token}'] : CALLS['POST /api/user/email/report/{token}'], {
        params: { token },
        body: {},
      });
      setMessage(answer.message);
    } catch (err) {
      setError(err instanceof ApiError ? err.message : t('error.generic'));
    } finally {
      setSending(false);
    }
  };
  useEffect(() => {
    if (mode === 'confirm') void send();
  }, []);
  if (message || error) return <Result message={message} error={error} />;
  if (mode === 'confirm')
    return (
      <p role="status" data-testid="email-confirming">
        {t('emailpage.confirming')}
      </p>
    );
  return (
    <div className="settings-form">
      <p>{t('emailpage.report_lead')}</p>
      <ActionRow sending={sending} hydrated={hydrated} label={t('emailpage.report_submit')} onClick={send} variant="danger" testId="email-report" />
    </div>
  );
}

function ChangeForm() {
  const { t } = useTranslation();
  const [email, setEmail] = useState('');
  const [done, setDone] = useState('');
  const { error, formError, sending, formRef, submit } = useSingleFieldForm('email');
  const hydrated = useHydrated();

  async function onSubmit(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    await submit(ZEmailChangeBody, { email }, async (body) => {
      const answer = await api(CALLS['POST /api/user/email'], { body });
      setDone(answer.message);
    });
  }

  if (done) return <Result message={done} error="" />;
  return (
    <form className="settings-form" method="post" noValidate onSubmit={onSubmit} ref={formRef} data-testid="form-bind-email">
      <FormError text={formError} />
      <label className="field">
        <span className="field-label">{t('emailpage.new_email')}</span>
        <input
          name="email"
          type="email"
          autoComplete="email"
          value={email}
          onChange={(event) => setEmail(event.target.value)}
          aria-invalid={error ? 'true' : undefined}
          aria-describedby={error ? 'bind-email-error' : 'bind-email-hint'}
          required
        />
        <FieldNote error={error} errorId="bind-email-error" testId="error-email" hint={t('emailpage.hint')} hintId="bind-email-hint" />
      </label>
      <ActionRow sending={sending} hydrated={hydrated} label={t('emailpage.submit')} sendingLabel={t('authpage.sending')} />
    </form>
  );
}

export default function EmailChange({ locale, messages, ...mode }: TProps) {
  return (
    <IslandRoot locale={locale} messages={messages}>
      {mode.mode === 'form' ? <ChangeForm /> : <LinkAction mode={mode.mode} token={mode.token} />}
    </IslandRoot>
  );
}
