import { useEffect, useRef, useState, type FormEvent } from 'react';
import { useTranslation } from 'react-i18next';
import { useStore } from '@nanostores/react';
import type { TCurrencyInfo, TExchangePair, TExchangeQuote } from '@obmen/shared';
import { api, ApiError } from '../lib/api.ts';
import { CALLS } from '@obmen/shared/calls';
import { useExchangeQuote, type TSide } from '../lib/use-exchange-quote.ts';
import { useMoneyForm } from '../lib/use-money-form.ts';
import { displayAmount, inputAmount, isZeroAmount } from '@obmen/shared/format';
import { $wallets } from '../stores/wallets.ts';
import { IslandRoot, type TIslandProps } from './IslandRoot.tsx';
import { AmountBox } from './ExchangeAmountBox.tsx';
import { ExchangeResult, ExchangeTerms, QuoteTimer, SwapLink, type TExchangeResult } from './ExchangeParts.tsx';
import { FormError } from './FormParts.tsx';

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
  const [notice, setNotice] = useState('');
  const [result, setResult] = useState<TExchangeResult | null>(null);
  const { errors, formError, busy: sending, submit, setErrors, setFormError } = useMoneyForm();
  const { side, payText, receiveText, typed, quote, setQuote, applyQuote, loading, remaining, expired, requestQuote, type, clear } = useExchangeQuote({
    src: src.code,
    dst: dst.code,
    signedIn,
    initialAmount,
    initialSide,
    paused: result !== null,
    setErrors,
    setFormError,
  });

  const walletBalance = (code: string, fallback?: string) => wallets.find((wallet) => wallet.currency === code)?.balance ?? fallback;
  const srcBalance = walletBalance(src.code, balances?.src);
  const dstBalance = walletBalance(dst.code, balances?.dst);

  const payRef = useRef<HTMLInputElement>(null);
  const receiveRef = useRef<HTMLInputElement>(null);
  // Typed before the island woke up (a slow phone): take what the inputs hold.
  useEffect(() => {
    const pay = payRef.current?.value ?? '';
    const receive = receiveRef.current?.value ?? '';
    if (pay && pay !== payText) onType('pay', pay);
    else if (receive && receive !== receiveText) onType('receive', receive);
  }, []);

  function onType(which: TSide, value: string) {
    setNotice('');
    setFormError('');
    type(which, value);
  }

  function payWholeBalance() {
    if (srcBalance && !isZeroAmount(srcBalance)) onType('pay', inputAmount(srcBalance, locale));
  }

  async function confirm(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    if (!quote || sending) return;
    if (expired || !quote.token) {
      setNotice('');
      void requestQuote(side, typed);
      return;
    }
    setNotice('');
    const token = quote.token;
    // One key per quote token: a retry of the same confirmation replays, never repeats. A refusal
    // that brings a fresh quote is a final answer: the fresh one is shown to be confirmed.
    const answer = await submit(
      async (idempotencyKey) => {
        try {
          return await api(CALLS['POST /api/exchange/{src}/{dst}'], { params: { src: src.code, dst: dst.code }, body: { quote: token }, idempotencyKey });
        } catch (err) {
          const fresh = err instanceof ApiError ? (err.body as { quote?: TExchangeQuote } | null)?.quote : undefined;
          if (err instanceof ApiError && fresh) return { fresh, message: err.message };
          if (err instanceof ApiError && err.code === 'quote_invalid') setQuote(null);
          throw err;
        }
      },
      { scope: token, onFields: false },
    );
    if (!answer) return;
    if ('fresh' in answer) {
      applyQuote(answer.fresh, side);
      setNotice(answer.message);
    } else setResult(answer);
  }

  // After a confirmed exchange, focus is on the result's heading (ExchangeResult); "again" brings it back here.
  function again() {
    setResult(null);
    clear();
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

  if (result) return <ExchangeResult result={result} locale={locale} onAgain={again} />;

  const payError = errors.amount ?? errors.src;
  const receiveError = errors.amount_receive ?? errors.dst;
  const insufficient = signedIn && quote?.sufficient === false;
  const canConfirm = signedIn && quote !== null && !loading && !sending && !insufficient;

  return (
    <form method="post" className="xf" noValidate onSubmit={confirm} data-testid="exchange-form">
      <AmountBox
        side="pay"
        label={t('exchangepage.you_pay')}
        head={
          signedIn &&
          srcBalance !== undefined && (
            <button type="button" className="xf-balance" onClick={payWholeBalance} title={t('exchangepage.use_balance')} data-testid="exchange-src-balance">
              {t('exchangepage.balance')}: {displayAmount(srcBalance, locale)} {src.code}
            </button>
          )
        }
        inputRef={payRef}
        placeholder={`${t('exchangepage.min')} ${displayAmount(pair.min, locale)}`}
        value={payText}
        onType={(value) => onType('pay', value)}
        error={payError}
        currencyLabel={t('exchangepage.pay_currency')}
        currency={src.code}
        currencies={srcOptions}
        onCurrency={(code) => goTo(code, dst.code)}
      />

      <SwapLink src={src.code} dst={dst.code} reverse={reverse} />

      <AmountBox
        side="receive"
        label={t('exchangepage.you_receive')}
        head={
          signedIn &&
          dstBalance !== undefined && (
            <span className="xf-balance-text">
              {t('exchangepage.balance')}: {displayAmount(dstBalance, locale)} {dst.code}
            </span>
          )
        }
        inputRef={receiveRef}
        placeholder="0"
        value={receiveText}
        onType={(value) => onType('receive', value)}
        error={receiveError}
        currencyLabel={t('exchangepage.receive_currency')}
        currency={dst.code}
        currencies={dstOptions}
        onCurrency={(code) => goTo(src.code, code)}
      />

      <ExchangeTerms pair={pair} src={src} dst={dst} quote={quote} loading={loading} expired={expired} locale={locale} />

      {quote && signedIn && <QuoteTimer quote={quote} remaining={remaining} />}
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
      <FormError text={formError} testId="form-error" />

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
