import { useCallback, useEffect, useRef, useState, type FormEvent, type ReactNode } from 'react';
import { useTranslation } from 'react-i18next';
import { CALLS } from '@obmen/shared/calls';
import { api, ApiError } from '../../lib/api.ts';
import { CodeField } from '../SecondFactorStep.tsx';
import { FormError } from '../FormParts.tsx';

/*
 * Step-up for the back office: a call under /api/ops that shows documents or personal data in
 * full, or changes a customer, answers 403 `step_up_required` when the operator's second factor
 * is older than 5 minutes. Wrap such calls:
 *
 *   const { withStepUp, stepUp } = useStepUp();
 *   const review = await withStepUp(() => api(CALLS['GET /api/ops/kyc/{id}'], { params: { id } }));
 *   …
 *   return <>{…}{stepUp}</>;   // render `stepUp` once, anywhere in the island
 *
 * On that answer a modal dialog asks for the authenticator code, posts /api/ops/step-up and runs
 * the call again; a wrong code stays in the dialog with its message. Cancelling (the button or
 * Escape) rejects with the original ApiError, so the caller shows it like any refusal.
 */

export function isStepUpRequired(err: unknown): err is ApiError {
  return err instanceof ApiError && err.status === 403 && err.code === 'step_up_required';
}

type TPending = { resolve: () => void; reject: () => void };

export function useStepUp(): { withStepUp: <T>(call: () => Promise<T>) => Promise<T>; stepUp: ReactNode } {
  const [pending, setPending] = useState<TPending | null>(null);
  const withStepUp = useCallback(async <T,>(call: () => Promise<T>): Promise<T> => {
    for (;;) {
      try {
        return await call();
      } catch (err) {
        if (!isStepUpRequired(err)) throw err;
        await new Promise<void>((resolve, reject) => setPending({ resolve, reject: () => reject(err) }));
      }
    }
  }, []);
  const finish = (outcome: 'done' | 'cancelled') => {
    setPending(null);
    if (outcome === 'done') pending?.resolve();
    else pending?.reject();
  };
  const stepUp = pending ? <StepUpDialog onDone={() => finish('done')} onCancel={() => finish('cancelled')} /> : null;
  return { withStepUp, stepUp };
}

/** The code again, in a modal dialog that keeps focus until it is answered or cancelled. */
export function StepUpDialog({ onDone, onCancel }: { onDone: () => void; onCancel: () => void }) {
  const { t } = useTranslation();
  const dialogRef = useRef<HTMLDialogElement>(null);
  const inputRef = useRef<HTMLInputElement>(null);
  const [code, setCode] = useState('');
  const [fieldError, setFieldError] = useState('');
  const [formError, setFormError] = useState('');
  const [sending, setSending] = useState(false);

  useEffect(() => {
    const dialog = dialogRef.current;
    if (dialog && !dialog.open) dialog.showModal();
    inputRef.current?.focus();
    return () => dialog?.close();
  }, []);

  async function submit(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    setFieldError('');
    setFormError('');
    setSending(true);
    try {
      await api(CALLS['POST /api/ops/step-up'], { body: { code } });
      onDone();
    } catch (err) {
      if (err instanceof ApiError && err.fields.code) setFieldError(err.fields.code);
      else setFormError(err instanceof ApiError ? err.message : t('error.generic'));
      setSending(false);
      inputRef.current?.focus();
    }
  }

  return (
    <dialog
      ref={dialogRef}
      className="step-up-dialog"
      aria-labelledby="step-up-title"
      aria-describedby="step-up-lead"
      onCancel={(event) => {
        event.preventDefault();
        onCancel();
      }}
      data-testid="step-up-dialog"
    >
      <form method="dialog" noValidate onSubmit={submit}>
        <h2 id="step-up-title">{t('ops.step_up_title')}</h2>
        <p id="step-up-lead">{t('ops.step_up_lead')}</p>
        <FormError text={formError} testId="step-up-error" />
        <CodeField
          id="step-up"
          value={code}
          error={fieldError}
          onChange={setCode}
          inputRef={inputRef}
          inputTestId="step-up-code"
          errorTestId="step-up-code-error"
        />
        <div className="settings-actions">
          <button className="btn btn-primary" type="submit" disabled={sending} data-testid="step-up-submit">
            {sending ? t('authpage.sending') : t('ops.step_up_submit')}
          </button>
          <button className="btn btn-outline" type="button" onClick={onCancel} data-testid="step-up-cancel">
            {t('ops.step_up_cancel')}
          </button>
        </div>
      </form>
    </dialog>
  );
}
