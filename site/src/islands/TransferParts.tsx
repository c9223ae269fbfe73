import { useEffect, useRef } from 'react';
import { useTranslation } from 'react-i18next';
import type { TLocale, TTransferCheck, TTransferCurrency, TTransferRecord } from '@obmen/shared';
import { displayAmount, displayPercent, isAmountText, isZeroAmount } from '@obmen/shared/format';
import { focusWhenShown } from '../lib/focus.ts';
import { factorFields } from '@obmen/shared/passkeys';
import { CodeField } from './SecondFactorStep.tsx';
import { PasskeyProofButton } from './PasskeyParts.tsx';
import type { TI18nKey } from '@obmen/shared';

export type TTransferResult = { message: string; transfer: TTransferRecord };
export const FIELDS = ['account_id', 'currency', 'amount', 'comment'] as const;
export type TField = (typeof FIELDS)[number];
export type TValues = Record<TField, string>;

const ACCOUNT_TEXT = /^\d{8}$/;
export const COMMENT_MAX = 140;

/** What the form can tell before asking the server: a missing or malformed field. */
export function transferFormErrors(values: TValues, t: (key: TI18nKey) => string): Partial<Record<TField, string>> {
  const found: Partial<Record<TField, string>> = {};
  const account = values.account_id.replace(/[\s-]/g, '');
  if (!account) found.account_id = t('validation.required');
  else if (!ACCOUNT_TEXT.test(account)) found.account_id = t('money.account_id_invalid');
  if (!values.amount.trim()) found.amount = t('validation.required');
  else if (!isAmountText(values.amount.trim())) found.amount = t('money.amount_invalid');
  if (values.comment.trim().length > COMMENT_MAX) found.comment = t('validation.too_long');
  return found;
}

/** The currency's fee as the terms line says it ("1% + 0.50 USD"), or `noFee`. */
export function transferFeeText(currency: TTransferCurrency, locale: TLocale, noFee: string): string {
  return (
    [
      isZeroAmount(currency.fee_percent) ? '' : `${displayPercent(currency.fee_percent, locale)}%`,
      isZeroAmount(currency.fee_fixed) ? '' : `${displayAmount(currency.fee_fixed, locale)} ${currency.code}`,
    ]
      .filter(Boolean)
      .join(' + ') || noFee
  );
}

/** A sent transfer: who got what, and the way to another one or to the history. */
export function TransferResult({ result, locale, onAgain }: { result: TTransferResult; locale: TLocale; onAgain: () => void }) {
  const { t } = useTranslation();
  const resultRef = useRef<HTMLHeadingElement>(null);
  useEffect(() => focusWhenShown(resultRef.current), []);
  const { transfer } = result;
  return (
    <div className="xf-result" role="status" data-testid="transfer-result">
      <div className="xf-result-icon" aria-hidden="true">
        ✓
      </div>
      <h2 tabIndex={-1} ref={resultRef}>
        {t('transferpage.done_title')}
      </h2>
      <p className="xf-result-message" data-testid="transfer-result-message">
        {result.message}
      </p>
      <dl className="xf-terms">
        <div>
          <dt>{t('transferpage.recipient')}</dt>
          <dd>
            {transfer.name} · {transfer.account_id}
          </dd>
        </div>
        <div>
          <dt>{t('transferpage.amount')}</dt>
          <dd>
            {displayAmount(transfer.amount, locale)} {transfer.currency}
          </dd>
        </div>
        <div>
          <dt>{t('transferpage.fee')}</dt>
          <dd>
            {displayAmount(transfer.fee, locale)} {transfer.currency}
          </dd>
        </div>
      </dl>
      <div className="xf-actions">
        <button type="button" className="btn btn-primary" onClick={onAgain} data-testid="transfer-again">
          {t('transferpage.again')}
        </button>
        <a className="btn btn-outline" href="/history/transfer">
          {t('transferpage.to_history')}
        </a>
      </div>
    </div>
  );
}

/** With 2FA on, the checked transfer asks for a code, or a passkey in its place. */
export type TTransferFactor = {
  code: string;
  error: string;
  onCode: (code: string) => void;
  onPasskey: (passkey: string) => void;
  onError: (message: string) => void;
};

/** A checked form: recipient, fee and total (and with 2FA on the code), with Send (once) and Edit. */
export function TransferCheck({
  check,
  locale,
  busy,
  onSend,
  onEdit,
  factor,
}: {
  check: TTransferCheck;
  locale: TLocale;
  busy: 'check' | 'send' | null;
  onSend: () => void;
  onEdit: () => void;
  factor: TTransferFactor;
}) {
  const { t } = useTranslation();
  const checkRef = useRef<HTMLDivElement>(null);
  useEffect(() => focusWhenShown(checkRef.current), [check]);
  return (
    <div className="tf-check" tabIndex={-1} ref={checkRef} aria-label={t('transferpage.check_group')} role="group" data-testid="transfer-check">
      <dl className="xf-terms">
        <div>
          <dt>{t('transferpage.recipient')}</dt>
          <dd data-testid="transfer-recipient">
            {check.recipient.name} · {check.recipient.account_id}
          </dd>
        </div>
        <div>
          <dt>{t('transferpage.amount')}</dt>
          <dd>
            {displayAmount(check.amount, locale)} {check.currency}
          </dd>
        </div>
        <div>
          <dt>{t('transferpage.fee')}</dt>
          <dd data-testid="transfer-fee">
            {displayAmount(check.fee, locale)} {check.currency}
          </dd>
        </div>
        <div className="xf-strong">
          <dt>{t('transferpage.total')}</dt>
          <dd data-testid="transfer-total">
            {displayAmount(check.total, locale)} {check.currency}
          </dd>
        </div>
      </dl>
      {factorFields(check).code && (
        <CodeField
          id="tf-code"
          value={factor.code}
          error={factor.error}
          onChange={factor.onCode}
          hint={t('transferpage.code_hint')}
          inputTestId="transfer-code"
        />
      )}
      <div className="xf-actions">
        <button type="button" className="btn btn-primary xf-submit" onClick={onSend} disabled={busy !== null} data-testid="transfer-send">
          {busy === 'send' ? t('transferpage.sending') : t('transferpage.send', { amount: displayAmount(check.total, locale), currency: check.currency })}
        </button>
        {factorFields(check).passkey && (
          <PasskeyProofButton onProof={factor.onPasskey} onError={factor.onError} disabled={busy !== null} testId="transfer-passkey" />
        )}
        <button type="button" className="btn btn-ghost" onClick={onEdit} disabled={busy !== null} data-testid="transfer-edit">
          {t('transferpage.edit')}
        </button>
      </div>
    </div>
  );
}
