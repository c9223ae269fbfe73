import { useEffect, useRef, useState } from 'react';
import { useTranslation } from 'react-i18next';
import { api, ApiError } from '../lib/api.ts';
import { CALLS } from '@obmen/shared/calls';
import { useHydrated } from '../lib/use-hydrated.ts';
import { IslandRoot, type TIslandProps } from './IslandRoot.tsx';
import { FormError } from './FormParts.tsx';

function UnsubscribeBody({ token }: { token: string }) {
  const { t } = useTranslation();
  const [done, setDone] = useState('');
  const [error, setError] = useState('');
  const [sending, setSending] = useState(false);
  const hydrated = useHydrated();
  const result = useRef<HTMLParagraphElement>(null);
  useEffect(() => {
    if (done) result.current?.focus();
  }, [done]);

  async function onClick() {
    setSending(true);
    setError('');
    try {
      const answer = await api(CALLS['POST /api/mail/unsubscribe'], { query: { t: token } });
      setDone(answer.message ?? t('mailprefs.unsubscribed'));
    } catch (err) {
      setError(err instanceof ApiError ? err.message : t('error.generic'));
    } finally {
      setSending(false);
    }
  }

  if (done)
    return (
      <p className="form-success" role="status" tabIndex={-1} ref={result} data-testid="unsubscribed">
        {done}
      </p>
    );
  return (
    <div className="settings-actions">
      <FormError text={error} />
      <button className="btn btn-primary" type="button" onClick={onClick} disabled={sending || !hydrated} data-testid="unsubscribe-button">
        {t('mailprefs.unsubscribe_button')}
      </button>
    </div>
  );
}

export default function UnsubscribeButton({ locale, messages, token }: TIslandProps & { token: string }) {
  return (
    <IslandRoot locale={locale} messages={messages}>
      <UnsubscribeBody token={token} />
    </IslandRoot>
  );
}
