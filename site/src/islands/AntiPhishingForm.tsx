import { useState, type FormEvent } from 'react';
import { useTranslation } from 'react-i18next';
import { ZAntiPhishingBody } from '@obmen/shared/mailing';
import type { TFactorFields } from '@obmen/shared/passkeys';
import { CALLS } from '@obmen/shared/calls';
import { api } from '../lib/api.ts';
import { useHydrated } from '../lib/use-hydrated.ts';
import { ActionRow, FieldNote, FormError, FormSaved, useSingleFieldForm } from './FormParts.tsx';
import { IslandRoot, type TIslandProps } from './IslandRoot.tsx';
import { PasskeyProofButton } from './PasskeyParts.tsx';

type TProps = TIslandProps & { code: string | null; factor: TFactorFields };

/** /settings/mail: the anti-phishing code every mail starts with; with 2FA on, changing it takes a code of the second factor. */
function AntiPhishingBody({ code: initial, factor: shown }: { code: string | null; factor: TFactorFields }) {
  const { t } = useTranslation();
  const hydrated = useHydrated();
  const [current, setCurrent] = useState(initial);
  const [phrase, setPhrase] = useState(initial ?? '');
  const [factor, setFactor] = useState('');
  const [saved, setSaved] = useState('');
  const { error, formError, sending, formRef, submit } = useSingleFieldForm('anti_phishing_code');
  const [passkeyError, setPasskeyError] = useState('');

  async function onSubmit(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    await save(shown.code ? { code: factor } : {});
  }

  async function save(proof: { code?: string; passkey?: string }) {
    setSaved('');
    setPasskeyError('');
    await submit(ZAntiPhishingBody, { anti_phishing_code: phrase, ...proof }, async (body) => {
      const answer = await api(CALLS['POST /api/config/anti_phishing'], { body });
      setCurrent(answer.anti_phishing_code);
      setFactor('');
      setSaved(answer.message);
    });
  }

  return (
    <form className="settings-form" method="post" noValidate onSubmit={onSubmit} ref={formRef} data-testid="form-anti-phishing">
      <p className="muted" data-testid="anti-phishing-current">
        {current ? t('mailprefs.anti_phishing_current', { code: current }) : t('mailprefs.anti_phishing_none')}
      </p>
      <FormError text={formError || passkeyError} />
      <label className="field">
        <span className="field-label">{t('mailprefs.anti_phishing_label')}</span>
        <input
          name="anti_phishing_code"
          type="text"
          autoComplete="off"
          maxLength={32}
          value={phrase}
          onChange={(event) => setPhrase(event.target.value)}
          aria-invalid={error ? 'true' : undefined}
          aria-describedby={error ? 'anti-phishing-error' : 'anti-phishing-hint'}
          data-testid="anti-phishing-input"
        />
        <FieldNote
          error={error}
          errorId="anti-phishing-error"
          testId="error-anti-phishing"
          hint={t('mailprefs.anti_phishing_hint')}
          hintId="anti-phishing-hint"
        />
      </label>
      {shown.code && (
        <label className="field">
          <span className="field-label">{t('mailprefs.anti_phishing_second_factor')}</span>
          <input
            name="code"
            type="text"
            inputMode="numeric"
            autoComplete="one-time-code"
            maxLength={64}
            value={factor}
            onChange={(event) => setFactor(event.target.value)}
            data-testid="anti-phishing-factor"
          />
        </label>
      )}
      <FormSaved text={saved} testId="anti-phishing-saved" />
      <ActionRow
        sending={sending}
        hydrated={hydrated}
        label={t('mailprefs.anti_phishing_save')}
        sendingLabel={t('mailprefs.saving')}
        testId="anti-phishing-save"
      />
      {shown.passkey && (
        <PasskeyProofButton onProof={(passkey) => save({ passkey })} onError={setPasskeyError} disabled={sending} testId="anti-phishing-passkey" />
      )}
    </form>
  );
}

export default function AntiPhishingForm({ locale, messages, code, factor }: TProps) {
  return (
    <IslandRoot locale={locale} messages={messages}>
      <AntiPhishingBody code={code} factor={factor} />
    </IslandRoot>
  );
}
