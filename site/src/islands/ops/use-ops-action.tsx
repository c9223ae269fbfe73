import { type FormEvent, useState } from 'react';
import { useTranslation } from 'react-i18next';
import { ApiError } from '../../lib/api.ts';
import { opsMessage } from './OpsLoad.tsx';

/**
 * One back-office form's send: `submit(work)` keeps the form from leaving the page, clears the
 * last outcome, runs the work and keeps its refusal (the message, and the fields it names) or
 * what it says when done.
 */
export function useOpsAction() {
  const { t } = useTranslation();
  const [sending, setSending] = useState(false);
  const [error, setError] = useState('');
  const [fields, setFields] = useState<Record<string, string>>({});
  const [done, setDone] = useState('');

  async function submit(event: FormEvent<HTMLFormElement>, work: () => Promise<string | undefined>) {
    event.preventDefault();
    setSending(true);
    setError('');
    setFields({});
    setDone('');
    try {
      setDone((await work()) ?? '');
    } catch (err) {
      if (err instanceof ApiError) setFields(err.fields);
      setError(opsMessage(err, t('error.generic')));
    } finally {
      setSending(false);
    }
  }

  return { sending, error, fields, done, submit };
}

/** A back-office form's button row; hidden while the second factor is asked for instead. */
export function OpsSubmit({
  label,
  testId,
  sending = false,
  hidden = false,
  outline = false,
}: {
  label: string;
  testId: string;
  sending?: boolean;
  hidden?: boolean;
  outline?: boolean;
}) {
  if (hidden) return null;
  return (
    <div className="settings-actions">
      <button className={outline ? 'btn btn-outline' : 'btn btn-primary'} type="submit" disabled={sending} data-testid={testId}>
        {label}
      </button>
    </div>
  );
}
