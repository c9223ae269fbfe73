import { useState, type FormEvent } from 'react';
import { useTranslation } from 'react-i18next';
import { CALLS } from '@obmen/shared/calls';
import { isI18nKey } from '@obmen/shared/i18n';
import { factorFields } from '@obmen/shared/passkeys';
import type { TPrivacyResponse } from '@obmen/shared/privacy';
import { api, ApiError } from '../lib/api.ts';
import { useHydrated } from '../lib/use-hydrated.ts';
import { ActionRow, FormError, FormSaved } from './FormParts.tsx';
import { PasskeyProofButton } from './PasskeyParts.tsx';
import { IslandRoot, type TIslandProps, useDisplayDateTime } from './IslandRoot.tsx';

/** /settings/privacy: ask for an export and download the ready ones; close the account when nothing stands in the way. */
function PrivacyBody({ state: initial }: { state: TPrivacyResponse }) {
  const { t } = useTranslation();
  const when = useDisplayDateTime();
  const hydrated = useHydrated();
  const [state, setState] = useState(initial);
  const factor = factorFields(state);
  const [withFiles, setWithFiles] = useState(false);
  const [email, setEmail] = useState('');
  const [code, setCode] = useState('');
  const [busy, setBusy] = useState(false);
  const [message, setMessage] = useState('');
  const [error, setError] = useState('');
  const [closed, setClosed] = useState('');

  async function onExport(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    setBusy(true);
    setError('');
    try {
      const answer = await api(CALLS['POST /api/user/privacy/export'], { body: { with_files: withFiles } });
      setState(answer);
      setMessage(answer.message);
    } catch (err) {
      setError(err instanceof ApiError ? err.message : t('error.generic'));
    } finally {
      setBusy(false);
    }
  }

  function onClose(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    void close(factor.code ? { code } : {});
  }

  async function close(proof: { code: string } | { passkey: string } | Record<string, never>) {
    setBusy(true);
    setError('');
    try {
      setClosed((await api(CALLS['POST /api/user/close'], { body: { email, ...proof } })).message);
    } catch (err) {
      setError(err instanceof ApiError ? err.message : t('error.generic'));
    } finally {
      setBusy(false);
    }
  }

  if (closed) return <FormSaved text={closed} testId="privacy-closed" />;
  return (
    <>
      <div className="card settings-card" data-testid="privacy-export">
        <h2>{t('privacy.title')}</h2>
        <p className="settings-lead">{t('privacy.lead')}</p>
        <form className="settings-form" noValidate onSubmit={onExport}>
          <label className="mail-topic">
            <input type="checkbox" checked={withFiles} onChange={(event) => setWithFiles(event.target.checked)} data-testid="privacy-with-files" />
            <span>{t('privacy.with_files')}</span>
          </label>
          <FormSaved text={message} testId="privacy-message" />
          <ActionRow sending={busy} hydrated={hydrated} label={t('privacy.export')} testId="privacy-export-submit" />
        </form>
        <h3>{t('privacy.exports_title')}</h3>
        {state.exports.length === 0 ? (
          <p className="muted">{t('privacy.exports_none')}</p>
        ) : (
          <ul className="wb-list">
            {state.exports.map((item) => (
              <li key={item.id} data-testid="privacy-export-item" data-state={item.state}>
                {when(item.created_at)} ·{' '}
                {item.state === 'ready' && item.expires_at ? t('privacy.state_ready', { until: when(item.expires_at) }) : t(`privacy.state_${item.state}`)}
                {item.state === 'ready' && (
                  <>
                    {' '}
                    <a href={`/api/user/privacy/export/${item.id}`} download data-testid="privacy-download">
                      {t('privacy.download')}
                    </a>
                  </>
                )}
              </li>
            ))}
          </ul>
        )}
      </div>
      <div className="card settings-card" data-testid="privacy-close">
        <h2>{t('privacy.close_title')}</h2>
        <p className="settings-lead">{t('privacy.close_lead')}</p>
        <FormError text={error} testId="form-error" />
        {state.closable.ok ? (
          <form className="settings-form" noValidate onSubmit={onClose}>
            <label className="field">
              <span className="field-label">{t('privacy.close_email')}</span>
              <input type="email" autoComplete="email" value={email} onChange={(event) => setEmail(event.target.value)} data-testid="privacy-close-email" />
            </label>
            {factor.code && (
              <label className="field">
                <span className="field-label">{t('privacy.close_code')}</span>
                <input autoComplete="one-time-code" value={code} onChange={(event) => setCode(event.target.value)} data-testid="privacy-close-code" />
              </label>
            )}
            <ActionRow sending={busy} hydrated={hydrated} label={t('privacy.close')} variant="danger" testId="privacy-close-submit">
              {factor.passkey && (
                <PasskeyProofButton onProof={(passkey) => close({ passkey })} onError={setError} disabled={busy} testId="privacy-close-passkey" />
              )}
            </ActionRow>
          </form>
        ) : (
          <ul className="lock-note" data-testid="privacy-blockers">
            {state.closable.blockers.map((key) => (
              <li key={key}>{isI18nKey(key) ? t(key) : key}</li>
            ))}
          </ul>
        )}
      </div>
    </>
  );
}

export default function PrivacyForms({ locale, messages, timeZone, state }: TIslandProps & { state: TPrivacyResponse }) {
  return (
    <IslandRoot locale={locale} messages={messages} timeZone={timeZone}>
      <PrivacyBody state={state} />
    </IslandRoot>
  );
}
