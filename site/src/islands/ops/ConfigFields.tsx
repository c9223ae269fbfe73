import { type FormEvent, type ReactNode, useState } from 'react';
import { useTranslation } from 'react-i18next';
import { LOCALES, type TLocale } from '@obmen/shared';
import { CALLS } from '@obmen/shared/calls';
import type { TConfigChange } from '@obmen/shared/ops-config';
import { api } from '../../lib/api.ts';
import { FieldNote, FormError, FormSaved } from '../FormParts.tsx';
import { NO_REASON, ReasonFields, type TReason } from './ReasonFields.tsx';
import { useStepUp } from './StepUp.tsx';
import { OpsSubmit, useOpsAction } from './use-ops-action.tsx';

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

/** One labelled checkbox of a configuration form. */
export function ConfigCheck({
  name,
  label,
  checked,
  testId,
  onChange,
}: {
  name: string;
  label: string;
  checked: boolean;
  testId: string;
  onChange: (checked: boolean) => void;
}) {
  return (
    <label className="check">
      <input type="checkbox" name={name} checked={checked} onChange={(event) => onChange(event.target.checked)} data-testid={testId} />
      <span>{label}</span>
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

/**
 * A sensitive setting's form: the terms being edited, the reason, the refusal the core named for
 * each term, and `propose`, which sends the change as one `config.change` request (four eyes).
 */
export function useConfigChange<TTerm extends string>() {
  const { t } = useTranslation();
  const { stepped, prompt } = useStepUp();
  const [values, setValues] = useState<Partial<Record<TTerm, string>>>({});
  const [reason, setReason] = useState<TReason>(NO_REASON);
  const action = useOpsAction();
  const refused = (name: string) => action.fields[name] ?? action.fields[`params.value.${name}`];
  const propose = async (params: TConfigChange) => {
    await stepped(() => api(CALLS['POST /api/ops/requests'], { body: { action: 'config.change', params, ...reason } }));
    setValues({});
    return t('ops.request_proposed');
  };
  return { ...action, prompt, values, setValues, reason, setReason, refused, propose };
}

/**
 * A sensitive setting's proposal form (`useConfigChange`): which item it changes, its terms
 * (`children`), the reason and the send; test ids and the title's id derive from `id`.
 */
export function ConfigProposal({
  id,
  title,
  lead,
  choice,
  change,
  onSubmit,
  children,
}: {
  id: string;
  title: string;
  lead: string;
  choice: { name: string; label: string; value: string; testId: string; options: Array<{ value: string; label: string }>; onChange: (value: string) => void };
  change: ReturnType<typeof useConfigChange>;
  onSubmit: (event: FormEvent<HTMLFormElement>) => void;
  children: ReactNode;
}) {
  const { t } = useTranslation();
  return (
    <section className="ops-audit" aria-labelledby={`${id}-title`}>
      <h2 id={`${id}-title`}>{title}</h2>
      <p>{lead}</p>
      <form className="ops-form" noValidate onSubmit={onSubmit} data-testid={`${id}-form`}>
        <label className="field">
          <span className="field-label">{choice.label}</span>
          <select
            name={choice.name}
            value={choice.value}
            onChange={(event) => {
              choice.onChange(event.target.value);
              change.setValues({});
            }}
            data-testid={choice.testId}
          >
            {choice.options.map((option) => (
              <option key={option.value} value={option.value}>
                {option.label}
              </option>
            ))}
          </select>
        </label>
        {children}
        <ReasonFields id={id} value={change.reason} error={change.fields.text} onChange={change.setReason} />
        <FormError text={change.error} testId={`${id}-error`} />
        <FormSaved text={change.done} testId={`${id}-proposed`} />
        <OpsSubmit label={t('ops.config.propose')} testId={`${id}-submit`} sending={change.sending} hidden={Boolean(change.prompt)} />
      </form>
      {change.prompt}
    </section>
  );
}
