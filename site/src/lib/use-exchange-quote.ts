import { useCallback, useEffect, useRef, useState } from 'react';
import { useTranslation } from 'react-i18next';
import type { TExchangeQuote } from '@obmen/shared';
import { inputAmount, isAmountText } from '@obmen/shared/format';
import type { TLocale } from '@obmen/shared/constants';
import { api, ApiError } from './api.ts';
import { CALLS } from '@obmen/shared/calls';
import { fieldErrors } from './field-errors.ts';
import { useQuoteCountdown } from './use-money-form.ts';

export type TSide = 'pay' | 'receive';

const DEBOUNCE_MS = 350;

type TOptions = {
  src: string;
  dst: string;
  signedIn: boolean;
  initialAmount: string;
  initialSide: TSide;
  /** No quotes while true (the result is shown). */
  paused: boolean;
  /** Where the quote's refusals go: per field, or for the whole form. */
  setErrors: (errors: Record<string, string>) => void;
  setFormError: (message: string) => void;
};

/**
 * The pair form's two amounts and the live quote: either side typed, the other filled from a
 * quote asked a short pause after the last keystroke (the newest answer wins), and its countdown.
 */
export function useExchangeQuote({ src, dst, signedIn, initialAmount, initialSide, paused, setErrors, setFormError }: TOptions) {
  const { t, i18n } = useTranslation();
  const locale = i18n.language as TLocale;
  const [side, setSide] = useState<TSide>(initialSide);
  const [payText, setPayText] = useState(initialSide === 'pay' ? initialAmount : '');
  const [receiveText, setReceiveText] = useState(initialSide === 'receive' ? initialAmount : '');
  const [quote, setQuote] = useState<TExchangeQuote | null>(null);
  const [loading, setLoading] = useState(false);
  const requestSeq = useRef(0);
  const abortRef = useRef<AbortController | null>(null);
  const remaining = useQuoteCountdown(quote);
  const typed = side === 'pay' ? payText : receiveText;

  /** A quote (asked, or brought by a refusal): shown, and the other side filled from it with the reader's decimal mark. */
  const applyQuote = useCallback(
    (next: TExchangeQuote, which: TSide) => {
      setQuote(next);
      if (which === 'pay') setReceiveText(inputAmount(next.amount_receive, locale));
      else setPayText(inputAmount(next.amount, locale));
    },
    [locale],
  );

  const requestQuote = useCallback(
    async (which: TSide, text: string) => {
      const seq = ++requestSeq.current;
      abortRef.current?.abort();
      const controller = new AbortController();
      abortRef.current = controller;
      setLoading(true);
      try {
        const form: Record<string, string> = { src, dst, [which === 'pay' ? 'amount' : 'amount_receive']: text.trim() };
        const answer = await api(signedIn ? CALLS['POST /api/exchange/check'] : CALLS['POST /api/exchange/landing'], { body: form, signal: controller.signal });
        if (seq !== requestSeq.current) return;
        applyQuote(answer.quote, which);
        setErrors({});
        setFormError('');
      } catch (err) {
        if ((err as Error).name === 'AbortError' || seq !== requestSeq.current) return;
        setQuote(null);
        if (which === 'pay') setReceiveText('');
        else setPayText('');
        if (err instanceof ApiError && Object.keys(err.fields).length) {
          setErrors(fieldErrors(err));
          setFormError('');
        } else setFormError(err instanceof Error ? err.message : t('error.generic'));
      } finally {
        if (seq === requestSeq.current) setLoading(false);
      }
    },
    [src, dst, signedIn, t, applyQuote, setErrors, setFormError],
  );

  // A short pause after the last keystroke, then a quote for what was typed.
  useEffect(() => {
    if (paused) return;
    const text = typed.trim();
    if (!text) {
      requestSeq.current++;
      abortRef.current?.abort();
      setQuote(null);
      setLoading(false);
      setErrors({});
      if (side === 'pay') setReceiveText('');
      else setPayText('');
      return;
    }
    if (!isAmountText(text)) {
      requestSeq.current++;
      setQuote(null);
      setLoading(false);
      setErrors({ [side === 'pay' ? 'amount' : 'amount_receive']: t('money.amount_invalid') });
      return;
    }
    const timer = setTimeout(() => void requestQuote(side, text), DEBOUNCE_MS);
    return () => clearTimeout(timer);
  }, [typed, side, paused]);

  useEffect(() => () => abortRef.current?.abort(), []);

  function type(which: TSide, value: string) {
    setSide(which);
    if (which === 'pay') setPayText(value);
    else setReceiveText(value);
  }

  /** Back to an empty form (after a confirmed exchange). */
  function clear() {
    setQuote(null);
    setPayText('');
    setReceiveText('');
    setSide('pay');
  }

  return {
    side,
    payText,
    receiveText,
    typed,
    quote,
    setQuote,
    applyQuote,
    loading,
    remaining,
    expired: quote !== null && remaining === 0,
    requestQuote,
    type,
    clear,
  };
}
