import { useEffect, useRef, useState, type FormEvent } from 'react';
import { useTranslation } from 'react-i18next';
import type { TExchangeQuote } from '@obmen/shared';
import { api, ApiError } from '../lib/api.ts';
import { displayAmount, shortDecimal } from '../lib/amount.ts';
import { IslandRoot, type TIslandProps } from './IslandRoot.tsx';

type TProps = TIslandProps & {
  /** Every available pair as "SRC/DST". */
  pairs: string[];
  /** Codes in display order. */
  codes: string[];
  src: string;
  dst: string;
  amount: string;
};

const AMOUNT_TEXT = /^(?:\d+(?:[.,]\d*)?|[.,]\d+)$/;
const DEBOUNCE_MS = 350;

/** The home page's quote for visitors: POST /api/exchange/landing, then on to the pair's page. */
function LandingQuoteBody({ pairs, codes, src: initialSrc, dst: initialDst, amount: initialAmount, locale }: Omit<TProps, 'messages'>) {
  const { t } = useTranslation();
  const [src, setSrc] = useState(initialSrc);
  const [dst, setDst] = useState(initialDst);
  const [amount, setAmount] = useState(initialAmount);
  const [quote, setQuote] = useState<TExchangeQuote | null>(null);
  const [error, setError] = useState('');
  const [loading, setLoading] = useState(false);
  const seq = useRef(0);
  const first = useRef(true);
  const amountRef = useRef<HTMLInputElement>(null);
  // Typed before the island woke up: take what the input holds.
  useEffect(() => {
    const typed = amountRef.current?.value;
    if (typed !== undefined && typed !== amount) setAmount(typed);
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, []);

  const dstOptions = codes.filter((code) => pairs.includes(`${src}/${code}`));
  const srcOptions = codes.filter((code) => pairs.some((pair) => pair.startsWith(`${code}/`)));

  useEffect(() => {
    const text = amount.trim();
    const mine = ++seq.current;
    if (!text || !AMOUNT_TEXT.test(text)) {
      setQuote(null);
      setError(text ? t('money.amount_invalid') : '');
      return;
    }
    const controller = new AbortController();
    const timer = setTimeout(() => {
      setLoading(true);
      api<{ quote: TExchangeQuote }>('/exchange/landing', { form: { src, dst, amount: text }, signal: controller.signal }).then(
        (answer) => {
          if (mine !== seq.current) return;
          setQuote(answer.quote);
          setError('');
          setLoading(false);
        },
        (err: unknown) => {
          if ((err as Error).name === 'AbortError' || mine !== seq.current) return;
          setQuote(null);
          setError(err instanceof ApiError ? Object.values(err.fields)[0] ?? err.message : t('error.generic'));
          setLoading(false);
        },
      );
    }, first.current ? 0 : DEBOUNCE_MS);
    first.current = false;
    return () => {
      clearTimeout(timer);
      controller.abort();
    };
  }, [src, dst, amount, t]);

  function changeSrc(code: string) {
    setSrc(code);
    if (!pairs.includes(`${code}/${dst}`)) setDst(codes.find((other) => pairs.includes(`${code}/${other}`)) ?? dst);
  }

  function go(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    const text = amount.trim();
    window.location.assign(`/exchange/${src}/${dst}${text ? `?amount=${encodeURIComponent(text)}` : ''}`);
  }

  const rate = quote
    ? Number(quote.rate) >= 1
      ? `1 ${src} ≈ ${displayAmount(shortDecimal(quote.rate, 8), locale, 0)} ${dst}`
      : `1 ${dst} ≈ ${displayAmount(shortDecimal(quote.rate_inverse, 8), locale, 0)} ${src}`
    : '';

  return (
    <form className="lq card" onSubmit={go} action={`/exchange/${src}/${dst}`} data-testid="landing-quote">
      <h2 className="lq-title">{t('landing.title')}</h2>
      <label className="lq-label" htmlFor="lq-amount">{t('landing.you_pay')}</label>
      <div className="lq-input">
        <input id="lq-amount" ref={amountRef} name="amount" inputMode="decimal" autoComplete="off" value={amount} onChange={(event) => setAmount(event.target.value)} aria-invalid={error ? 'true' : undefined} data-testid="landing-amount" />
        <select aria-label={t('landing.pay_currency')} value={src} onChange={(event) => changeSrc(event.target.value)} data-testid="landing-src">
          {srcOptions.map((code) => <option key={code} value={code}>{code}</option>)}
        </select>
      </div>
      <span className="lq-label">{t('landing.you_receive')}</span>
      <div className="lq-input lq-output">
        <output data-testid="landing-receive" aria-live="polite">{quote ? displayAmount(quote.amount_receive, locale, 0) : loading ? '…' : '—'}</output>
        <select aria-label={t('landing.receive_currency')} value={dst} onChange={(event) => setDst(event.target.value)} data-testid="landing-dst">
          {dstOptions.map((code) => <option key={code} value={code}>{code}</option>)}
        </select>
      </div>
      <p className={error ? 'lq-error' : 'lq-rate'} role={error ? 'alert' : undefined} data-testid={error ? 'landing-error' : 'landing-rate'}>
        {error || (quote ? `${rate} · ${t('landing.fee', { fee: displayAmount(quote.fee, locale, 0), currency: src })}` : '\u00a0')}
      </p>
      <button className="btn btn-primary lq-submit" type="submit" data-testid="landing-go">{t('landing.go')}</button>
    </form>
  );
}

export default function LandingQuote({ locale, messages, ...rest }: TProps) {
  return (
    <IslandRoot locale={locale} messages={messages}>
      <LandingQuoteBody locale={locale} {...rest} />
    </IslandRoot>
  );
}
