import { useState, type FormEvent } from 'react';
import { useTranslation } from 'react-i18next';
import { LOCALES, type TLocale } from '@obmen/shared/constants';
import { ZReferralMailingBody } from '@obmen/shared/referral';
import { api, ApiError } from '../lib/api.ts';
import { ActionRow, FormError, FormSaved } from './FormParts.tsx';
import { CALLS } from '@obmen/shared/calls';
import { useHydrated } from '../lib/use-hydrated.ts';
import { messageText } from '../lib/field-errors.ts';
import { IslandRoot, type TIslandProps, useKeyTranslate } from './IslandRoot.tsx';

/** Invite by mail: up to 10 addresses, the mail's language. */
function ReferralMailBody({ locale }: { locale: TLocale }) {
  const { t } = useTranslation();
  const tk = useKeyTranslate();
  const [addresses, setAddresses] = useState('');
  const [language, setLanguage] = useState<TLocale>(locale);
  const [error, setError] = useState('');
  const [done, setDone] = useState('');
  const [sending, setSending] = useState(false);
  const hydrated = useHydrated();

  async function onSubmit(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    setError('');
    setDone('');
    const parsed = ZReferralMailingBody.safeParse({ addresses, locale: language });
    if (!parsed.success) {
      setError(messageText(tk, parsed.error.issues[0]?.message ?? 'validation.invalid'));
      return;
    }
    setSending(true);
    try {
      const answer = await api(CALLS['POST /api/referral/mailing'], { body: { addresses: parsed.data.addresses, locale: language } });
      setDone(answer.message);
      setAddresses('');
    } catch (err) {
      setError(err instanceof ApiError ? (err.fields.addresses ?? err.message) : t('error.generic'));
    } finally {
      setSending(false);
    }
  }

  return (
    <form className="settings-form referral-mail" method="post" noValidate onSubmit={onSubmit} data-testid="form-referral-mailing">
      <label className="field">
        <span className="field-label">{t('referral.addresses')}</span>
        <textarea
          name="addresses"
          rows={3}
          value={addresses}
          onChange={(event) => setAddresses(event.target.value)}
          aria-invalid={error ? 'true' : undefined}
          aria-describedby={error ? 'mailing-error' : undefined}
        />
      </label>
      <label className="field">
        <span className="field-label">{t('referral.language')}</span>
        <select name="locale" value={language} onChange={(event) => setLanguage(event.target.value as TLocale)}>
          {LOCALES.map((code) => (
            // Each language by its own name, marked as that language (WCAG 3.1.2).
            <option key={code} value={code} lang={code}>
              {t(`lang.${code}`)}
            </option>
          ))}
        </select>
      </label>
      <FormError text={error} id="mailing-error" />
      <FormSaved text={done} testId="mailing-done" />
      <ActionRow sending={sending} hydrated={hydrated} label={t('referral.send')} sendingLabel={t('referral.sending')} />
    </form>
  );
}

export default function ReferralMailForm({ locale, messages }: TIslandProps) {
  return (
    <IslandRoot locale={locale} messages={messages}>
      <ReferralMailBody locale={locale} />
    </IslandRoot>
  );
}
