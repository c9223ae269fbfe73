import { useEffect, useRef, useState, type FormEvent } from 'react';
import { useTranslation } from 'react-i18next';
import type { TCardDetails, TFactorFields } from '@obmen/shared';
import { displayAmount } from '@obmen/shared/format';
import { api, ApiError, isOutcomeUnknown } from '../lib/api.ts';
import { CALLS } from '@obmen/shared/calls';
import { focusWhenShown } from '../lib/focus.ts';
import { AmountInput, FieldNote, FormError } from './FormParts.tsx';
import { useHydrated } from '../lib/use-hydrated.ts';
import { PasskeyProofButton } from './PasskeyParts.tsx';
import { IslandRoot, type TIslandProps } from './IslandRoot.tsx';

type TProps = TIslandProps & { card: TCardDetails; factor: TFactorFields };
type TShown = { pan: string; cvc: string; expiry: string; left: number };

/** What the buttons and forms of a card do: one call each. */
const CHANGE_CALLS = {
  freeze: CALLS['POST /api/card/freeze'],
  unfreeze: CALLS['POST /api/card/unfreeze'],
  close: CALLS['POST /api/card/close'],
  topup: CALLS['POST /api/card/topup'],
  withdraw: CALLS['POST /api/card/withdraw'],
} as const;

/**
 * /cards/my/{card}: reveal (password or code; shown at most `visible_seconds`, then gone from
 * the page), freeze/unfreeze, top up and move back, close (after a confirmation dialog).
 */
function CardActionsBody({ card, factor, locale }: Omit<TProps, 'messages'>) {
  const { t } = useTranslation();
  const hydrated = useHydrated();
  const [secret, setSecret] = useState('');
  const [useCode, setUseCode] = useState(false);
  const [shown, setShown] = useState<TShown | null>(null);
  const [revealError, setRevealError] = useState('');
  const [amount, setAmount] = useState('');
  const [moveError, setMoveError] = useState('');
  const [error, setError] = useState('');
  const [busy, setBusy] = useState(false);
  const keys = useRef<Record<string, string>>({});
  const dialogRef = useRef<HTMLDialogElement>(null);
  const shownRef = useRef<HTMLDivElement>(null);
  useEffect(() => focusWhenShown(shownRef.current), [shown !== null]);

  // The number leaves the page when its time is up (and never goes to storage).
  useEffect(() => {
    if (!shown) return;
    const timer = setInterval(() => setShown((now) => (now && now.left > 1 ? { ...now, left: now.left - 1 } : null)), 1000);
    return () => clearInterval(timer);
  }, [shown !== null]);

  async function reveal(event: FormEvent) {
    event.preventDefault();
    if (busy || !secret) return;
    await revealWith({ [useCode ? 'code' : 'password']: secret });
  }

  async function revealWith(proof: { password?: string; code?: string; passkey?: string }) {
    setBusy(true);
    setRevealError('');
    try {
      const answer = await api(CALLS['POST /api/card/reveal'], { body: { card: card.id, ...proof } });
      setShown({ pan: answer.pan, cvc: answer.cvc, expiry: answer.expiry, left: answer.visible_seconds });
      setSecret('');
    } catch (err) {
      setRevealError(err instanceof ApiError ? err.message : t('error.generic'));
    } finally {
      setBusy(false);
    }
  }

  async function change(action: keyof typeof CHANGE_CALLS, extra: Record<string, string> = {}) {
    if (busy) return;
    setBusy(true);
    setError('');
    setMoveError('');
    const scope = `${action}:${JSON.stringify(extra)}`;
    keys.current[scope] ??= crypto.randomUUID();
    try {
      await api(CHANGE_CALLS[action], { body: { card: card.id, ...extra }, idempotencyKey: keys.current[scope] });
      window.location.reload();
    } catch (err) {
      if (!isOutcomeUnknown(err)) delete keys.current[scope];
      const text = err instanceof ApiError ? err.message : t('error.generic');
      if (action === 'topup' || action === 'withdraw') setMoveError(text);
      else setError(text);
      setBusy(false);
    }
  }

  return (
    <div className="card-actions" data-testid="card-actions">
      <FormError text={error} testId="form-error" />
      {card.can.reveal &&
        (shown ? (
          <div className="card-secret" ref={shownRef} tabIndex={-1} data-testid="card-secret">
            <p className="card-secret-number" data-testid="card-pan">
              {shown.pan}
            </p>
            <p>
              {t('cardspage.expiry')}: {shown.expiry} · CVC: <span data-testid="card-cvc">{shown.cvc}</span>
            </p>
            <p className="field-hint" aria-live="polite">
              {t('cardspage.hidden_in', { seconds: shown.left })}
            </p>
            <button type="button" className="btn btn-outline btn-sm" onClick={() => setShown(null)} data-testid="card-hide">
              {t('cardspage.hide')}
            </button>
          </div>
        ) : (
          <form method="post" className="card-reveal" onSubmit={reveal} noValidate data-testid="card-reveal-form">
            <label className="field">
              <span className="field-label">{t(useCode ? 'cardspage.reveal_code' : 'cardspage.reveal_password')}</span>
              <input
                type={useCode ? 'text' : 'password'}
                inputMode={useCode ? 'numeric' : undefined}
                autoComplete={useCode ? 'one-time-code' : 'current-password'}
                value={secret}
                onChange={(event) => setSecret(event.target.value)}
                aria-invalid={revealError ? 'true' : undefined}
                aria-describedby={revealError ? 'card-reveal-error' : undefined}
                data-testid="card-reveal-secret"
              />
              <FieldNote error={revealError} errorId="card-reveal-error" />
            </label>
            <div className="xf-actions">
              <button type="submit" className="btn btn-primary" disabled={busy || !secret || !hydrated} data-testid="card-reveal">
                {t('cardspage.reveal')}
              </button>
              {factor.code && (
                <button type="button" className="btn btn-ghost btn-sm" onClick={() => setUseCode(!useCode)}>
                  {t(useCode ? 'cardspage.use_password' : 'cardspage.use_code')}
                </button>
              )}
              {/* Passkeys alone: no code to switch to, the passkey stands beside the password. */}
              {factor.passkey && (useCode || !factor.code) && (
                <PasskeyProofButton onProof={(passkey) => revealWith({ passkey })} onError={setRevealError} disabled={busy} testId="card-reveal-passkey" />
              )}
            </div>
          </form>
        ))}
      <div className="xf-actions">
        {card.can.freeze && (
          <button type="button" className="btn btn-outline" disabled={busy} onClick={() => change('freeze')} data-testid="card-freeze">
            {t('cardspage.freeze')}
          </button>
        )}
        {card.can.unfreeze && (
          <button type="button" className="btn btn-primary" disabled={busy} onClick={() => change('unfreeze')} data-testid="card-unfreeze">
            {t('cardspage.unfreeze')}
          </button>
        )}
      </div>
      {(card.can.topup || card.can.withdraw) && (
        <div className="card-move">
          <label className="field">
            <span className="field-label">{t('cardspage.amount', { currency: card.currency })}</span>
            <AmountInput placeholder="0.00" value={amount} onValue={setAmount} error={moveError} aria-describedby="card-move-note" data-testid="card-amount" />
            <FieldNote
              error={moveError}
              errorId="card-move-note"
              hint={t('cardspage.wallet_balance', { amount: displayAmount(card.wallet_balance, locale), currency: card.currency })}
              hintId="card-move-note"
            />
          </label>
          <div className="xf-actions">
            {card.can.topup && (
              <button type="button" className="btn btn-primary" disabled={busy || !amount} onClick={() => change('topup', { amount })} data-testid="card-topup">
                {t('cardspage.topup')}
              </button>
            )}
            {card.can.withdraw && (
              <button
                type="button"
                className="btn btn-outline"
                disabled={busy || !amount}
                onClick={() => change('withdraw', { amount })}
                data-testid="card-withdraw"
              >
                {t('cardspage.withdraw')}
              </button>
            )}
          </div>
        </div>
      )}
      {card.can.close && (
        <>
          <button type="button" className="btn btn-ghost" onClick={() => dialogRef.current?.showModal()} data-testid="card-close">
            {t('cardspage.close')}
          </button>
          <dialog ref={dialogRef} className="card-close-dialog" aria-labelledby="card-close-title" data-testid="card-close-dialog">
            <h2 id="card-close-title">{t('cardspage.close_title')}</h2>
            <p>{t('cardspage.close_text')}</p>
            <div className="xf-actions">
              <button
                type="button"
                className="btn btn-primary"
                disabled={busy}
                onClick={() => change('close', { confirm: 'true' })}
                data-testid="card-close-confirm"
              >
                {t('cardspage.close_confirm')}
              </button>
              <button type="button" className="btn btn-outline" onClick={() => dialogRef.current?.close()}>
                {t('cardspage.close_keep')}
              </button>
            </div>
          </dialog>
        </>
      )}
    </div>
  );
}

export default function CardActions({ messages, ...props }: TProps) {
  return (
    <IslandRoot locale={props.locale} messages={messages}>
      <CardActionsBody {...props} />
    </IslandRoot>
  );
}
