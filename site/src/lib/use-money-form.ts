import { useCallback, useEffect, useRef, useState } from 'react';
import { useTranslation } from 'react-i18next';
import { ApiError, isOutcomeUnknown } from './api.ts';
import { fieldErrors } from './field-errors.ts';
import { focusFirstInvalid } from './focus.ts';
import { useHydrated } from './use-hydrated.ts';

export type TSubmitOptions = {
  /**
   * Which operation the key belongs to, for an island with more than one (confirm or cancel):
   * each keeps its own key until it gets a final answer.
   */
  scope?: string;
  /** The answer sends the browser to another page: the form stays disabled meanwhile. */
  leaving?: boolean;
  /** false: a refusal is shown above the form only (a confirm of what was already checked field by field). */
  onFields?: boolean;
};

/**
 * What every money form does the same way: one Idempotency-Key per intended operation (made on
 * the first send, sent again when the answer may not have been applied — no answer or the BFF's
 * 502/503/504 — and dropped after a final answer or an edit), one submit at a time, and a
 * refusal shown next to its field (or above the form when it names none of `fields`).
 */
export function useMoneyForm(fields: readonly string[] = []) {
  const { t } = useTranslation();
  const [errors, setErrors] = useState<Record<string, string>>({});
  const [formError, setFormError] = useState('');
  const [busy, setBusy] = useState(false);
  // The state above changes on the next render; two clicks in one frame must not send twice.
  const sending = useRef(false);
  const keys = useRef(new Map<string, string>());
  const formRef = useRef<HTMLFormElement>(null);
  const hydrated = useHydrated();

  /** The operation changed (another amount, another selection): its next send is a new one. */
  const renewKey = useCallback(() => keys.current.clear(), []);

  /** A field was edited: its error and the form's go, and so does the key. */
  const edit = useCallback(
    (field: string) => {
      setErrors((current) => ({ ...current, [field]: '' }));
      setFormError('');
      renewKey();
    },
    [renewKey],
  );

  /** Errors found before sending (or by a check): shown, and the first one focused. */
  const showErrors = useCallback((found: Record<string, string>) => {
    setErrors(found);
    focusFirstInvalid(formRef.current);
  }, []);

  const showFailure = useCallback(
    (err: unknown, onFields: boolean) => {
      if (!(err instanceof ApiError)) {
        setFormError(t('error.generic'));
        return;
      }
      if (!onFields) {
        setFormError(err.message);
        return;
      }
      const found = fieldErrors(err);
      setErrors(found);
      if (!Object.keys(found).some((name) => fields.includes(name))) setFormError(err.message);
      focusFirstInvalid(formRef.current);
    },
    [fields, t],
  );

  /** Sends once with the operation's key; the answer, or undefined when refused (then shown). */
  async function submit<T>(send: (idempotencyKey: string) => Promise<T>, options: TSubmitOptions = {}): Promise<T | undefined> {
    if (sending.current) return undefined;
    const scope = options.scope ?? '';
    sending.current = true;
    setBusy(true);
    setFormError('');
    let key = keys.current.get(scope);
    if (!key) {
      key = crypto.randomUUID();
      keys.current.set(scope, key);
    }
    let leaving = false;
    try {
      const answer = await send(key);
      keys.current.delete(scope);
      leaving = options.leaving === true;
      return answer;
    } catch (err) {
      if (!isOutcomeUnknown(err)) keys.current.delete(scope);
      showFailure(err, options.onFields !== false);
      return undefined;
    } finally {
      sending.current = false;
      if (!leaving) setBusy(false);
    }
  }

  return { errors, formError, busy, hydrated, formRef, submit, edit, renewKey, showErrors, setErrors, setFormError };
}

/**
 * Seconds a quote is still valid: its `expires_in` counted from when this quote arrived (a new
 * quote object starts it again), ticking each second while there is one.
 */
export function useQuoteCountdown(quote: { expires_in: number } | null, now: () => number = Date.now): number {
  const [clock, setClock] = useState(() => ({ quote, since: now(), at: now() }));
  if (clock.quote !== quote) {
    const at = now();
    setClock({ quote, since: at, at });
  }
  useEffect(() => {
    if (!quote) return;
    const timer = setInterval(() => setClock((current) => ({ ...current, at: now() })), 1000);
    return () => clearInterval(timer);
  }, [quote, now]);
  return quote ? Math.max(0, quote.expires_in - Math.floor((clock.at - clock.since) / 1000)) : 0;
}
