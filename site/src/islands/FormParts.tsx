import { useRef, useState, type ComponentProps, type ReactNode } from 'react';
import { useTranslation } from 'react-i18next';
import { useKeyTranslate } from './IslandRoot.tsx';
import { ApiError } from '../lib/api.ts';
import { focusFirstInvalid } from '../lib/focus.ts';
import { messageText } from '../lib/field-errors.ts';

/** A refusal of the whole form, read out when it appears. */
export function FormError({ text, id, testId }: { text: string | null | undefined; id?: string; testId?: string }) {
  if (!text) return null;
  return (
    <p className="form-error" role="alert" id={id} data-testid={testId}>
      {text}
    </p>
  );
}

/** What a settings form answers when it has saved. */
export function FormSaved({ text, testId = 'form-success' }: { text: string; testId?: string }) {
  if (!text) return null;
  return (
    <p className="form-success" role="status" data-testid={testId}>
      {text}
    </p>
  );
}

/**
 * The one button of a settings form or step, in its row: disabled until hydrated and while
 * sending. It submits the form, or with `onClick` it is a button of its own. `children` go in
 * the same row after it (e.g. "Confirm with a passkey").
 */
export function ActionRow({
  sending,
  hydrated,
  label,
  sendingLabel = label,
  onClick,
  variant = 'primary',
  testId,
  children,
}: {
  sending: boolean;
  hydrated: boolean;
  label: string;
  sendingLabel?: string;
  onClick?: () => void;
  variant?: 'primary' | 'danger';
  testId?: string;
  children?: ReactNode;
}) {
  return (
    <div className="settings-actions">
      <button className={`btn btn-${variant}`} type={onClick ? 'button' : 'submit'} onClick={onClick} disabled={sending || !hydrated} data-testid={testId}>
        {sending ? sendingLabel : label}
      </button>
      {children}
    </div>
  );
}

/** The input of an amount: a decimal keyboard, no autofill of old amounts, marked invalid while the field has an error. */
export function AmountInput({
  error,
  onValue,
  ...input
}: Omit<ComponentProps<'input'>, 'onChange'> & { error: string | undefined; onValue: (value: string) => void }) {
  return (
    <input inputMode="decimal" autoComplete="off" {...input} onChange={(event) => onValue(event.target.value)} aria-invalid={error ? 'true' : undefined} />
  );
}

/**
 * Under a field: its error (read out when it appears) or, without one, its hint. The field's
 * `aria-describedby` names `errorId` or `hintId` accordingly.
 */
export function FieldNote({
  error,
  errorId,
  testId,
  hint,
  hintId,
}: {
  error: string | undefined;
  errorId?: string;
  testId?: string;
  hint?: string;
  hintId?: string;
}) {
  if (error) {
    return (
      <span className="field-error" id={errorId} role="alert" data-testid={testId}>
        {error}
      </span>
    );
  }
  // A hint's place stays (empty) where the field names it, so that its reference holds.
  if (!hint && !hintId) return null;
  return (
    <span className="field-hint" id={hintId}>
      {hint}
    </span>
  );
}

/** What a shared schema's safeParse answers (the site does not depend on zod itself). */
type TSchema<T> = { safeParse(value: unknown): { success: true; data: T } | { success: false; error: { issues: ReadonlyArray<{ message: string }> } } };

/**
 * A form of one field (a code, an address): the field's error, the form's, the sending state,
 * and `submit`, which checks the value with its shared schema before anything is sent (the
 * message shown under the field), then sends; a refusal naming the field is shown under it and
 * focused, any other above the form.
 */
export function useSingleFieldForm(field: string) {
  const { t } = useTranslation();
  const tk = useKeyTranslate();
  const [error, setError] = useState('');
  const [formError, setFormError] = useState('');
  const [sending, setSending] = useState(false);
  const formRef = useRef<HTMLFormElement>(null);
  const showError = (message: string) => {
    setError(message);
    focusFirstInvalid(formRef.current);
  };
  async function submit<T>(schema: TSchema<T>, value: unknown, send: (parsed: T) => Promise<void>): Promise<'invalid' | 'refused' | 'sent'> {
    setFormError('');
    const parsed = schema.safeParse(value);
    if (!parsed.success) {
      showError(messageText(tk, parsed.error.issues[0]?.message ?? 'validation.invalid'));
      return 'invalid';
    }
    setError('');
    setSending(true);
    try {
      await send(parsed.data);
      return 'sent';
    } catch (err) {
      const onField = err instanceof ApiError ? err.fields[field] : undefined;
      if (onField) showError(onField);
      else setFormError(err instanceof ApiError ? err.message : t('error.generic'));
      return 'refused';
    } finally {
      setSending(false);
    }
  }
  return { error, formError, setFormError, sending, formRef, submit };
}
