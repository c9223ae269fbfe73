import { useEffect, useRef, useState } from 'react';
import { useTranslation } from 'react-i18next';
import type { TCardOrder } from '@obmen/shared';
import { displayAmount } from '@obmen/shared/format';
import { api } from '../lib/api.ts';
import { CALLS } from '@obmen/shared/calls';
import { useMoneyForm } from '../lib/use-money-form.ts';
import { focusWhenShown } from '../lib/focus.ts';
import { IslandRoot, type TIslandProps } from './IslandRoot.tsx';
import { FormError } from './FormParts.tsx';

type TProps = TIslandProps & { order: TCardOrder };

/** /cards/order/confirm: confirm (the held fee is charged) or cancel (the fee comes back). */
/** Confirming or cancelling a placed order: two operations, one call each. */
const ORDER_CALLS = { confirm: CALLS['POST /api/card/order/confirm'], cancel: CALLS['POST /api/card/order/cancel'] } as const;

function CardOrderConfirmBody({ order: initial, locale }: Omit<TProps, 'messages'>) {
  const { t } = useTranslation();
  const [order, setOrder] = useState(initial);
  const [message, setMessage] = useState('');
  // Confirm and cancel are two operations: each keeps its own key until it has a final answer.
  const { formError: error, busy, submit } = useMoneyForm();
  const resultRef = useRef<HTMLParagraphElement>(null);
  useEffect(() => focusWhenShown(resultRef.current), [message]);

  async function act(action: keyof typeof ORDER_CALLS) {
    const answer = await submit((idempotencyKey) => api(ORDER_CALLS[action], { body: { card: order.id }, idempotencyKey }), { scope: action });
    if (!answer) return;
    setOrder(answer.order);
    setMessage(answer.message);
  }

  return (
    <div className="card-confirm" data-testid="card-order-confirm" data-status={order.status}>
      <p className="card-confirm-status">
        {t('cardspage.status')}:{' '}
        <span className="status-badge" data-testid="card-order-status">
          {t(`cards.status.${order.status}`)}
        </span>
      </p>
      {message && (
        <p className="xf-result-message" role="status" tabIndex={-1} ref={resultRef} data-testid="card-order-message">
          {message}
        </p>
      )}
      <FormError text={error} testId="form-error" />
      {order.status === 'placed' && (
        <>
          <p className="field-hint">{t('cardspage.confirm_hint', { fee: displayAmount(order.issue_fee, locale), currency: order.fee_currency })}</p>
          <div className="xf-actions">
            <button type="button" className="btn btn-primary" disabled={busy} onClick={() => act('confirm')} data-testid="card-order-confirm-button">
              {t('cardspage.confirm')}
            </button>
            <button type="button" className="btn btn-outline" disabled={busy} onClick={() => act('cancel')} data-testid="card-order-cancel-button">
              {t('cardspage.cancel_order')}
            </button>
          </div>
        </>
      )}
      {order.status !== 'placed' && (
        <a className="btn btn-outline" href="/cards/my" data-testid="card-order-to-my">
          {t('cardspage.to_my')}
        </a>
      )}
    </div>
  );
}

export default function CardOrderConfirm({ messages, ...props }: TProps) {
  return (
    <IslandRoot locale={props.locale} messages={messages}>
      <CardOrderConfirmBody {...props} />
    </IslandRoot>
  );
}
