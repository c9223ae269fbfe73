import { useState } from 'react';
import { useTranslation } from 'react-i18next';
import { CALLS } from '@obmen/shared/calls';
import type { TSignInReport } from '@obmen/shared/security';
import { api, ApiError } from '../lib/api.ts';
import { useHydrated } from '../lib/use-hydrated.ts';
import { ActionRow, FormError, FormSaved } from './FormParts.tsx';
import { IslandRoot, type TIslandProps } from './IslandRoot.tsx';

/**
 * "This wasn't me", from a new-sign-in mail: waits for the click (a GET changes nothing, so mail
 * scanners end no session), then offers the password reset the answer opened.
 */
function ReportBody({ token }: { token: string }) {
  const { t } = useTranslation();
  const hydrated = useHydrated();
  const [sending, setSending] = useState(false);
  const [error, setError] = useState('');
  const [done, setDone] = useState<TSignInReport | null>(null);
  const send = async () => {
    setSending(true);
    setError('');
    try {
      setDone(await api(CALLS['POST /api/auth/sign_in/report/{token}'], { params: { token }, body: {} }));
    } catch (err) {
      setError(err instanceof ApiError ? err.message : t('error.generic'));
    } finally {
      setSending(false);
    }
  };
  if (done)
    return (
      <div className="settings-form">
        <FormSaved text={done.message} testId="sign-in-reported" />
        {done.reset_url && (
          <a className="btn btn-primary" href={done.reset_url} data-testid="sign-in-report-reset">
            {t('signinreport.reset')}
          </a>
        )}
      </div>
    );
  return (
    <div className="settings-form">
      <p>{t('signinreport.lead')}</p>
      <FormError text={error} testId="form-error" />
      <ActionRow sending={sending} hydrated={hydrated} label={t('signinreport.submit')} onClick={send} variant="danger" testId="sign-in-report" />
    </div>
  );
}

export default function SignInReport({ locale, messages, token }: TIslandProps & { token: string }) {
  return (
    <IslandRoot locale={locale} messages={messages}>
      <ReportBody token={token} />
    </IslandRoot>
  );
}
