import { useEffect, useState } from 'react';

/** False on the server's render and the first client one: a form disables its submit until its handlers run. */
export function useHydrated(): boolean {
  const [hydrated, setHydrated] = useState(false);
  useEffect(() => setHydrated(true), []);
  return hydrated;
}

/** A refusal of the whole form, read out when it appears. */
export function FormError({ text, id }: { text: string; id?: string }) {
  if (!text) return null;
  return (
    <p className="form-error" role="alert" id={id}>
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

/** The submit button of a settings form: disabled until hydrated and while sending. */
export function SubmitRow({ sending, hydrated, label, sendingLabel }: { sending: boolean; hydrated: boolean; label: string; sendingLabel: string }) {
  return (
    <div className="settings-actions">
      <button className="btn btn-primary" type="submit" disabled={sending || !hydrated}>
        {sending ? sendingLabel : label}
      </button>
    </div>
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
