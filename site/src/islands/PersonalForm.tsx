import { useState, type FormEvent } from 'react';
import { useTranslation } from 'react-i18next';
import { ZUserInfoUpdate, type TUserInfo } from '@obmen/shared/auth';
import { VERIFIED_USER_FIELDS } from '@obmen/shared/verification';
import { api, ApiError } from '../lib/api.ts';
import { ActionRow, FieldNote, FormError, FormSaved } from './FormParts.tsx';
import { CALLS } from '@obmen/shared/calls';
import { useHydrated } from '../lib/use-hydrated.ts';
import { issueErrors } from '../lib/field-errors.ts';
import { IslandRoot, type TIslandProps, useKeyTranslate } from './IslandRoot.tsx';

const FIELDS = [
  { name: 'first_name', autoComplete: 'given-name', type: 'text' },
  { name: 'last_name', autoComplete: 'family-name', type: 'text' },
  { name: 'middle_name', autoComplete: 'additional-name', type: 'text' },
  { name: 'birth_date', autoComplete: 'bday', type: 'date' },
  { name: 'country', autoComplete: 'country', type: 'text' },
  { name: 'phone', autoComplete: 'tel', type: 'tel' },
  { name: 'city', autoComplete: 'address-level2', type: 'text' },
  { name: 'address', autoComplete: 'street-address', type: 'text' },
] as const;
type TField = (typeof FIELDS)[number]['name'];

type TProps = TIslandProps & { info: TUserInfo };

function PersonalFormBody({ info }: { info: TUserInfo }) {
  const { t } = useTranslation();
  const tk = useKeyTranslate();
  const locked = (field: TField) => info.verification_level >= 1 && (VERIFIED_USER_FIELDS as readonly string[]).includes(field);
  const [values, setValues] = useState<Record<TField, string>>(
    () => Object.fromEntries(FIELDS.map(({ name }) => [name, info[name] ?? ''])) as Record<TField, string>,
  );
  const [errors, setErrors] = useState<Record<string, string>>({});
  const [formError, setFormError] = useState('');
  const [saved, setSaved] = useState('');
  const [sending, setSending] = useState(false);
  const hydrated = useHydrated();

  async function onSubmit(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    setFormError('');
    setSaved('');
    // Only what may change is sent: verified fields stay as the document proved them.
    const form = Object.fromEntries(FIELDS.filter(({ name }) => !locked(name)).map(({ name }) => [name, values[name]]));
    const parsed = ZUserInfoUpdate.safeParse(form);
    if (!parsed.success) {
      setErrors(issueErrors(tk, parsed.error.issues));
      return;
    }
    setErrors({});
    setSending(true);
    try {
      const answer = await api(CALLS['POST /api/user/info'], { body: form });
      setSaved(answer.message ?? '');
    } catch (err) {
      if (err instanceof ApiError) {
        setErrors(err.fields);
        if (!Object.keys(err.fields).length) setFormError(err.message);
      } else setFormError(t('error.generic'));
    } finally {
      setSending(false);
    }
  }

  return (
    <form className="settings-form" method="post" noValidate onSubmit={onSubmit} data-testid="form-personal">
      {info.verification_level >= 1 && (
        <p className="lock-note" data-testid="verified-lock">
          {t('settingspage.verified_lock')}
        </p>
      )}
      <FormError text={formError} />
      <div className="settings-grid">
        {FIELDS.map(({ name, autoComplete, type }) => {
          const error = errors[name];
          return (
            <label key={name} className="field">
              <span className="field-label">{t(`settingspage.${name}`)}</span>
              <input
                name={name}
                type={type}
                autoComplete={autoComplete}
                value={values[name]}
                readOnly={locked(name)}
                aria-readonly={locked(name) || undefined}
                aria-invalid={error ? 'true' : undefined}
                onChange={(event) => setValues({ ...values, [name]: event.target.value })}
              />
              <FieldNote error={error} testId={`error-${name}`} />
            </label>
          );
        })}
      </div>
      <FormSaved text={saved} />
      <ActionRow sending={sending} hydrated={hydrated} label={t('settingspage.save')} sendingLabel={t('settingspage.saving')} />
    </form>
  );
}

export default function PersonalForm({ locale, messages, info }: TProps) {
  return (
    <IslandRoot locale={locale} messages={messages}>
      <PersonalFormBody info={info} />
    </IslandRoot>
  );
}
