import { useEffect, useState } from 'react';
import { useTranslation } from 'react-i18next';
import type { TDepositPayment, TLocale } from '@obmen/shared';
import { displayAmount } from '@obmen/shared/format';
import { isChainProvider } from '@obmen/shared/chain';
import { api } from '../lib/api.ts';
import { CALLS } from '@obmen/shared/calls';
import { messageText } from '../lib/field-errors.ts';
import type { TI18nKey } from '@obmen/shared';
import { IslandRoot, useDisplayDateTime, type TIslandProps, useKeyTranslate } from './IslandRoot.tsx';

/** How often an open payment's state is asked for. */
export const PAYMENT_POLL_MS = 2_000;

const isOpen = (payment: Pick<TDepositPayment, 'state'>) => payment.state === 'created' || payment.state === 'pending';

/** Re-runs `step` every PAYMENT_POLL_MS while `active` (skipped while the tab is hidden); a failed step just waits for the next. */
export function usePolling(active: boolean, step: () => Promise<void>) {
  const [tick, setTick] = useState(0);
  useEffect(() => {
    if (!active) return;
    const timer = setTimeout(() => {
      const run = document.visibilityState === 'hidden' ? Promise.resolve() : step();
      run.catch(() => undefined).finally(() => setTick((n) => n + 1));
    }, PAYMENT_POLL_MS);
    return () => clearTimeout(timer);
  }, [active, tick]);
}

/** The wallets and header balance after money arrived (the envelope of GET /api/wallets updates them). */
export async function refreshWallets() {
  await api(CALLS['GET /api/wallets']);
}

/** A payment's state badge, with n/N confirmations while a chain transaction waits for them. */
export function PaymentState({ payment }: { payment: TDepositPayment }) {
  const { t } = useTranslation();
  return (
    <span className="dp-state">
      <span className={`badge badge-${payment.state}`} data-testid="deposit-state" data-state={payment.state}>
        {t(`deposit.state_${payment.state}`)}
      </span>
      {payment.required_confirmations > 0 && isOpen(payment) && (
        <span className="muted nowrap" data-testid="deposit-confirmations">
          {t('deposit.confirmations', { n: payment.confirmations, required: payment.required_confirmations })}
        </span>
      )}
    </span>
  );
}

/** What the user is told in each state (the provider decides the wording of the open ones): an i18n key. */
function messageOf(payment: TDepositPayment): TI18nKey {
  if (payment.state === 'created' && !isChainProvider(payment.provider)) {
    return payment.provider === 'sandbox-card' ? 'deposit.message_created_card' : 'deposit.message_created_bank';
  }
  if (payment.state === 'pending' && isChainProvider(payment.provider)) return 'deposit.message_pending_chain';
  return `deposit.message_${payment.state}`;
}

/**
 * One deposit's page: its state (asked again every PAYMENT_POLL_MS while open), a clear message,
 * the amounts, and where to pay: the card's hosted page, or the bank details and the reference.
 */
function DepositStatusBody({ payment: initial, locale }: { payment: TDepositPayment; locale: TLocale }) {
  const { t } = useTranslation();
  const tk = useKeyTranslate();
  const when = useDisplayDateTime();
  const [payment, setPayment] = useState(initial);
  usePolling(isOpen(payment), async () => {
    const answer = await api(CALLS['POST /api/deposit/integration_json/check'], { body: { url: payment.id } });
    setPayment(answer.payment);
    if (answer.payment.state === 'credited') await refreshWallets();
  });
  const money = (amount: string) => `${displayAmount(amount, locale)} ${payment.currency}`;
  const final = payment.state === 'declined' || payment.state === 'expired';
  return (
    <div className="dp-status" data-testid="deposit-status" data-id={payment.id} data-state={payment.state}>
      <h2>{t('deposit.status_title', { amount: displayAmount(payment.amount, locale), currency: payment.currency })}</h2>
      <p className={final ? 'form-error' : 'dp-message'} role="status" data-testid="deposit-message">
        {t(messageOf(payment), { amount: displayAmount(payment.receive, locale), currency: payment.currency })}
      </p>
      <dl className="xf-terms">
        <div>
          <dt>{t('deposit.state')}</dt>
          <dd>
            <PaymentState payment={payment} />
          </dd>
        </div>
        <div>
          <dt>{t('deposit.amount_paid')}</dt>
          <dd>{money(payment.amount)}</dd>
        </div>
        <div>
          <dt>{t('deposit.fee')}</dt>
          <dd>{money(payment.fee)}</dd>
        </div>
        <div>
          <dt>{t('deposit.receive')}</dt>
          <dd data-testid="deposit-receive">{money(payment.receive)}</dd>
        </div>
        {payment.reason && (
          <div>
            <dt>{t('withdraw.reason')}</dt>
            <dd data-testid="deposit-reason">{messageText(tk, payment.reason)}</dd>
          </div>
        )}
      </dl>
      {payment.pay_url && payment.state === 'created' && (
        <>
          <p className="muted">{t('deposit.pay_by', { at: when(payment.expires_at) })}</p>
          <a className="btn btn-primary" href={payment.pay_url} data-testid="deposit-pay">
            {t('deposit.pay')}
          </a>
        </>
      )}
      {payment.bank && isOpen(payment) && (
        <section className="dp-bank card" data-testid="deposit-bank">
          <h3>{t('deposit.bank_title')}</h3>
          <dl className="xf-terms">
            <div>
              <dt>{t('deposit.bank_name')}</dt>
              <dd>{payment.bank.bank}</dd>
            </div>
            <div>
              <dt>{t('deposit.beneficiary')}</dt>
              <dd>{payment.bank.beneficiary}</dd>
            </div>
            <div>
              <dt>{t('deposit.iban')}</dt>
              <dd className="dp-code">{payment.bank.iban}</dd>
            </div>
            <div>
              <dt>{t('deposit.bic')}</dt>
              <dd className="dp-code">{payment.bank.bic}</dd>
            </div>
            <div>
              <dt>{t('deposit.reference')}</dt>
              <dd className="dp-code dp-reference" data-testid="deposit-reference">
                {payment.bank.reference}
              </dd>
            </div>
          </dl>
          <p className="muted">{t('deposit.pay_by', { at: when(payment.expires_at) })}</p>
        </section>
      )}
      {payment.address && <p className="dp-code dp-address">{payment.address}</p>}
      {!isOpen(payment) && (
        <a className="btn btn-outline" href={`/deposit/form/${payment.ps}/${payment.currency}`} data-testid="deposit-again">
          {t('deposit.again')}
        </a>
      )}
    </div>
  );
}

type TProps = TIslandProps & { payment: TDepositPayment };

export default function DepositStatus({ locale, messages, timeZone, payment }: TProps) {
  return (
    <IslandRoot locale={locale} messages={messages} timeZone={timeZone}>
      <DepositStatusBody payment={payment} locale={locale} />
    </IslandRoot>
  );
}
