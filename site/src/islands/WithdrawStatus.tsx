import { useEffect, useState } from 'react';
import { useTranslation } from 'react-i18next';
import type { TLocale, TWithdrawal } from '@obmen/shared';
import { displayAmount } from '@obmen/shared/format';
import { api } from '../lib/api.ts';
import { CALLS } from '@obmen/shared/calls';
import { useMoneyForm } from '../lib/use-money-form.ts';
import { watchStatus } from '../stores/status.ts';
import { IslandRoot, useDisplayDateTime, type TIslandProps } from './IslandRoot.tsx';

/** One withdrawal: state, reason, expected time, and Cancel while it still awaits review. */
export function WithdrawStatus({ withdrawal: initial, locale, placed = false }: { withdrawal: TWithdrawal; locale: TLocale; placed?: boolean }) {
  const { t } = useTranslation();
  const when = useDisplayDateTime();
  const [withdrawal, setWithdrawal] = useState(initial);
  const [message, setMessage] = useState(placed ? t('withdraw.placed') : '');
  // A retried cancel (no answer, 502/503/504) carries its first key, so the core applies it once.
  const { busy, formError, submit } = useMoneyForm();

  // Live: when this request moves (approved, paid, rejected…), its current state is fetched.
  useEffect(
    () =>
      watchStatus('withdrawal', withdrawal.id, () => {
        api(CALLS['GET /api/withdraw/status/{id}'], { params: { id: withdrawal.id } })
          .then((answer) => setWithdrawal(answer.withdrawal))
          .catch(() => undefined);
      }),
    [withdrawal.id],
  );

  async function cancel() {
    const answer = await submit((idempotencyKey) => api(CALLS['POST /api/withdraw/cancel/{id}'], { params: { id: withdrawal.id }, body: {}, idempotencyKey }));
    if (!answer) return;
    setWithdrawal(answer.withdrawal);
    setMessage(answer.message);
  }

  return (
    <div className="wd-status card" data-testid="withdraw-status" data-id={withdrawal.id} data-state={withdrawal.state}>
      {(formError || message) && (
        <p className="wd-message" role="status" data-testid="withdraw-message">
          {formError || message}
        </p>
      )}
      <dl className="xf-terms">
        <div>
          <dt>{t('withdraw.amount')}</dt>
          <dd>
            {displayAmount(withdrawal.amount, locale)} {withdrawal.currency}
          </dd>
        </div>
        <div>
          <dt>{t('withdraw.receive')}</dt>
          <dd>
            {displayAmount(withdrawal.receive, locale)} {withdrawal.currency}
          </dd>
        </div>
        {withdrawal.details && (
          <div>
            <dt>{t('withdraw.details')}</dt>
            <dd>{withdrawal.details}</dd>
          </div>
        )}
        <div>
          <dt>{t('withdraw.state')}</dt>
          <dd>
            <span className={`badge badge-${withdrawal.state}`} data-testid="withdraw-state">
              {t(`withdraw.state_${withdrawal.state}`)}
            </span>
          </dd>
        </div>
        {withdrawal.reason && (
          <div>
            <dt>{t('withdraw.reason')}</dt>
            <dd data-testid="withdraw-reason">{withdrawal.reason}</dd>
          </div>
        )}
      </dl>
      {withdrawal.expected_at && <p className="wd-expected">{t('withdraw.expected', { at: when(withdrawal.expected_at) })}</p>}
      {withdrawal.cancellable && (
        <button type="button" className="btn btn-outline" onClick={cancel} disabled={busy} data-testid="withdraw-cancel">
          {t('withdraw.cancel')}
        </button>
      )}
    </div>
  );
}

type TProps = TIslandProps & { withdrawal: TWithdrawal };

/** The status of one request as its own island (the /withdraw page's list). */
export default function WithdrawStatusIsland({ locale, messages, timeZone, withdrawal }: TProps) {
  return (
    <IslandRoot locale={locale} messages={messages} timeZone={timeZone}>
      <WithdrawStatus withdrawal={withdrawal} locale={locale} />
    </IslandRoot>
  );
}
