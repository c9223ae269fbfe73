import { useCallback, useEffect, useRef, useState, type FormEvent } from 'react';
import { useTranslation } from 'react-i18next';
import { useStore } from '@nanostores/react';
import type { TCurrencyInfo, TExchangePair, TExchangeQuote, TExchangeRecord } from '@obmen/shared';
import { api, ApiError } from '../lib/api.ts';
import { fieldErrors } from '../lib/field-errors.ts';
import { focusWhenShown } from '../lib/focus.ts';
import { stripTrailingZeros } from '@obmen/shared/money';
import { displayAmount, displayPairRate, displayPercent, isAmountText, isZeroAmount } from '@obmen/shared/format';
import { $wallets } from '../stores/wallets.ts';
import { IslandRoot, type TIslandProps } from './IslandRoot.tsx';

type TSide = 'pay' | 'receive';

type TProps = TIslandProps & {
  pair: TExchangePair;
  src: TCurrencyInfo;
  dst: TCurrencyInfo;
  /** Every enabled currency, for the two selects. */
  currencies: TCurrencyInfo[];
  /** Every available pair as "SRC/DST". */
  pairs: string[];
  signedIn: boolean;
  /** From the page's query (?amount= or ?amount_receive=), e.g. coming from the landing quote. */
  initialAmount?: string;
  initialSide?: TSide;
  balances?: { src: string; dst: string } | undefined;
};

const DEBOUNCE_MS = 350;

type TResult = { message: string; exchange: TExchangeRecord };

function newKey(): string {
  return crypto.randomUUID();
}

/** The pair page's form: either side typed, a live quote, a countdown, a confirm that moves money once. */
function ExchangeFormBody({
  pair,
  src,
  dst,
  currencies,
  pairs,
  signedIn,
  initialAmount = '',
  initialSide = 'pay',
  balances,
  locale,
}: Omit<TProps, 'messages'>) {
  const { t } = useTranslation();
  const wallets = useStore($wallets);
  const [side, setSide] = useState<TSide>(initialSide);
  const [payText, setPayText] = useState(initialSide === 'pay' ? initialAmount : '');
  const [receiveText, setReceiveText] = useState(initialSide === 'receive' ? initialAmount : '');
  const [quote, setQuote] = useState<TExchangeQuote | null>(null);
  const [quoteAt, setQuoteAt] = useState(0);
  const [now, setNow] = useState(() => Date.now());
  const [loading, setLoading] = useState(false);
  const [errors, setErrors] = useState<Record<string, string>>({});
  const [formError, setFormError] = useState('');
  const [notice, setNotice] = useState('');
  const [sending, setSending] = useState(false);
  const [result, setResult] = useState<TResult | null>(null);
  const sendingRef = useRef(false);
  const requestSeq = useRef(0);
  const abortRef = useRef<AbortController | null>(null);
  /** One Idempotency-Key per quote token: a retry of the same confirmation replays, never repeats. */
  const keyRef = useRef<{ token: string; key: string } | null>(null);

  const walletBalance = (code: string, fallback?: string) => wallets.find((wallet) => wallet.currency === code)?.balance ?? fallback;
  const srcBalance = walletBalance(src.code, balances?.src);
  const dstBalance = walletBalance(dst.code, balances?.dst);

  const typed = side === 'pay' ? payText : receiveText;

  const requestQuote = useCallback(
    async (which: TSide, text: string) => {
      const seq = ++requestSeq.current;
      abortRef.current?.abort();
      const controller = new AbortController();
      abortRef.current = controller;
      setLoading(true);
      try {
        const form: Record<string, string> = { src: src.code, dst: dst.code, [which === 'pay' ? 'amount' : 'amount_receive']: text.trim() };
        const answer = await api<{ quote: TExchangeQuote }>(signedIn ? '/exchange/check' : '/exchange/landing', { form, signal: controller.signal });
        if (seq !== requestSeq.current) return;
        setQuote(answer.quote);
        setQuoteAt(Date.now());
        setNow(Date.now());
        setErrors({});
        setFormError('');
        if (which === 'pay') setReceiveText(stripTrailingZeros(answer.quote.amount_receive));
        else setPayText(stripTrailingZeros(answer.quote.amount));
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
    [src.code, dst.code, signedIn, t],
  );

  // A short pause after the last keystroke, then a quote for what was typed.
  useEffect(() => {
    if (result) return;
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
  }, [typed, side, result]);

  // The countdown of the quote's validity.
  useEffect(() => {
    if (!quote) return;
    const timer = setInterval(() => setNow(Date.now()), 1000);
    return () => clearInterval(timer);
  }, [quote]);

  useEffect(() => () => abortRef.current?.abort(), []);

  // Typed before the island woke up (a slow phone): take what the inputs hold.
  const payRef = useRef<HTMLInputElement>(null);
  const receiveRef = useRef<HTMLInputElement>(null);
  // Confirmed: focus moves to the result's heading; "again" brings it back to the amount.
  const resultRef = useRef<HTMLHeadingElement>(null);
  useEffect(() => focusWhenShown(resultRef.current), [result]);
  useEffect(() => {
    const pay = payRef.current?.value ?? '';
    const receive = receiveRef.current?.value ?? '';
    if (pay && pay !== payText) onType('pay', pay);
    else if (receive && receive !== receiveText) onType('receive', receive);
  }, []);

  const remaining = quote ? Math.max(0, quote.expires_in - Math.floor((now - quoteAt) / 1000)) : 0;
  const expired = quote !== null && remaining === 0;

  function onType(which: TSide, value: string) {
    setNotice('');
    setFormError('');
    setSide(which);
    if (which === 'pay') setPayText(value);
    else setReceiveText(value);
  }

  function payWholeBalance() {
    if (srcBalance && !isZeroAmount(srcBalance)) onType('pay', stripTrailingZeros(srcBalance));
  }

  async function confirm(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    if (!quote || sendingRef.current) return;
    if (expired || !quote.token) {
      setNotice('');
      void requestQuote(side, typed);
      return;
    }
    sendingRef.current = true;
    setSending(true);
    setFormError('');
    setNotice('');
    const token = quote.token;
    if (keyRef.current?.token !== token) keyRef.current = { token, key: newKey() };
    try {
      const answer = await api<TResult>(`/exchange/${src.code}/${dst.code}`, { form: { quote: token }, idempotencyKey: keyRef.current.key });
      setResult(answer);
      keyRef.current = null;
    } catch (err) {
      if (err instanceof ApiError) {
        // A network failure keeps the key: trying again replays instead of exchanging twice.
        if (err.status !== 0) keyRef.current = null;
        const fresh = (err.body as { quote?: TExchangeQuote } | null)?.quote;
        if (fresh) {
          setQuote(fresh);
          setQuoteAt(Date.now());
          setNow(Date.now());
          if (side === 'pay') setReceiveText(stripTrailingZeros(fresh.amount_receive));
          else setPayText(stripTrailingZeros(fresh.amount));
          setNotice(err.message);
        } else {
          setFormError(err.message);
          if (err.code === 'quote_invalid') setQuote(null);
        }
      } else setFormError(t('error.generic'));
    } finally {
      sendingRef.current = false;
      setSending(false);
    }
  }

  function again() {
    setResult(null);
    setQuote(null);
    setPayText('');
    setReceiveText('');
    setSide('pay');
    setNotice('');
    requestAnimationFrame(() => payRef.current?.focus());
  }

  const pairExists = (a: string, b: string) => pairs.includes(`${a}/${b}`);
  function goTo(nextSrc: string, nextDst: string) {
    let target = nextDst;
    if (!pairExists(nextSrc, target)) target = pairs.find((p) => p.startsWith(`${nextSrc}/`))?.split('/')[1] ?? target;
    const amount = side === 'pay' && payText.trim() ? `?amount=${encodeURIComponent(payText.trim())}` : '';
    window.location.assign(`/exchange/${nextSrc}/${target}${amount}`);
  }
  const srcOptions = currencies.filter((c) => pairs.some((p) => p.startsWith(`${c.code}/`)));
  const dstOptions = currencies.filter((c) => pairExists(src.code, c.code));
  const reverse = pairExists(dst.code, src.code);

  if (result) {
    const { exchange } = result;
    return (
      <div className="xf-result" data-testid="exchange-result" role="status">
        <div className="xf-result-icon" aria-hidden="true">
          ✓
        </div>
        <h2 tabIndex={-1} ref={resultRef}>
          {t('exchangepage.done_title')}
        </h2>
        <p className="xf-result-message" data-testid="exchange-result-message">
          {result.message}
        </p>
        <dl className="xf-terms">
          <div>
            <dt>{t('exchangepage.you_paid')}</dt>
            <dd>
              {displayAmount(exchange.amount, locale)} {exchange.src}
            </dd>
          </div>
          <div>
            <dt>{t('exchangepage.you_received')}</dt>
            <dd data-testid="exchange-result-received">
              {displayAmount(exchange.amount_receive, locale)} {exchange.dst}
            </dd>
          </div>
          <div>
            <dt>{t('exchangepage.fee')}</dt>
            <dd>
              {displayAmount(exchange.fee, locale)} {exchange.src}
            </dd>
          </div>
        </dl>
        <div className="xf-actions">
          <button type="button" className="btn btn-primary" onClick={again} data-testid="exchange-again">
            {t('exchangepage.again')}
          </button>
          <a className="btn btn-outline" href="/history/exchange">
            {t('exchangepage.to_history')}
          </a>
        </div>
      </div>
    );
  }

  const payError = errors.amount ?? errors.src;
  const receiveError = errors.amount_receive ?? errors.dst;
  const insufficient = signedIn && quote?.sufficient === false;
  const canConfirm = signedIn && quote !== null && !loading && !sending && !insufficient;
  const rateLine = quote ?? pair;
  const rateText = displayPairRate({ src: src.code, dst: dst.code, rate: rateLine.rate, rate_inverse: rateLine.rate_inverse }, locale);

  return (
    <form className="xf" noValidate onSubmit={confirm} data-testid="exchange-form">
      <div className="xf-box">
        <div className="xf-row-head">
          <label htmlFor="xf-pay">{t('exchangepage.you_pay')}</label>
          {signedIn && srcBalance !== undefined && (
            <button type="button" className="xf-balance" onClick={payWholeBalance} title={t('exchangepage.use_balance')} data-testid="exchange-src-balance">
              {t('exchangepage.balance')}: {displayAmount(srcBalance, locale)} {src.code}
            </button>
          )}
        </div>
        <div className={`xf-input${payError ? ' xf-invalid' : ''}`}>
          <input
            id="xf-pay"
            ref={payRef}
            name="amount"
            inputMode="decimal"
            autoComplete="off"
            placeholder={`${t('exchangepage.min')} ${displayAmount(pair.min, locale)}`}
            value={payText}
            onChange={(event) => onType('pay', event.target.value)}
            aria-invalid={payError ? 'true' : undefined}
            aria-describedby={payError ? 'xf-pay-error' : undefined}
            data-testid="exchange-amount"
          />
          <select
            aria-label={t('exchangepage.pay_currency')}
            value={src.code}
            onChange={(event) => goTo(event.target.value, dst.code)}
            data-testid="exchange-src"
          >
            {srcOptions.map((c) => (
              <option key={c.code} value={c.code}>
                {c.code}
              </option>
            ))}
          </select>
        </div>
        {payError && (
          <p className="field-error" id="xf-pay-error" role="alert" data-testid="error-amount">
            {payError}
          </p>
        )}
      </div>

      <div className="xf-swap">
        {reverse ? (
          <a
            className="xf-swap-btn"
            href={`/exchange/${dst.code}/${src.code}`}
            title={t('exchangepage.swap')}
            aria-label={t('exchangepage.swap')}
            data-testid="exchange-swap"
          >
            <svg width="18" height="18" viewBox="0 0 24 24" aria-hidden="true">
              <path fill="currentColor" d="M7 4 3 8l4 4V9h10V7H7zm10 8v3H7v2h10v3l4-4z" />
            </svg>
          </a>
        ) : (
          <span className="xf-swap-btn" aria-hidden="true">
            ↓
          </span>
        )}
      </div>

      <div className="xf-box">
        <div className="xf-row-head">
          <label htmlFor="xf-receive">{t('exchangepage.you_receive')}</label>
          {signedIn && dstBalance !== undefined && (
            <span className="xf-balance-text">
              {t('exchangepage.balance')}: {displayAmount(dstBalance, locale)} {dst.code}
            </span>
          )}
        </div>
        <div className={`xf-input${receiveError ? ' xf-invalid' : ''}`}>
          <input
            id="xf-receive"
            ref={receiveRef}
            name="amount_receive"
            inputMode="decimal"
            autoComplete="off"
            placeholder="0"
            value={receiveText}
            onChange={(event) => onType('receive', event.target.value)}
            aria-invalid={receiveError ? 'true' : undefined}
            aria-describedby={receiveError ? 'xf-receive-error' : undefined}
            data-testid="exchange-amount-receive"
          />
          <select
            aria-label={t('exchangepage.receive_currency')}
            value={dst.code}
            onChange={(event) => goTo(src.code, event.target.value)}
            data-testid="exchange-dst"
          >
            {dstOptions.map((c) => (
              <option key={c.code} value={c.code}>
                {c.code}
              </option>
            ))}
          </select>
        </div>
        {receiveError && (
          <p className="field-error" id="xf-receive-error" role="alert" data-testid="error-amount_receive">
            {receiveError}
          </p>
        )}
      </div>

      <dl
        className="xf-terms"
        aria-live="polite"
        data-testid="exchange-quote"
        data-state={loading ? 'loading' : quote ? (expired ? 'expired' : 'ready') : 'idle'}
      >
        <div>
          <dt>{t('exchangepage.rate')}</dt>
          <dd>
            <span data-testid="quote-rate">{rateText}</span>
            <span className="xf-cost" title={t('exchangepage.cost_hint')} data-testid="quote-cost">
              {quote
                ? t('exchangepage.cost_quote', {
                    cost: displayAmount(quote.cost, locale),
                    currency: src.code,
                    percent: displayPercent(quote.cost_percent, locale, 2),
                  })
                : t('exchangepage.cost_pair', { percent: displayPercent(pair.cost_percent, locale, 2) })}
            </span>
          </dd>
        </div>
        {quote ? (
          <>
            <div>
              <dt>{t('exchangepage.fee')}</dt>
              <dd data-testid="quote-fee">
                {displayAmount(quote.fee, locale)} {src.code}
              </dd>
            </div>
            <div>
              <dt>{t('exchangepage.you_pay')}</dt>
              <dd data-testid="quote-amount">
                {displayAmount(quote.amount, locale)} {src.code}
              </dd>
            </div>
            <div className="xf-strong">
              <dt>{t('exchangepage.you_receive')}</dt>
              <dd data-testid="quote-receive" data-amount={quote.amount_receive}>
                {displayAmount(quote.amount_receive, locale)} {dst.code}
              </dd>
            </div>
          </>
        ) : (
          <div>
            <dt>{t('exchangepage.fee')}</dt>
            <dd>
              {displayPercent(pair.fee_percent, locale)}%{!isZeroAmount(pair.fee_fixed) && ` + ${displayAmount(pair.fee_fixed, locale)} ${src.code}`}
            </dd>
          </div>
        )}
        <div>
          <dt>{t('exchangepage.limits')}</dt>
          <dd>
            {pair.max
              ? t('exchangepage.limits_range', {
                  min: displayAmount((quote?.limits ?? pair).min, locale),
                  max: displayAmount((quote?.limits ?? pair).max ?? '', locale),
                  currency: src.code,
                })
              : t('exchangepage.limits_min', { min: displayAmount(pair.min, locale), currency: src.code })}
          </dd>
        </div>
      </dl>

      {quote && signedIn && (
        <p className={`xf-timer${expired ? ' xf-timer-expired' : ''}`} data-testid="quote-timer">
          {expired ? t('exchangepage.quote_expired_hint') : t('exchangepage.quote_valid', { seconds: remaining })}
          {!expired && (
            <span className="xf-timer-bar">
              <span className="xf-timer-fill" data-fill={Math.ceil((remaining / quote.expires_in) * 10)} />
            </span>
          )}
        </p>
      )}
      {loading && (
        <p className="xf-hint" data-testid="quote-loading">
          {t('exchangepage.quoting')}
        </p>
      )}
      {insufficient && (
        <p className="form-error" role="alert" data-testid="quote-insufficient">
          {t('exchangepage.insufficient', { balance: displayAmount(quote?.balance ?? srcBalance ?? '0', locale), currency: src.code })}
        </p>
      )}
      {notice && (
        <p className="xf-notice" role="alert" data-testid="exchange-notice">
          {notice}
        </p>
      )}
      {formError && (
        <p className="form-error" role="alert" data-testid="form-error">
          {formError}
        </p>
      )}

      {signedIn ? (
        <button className="btn btn-primary xf-submit" type="submit" disabled={!canConfirm} data-testid="exchange-confirm">
          {sending ? t('exchangepage.sending') : expired ? t('exchangepage.refresh_quote') : t('exchangepage.confirm')}
        </button>
      ) : (
        <div className="xf-guest" data-testid="exchange-login-prompt">
          <p>{t('exchangepage.login_prompt')}</p>
          <div className="xf-actions">
            <a className="btn btn-primary" href={`/login?next=${encodeURIComponent(`/exchange/${src.code}/${dst.code}`)}`}>
              {t('exchangepage.login')}
            </a>
            <a className="btn btn-outline" href="/signup">
              {t('exchangepage.signup')}
            </a>
          </div>
        </div>
      )}
    </form>
  );
}

export default function ExchangeForm({ locale, messages, ...rest }: TProps) {
  return (
    <IslandRoot locale={locale} messages={messages}>
      <ExchangeFormBody locale={locale} {...rest} />
    </IslandRoot>
  );
}
