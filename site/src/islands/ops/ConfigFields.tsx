import { useTranslation } from 'react-i18next';
import { LOCALES, type TLocale } from '@obmen/shared';
import { FieldNote } from '../FormParts.tsx';

/** One labelled text field of a configuration form, with the refusal the core named for it. */
export function ConfigText({
  id,
  name,
  label,
  value,
  error,
  numeric = false,
  onChange,
}: {
  id: string;
  name: string;
  label: string;
  value: string;
  error: string | undefined;
  numeric?: boolean;
  onChange: (value: string) => void;
}) {
  return (
    <label className="field">
      <span className="field-label">{label}</span>
      <input
        name={name}
        type="text"
        inputMode={numeric ? 'numeric' : undefined}
        value={value}
        onChange={(event) => onChange(event.target.value)}
        aria-invalid={error ? 'true' : undefined}
        aria-describedby={error ? `${id}-error` : undefined}
        data-testid={id}
      />
      <FieldNote error={error} errorId={`${id}-error`} testId={`${id}-error`} />
    </label>
  );
}

/** Which language a text is for. */
export function LocaleSelect({ id, value, onChange }: { id: string; value: TLocale; onChange: (locale: TLocale) => void }) {
  const { t } = useTranslation();
  return (
    <label className="field">
      <span className="field-label">{t('ops.config.articles_locale')}</span>
      <select name="locale" value={value} onChange={(event) => onChange(event.target.value as TLocale)} data-testid={id}>
        {LOCALES.map((locale) => (
          <option key={locale} value={locale}>
            {t(`ops.config.notify_locale_${locale}`)}
          </option>
        ))}
      </select>
    </label>
  );
}
