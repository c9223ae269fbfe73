import { type FormEvent, type ReactNode, useCallback, useEffect, useRef, useState } from 'react';
import { useTranslation } from 'react-i18next';
import { CALLS } from '@obmen/shared/calls';
import { api, ApiError } from '../../lib/api.ts';
import { CodeField } from '../SecondFactorStep.tsx';

type TPending = { retry: () => void; cancel: () => void };

/**
 * The second factor again, where the core asks for a fresh one (403 `step_up_required`: a
 * document image, personal data in full, a change to a customer). `stepped(call)` runs the call;
 * when it is refused for want of a fresh factor, `prompt` shows a code form, and the call runs
 * again once the code is accepted (or fails with the first refusal if the operator cancels).
 * Render `prompt` where the operator's eyes are: next to the button that asked.
 */
export function useStepUp(): { stepped: <T>(call: () => Promise<T>) => Promise<T>; prompt: ReactNode } {
  const [pending, setPending] = useState<TPending | null>(null);

  const stepped = useCallback(<T,>(call: () => Promise<T>): Promise<T> => {
    return call().catch(
      (err: unknown) =>
        new Promise<T>((resolve, reject) => {
          if (!(err instanceof ApiError && err.code === 'step_up_required')) return reject(err);
          setPending({
            retry: () => {
              setPending(null);
              call().then(resolve, reject);
            },
            cancel: () => {
              setPending(null);
              reject(err);
            },
          });
        }),
    );
  }, []);

  return { stepped, prompt: pending ? <StepUpForm pending={pending} /> : null };
}

function StepUpForm({ pending }: { pending: TPending }) {
  const { t } = useTranslation();
  const [code, setCode] = useState('');
  const [error, setError] = useState('');
  const [sending, setSending] = useState(false);
  const inputRef = useRef<HTMLInputElement>(null);
  useEffect(() => inputRef.current?.focus(), []);

  async function onSubmit(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    setSending(true);
    try {
      await api(CALLS['POST /api/ops/step-up'], { body: { code: code.trim() } });
      pending.retry();
    } catch (err) {
      setError(err instanceof ApiError ? (err.fields.code ?? err.message) : t('error.generic'));
      setSending(false);
    }
  }

  return (
    <form className="ops-step-up" noValidate onSubmit={onSubmit} data-testid="ops-step-up">
      <p className="form-lead" role="status">
        {t('ops.step_up_lead')}
      </p>
      <CodeField
        id="ops-step-up-code"
        value={code}
        error={error}
        onChange={setCode}
        inputRef={inputRef}
        inputTestId="ops-step-up-code"
        errorTestId="ops-step-up-error"
      />
      <div className="settings-actions">
        <button className="btn btn-primary" type="submit" disabled={sending} data-testid="ops-step-up-submit">
          {t('ops.step_up_submit')}
        </button>
        <button className="btn btn-outline" type="button" onClick={pending.cancel}>
          {t('ops.cancel')}
        </button>
      </div>
    </form>
  );
}
