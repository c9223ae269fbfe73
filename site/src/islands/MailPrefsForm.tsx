import { useState, type FormEvent } from 'react';
import { useTranslation } from 'react-i18next';
import { MAIL_TOPICS, type TMailPreferences } from '@obmen/shared/mailing';
import { api, ApiError } from '../lib/api.ts';
import { ActionRow, FormError, FormSaved } from './FormParts.tsx';
import { CALLS } from '@obmen/shared/calls';
import { useHydrated } from '../lib/use-hydrated.ts';
import { IslandRoot, type TIslandProps } from './IslandRoot.tsx';

type TProps = TIslandProps & { mailing: TMailPreferences };

function MailPrefsBody({ mailing }: { mailing: TMailPreferences }) {
  const { t } = useTranslation();
  const [values, setValues] = useState<TMailPreferences>(mailing);
  const [saved, setSaved] = useState('');
  const [formError, setFormError] = useState('');
  const [sending, setSending] = useState(false);
  const hydrated = useHydrated();

  async function onSubmit(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    setSaved('');
    setFormError('');
    setSending(true);
    try {
      const answer = await api(CALLS['POST /api/config/mailing'], { body: values });
      setValues(answer.mailing);
      setSaved(answer.message ?? '');
    } catch (err) {
      setFormError(err instanceof ApiError ? err.message : t('error.generic'));
    } finally {
      setSending(false);
    }
  }

  return (
    <form className="settings-form" method="post" noValidate onSubmit={onSubmit} data-testid="form-mailing">
      <FormError text={formError} />
      <fieldset className="mail-topics">
        <legend className="visually-hidden">{t('mailprefs.title')}</legend>
        {MAIL_TOPICS.map((topic) => (
          <label key={topic} className="mail-topic">
            <input
              type="checkbox"
              name={topic}
              checked={values[topic]}
              aria-describedby={`mail-hint-${topic}`}
              onChange={(event) => setValues({ ...values, [topic]: event.target.checked })}
              data-testid={`mail-${topic}`}
            />
            <span>
              <span className="mail-topic-title">{t(`mailprefs.${topic}`)}</span>
              <span className="mail-topic-hint" id={`mail-hint-${topic}`}>
                {t(`mailprefs.${topic}_hint`)}
              </span>
            </span>
          </label>
        ))}
      </fieldset>
      <FormSaved text={saved} />
      <ActionRow sending={sending} hydrated={hydrated} label={t('mailprefs.save')} sendingLabel={t('mailprefs.saving')} />
    </form>
  );
}

export default function MailPrefsForm({ locale, messages, mailing }: TProps) {
  return (
    <IslandRoot locale={locale} messages={messages}>
      <MailPrefsBody mailing={mailing} />
    </IslandRoot>
  );
}
