import { type FormEvent, useState } from 'react';
import { useTranslation } from 'react-i18next';
import type { TOpsCustomer } from '@obmen/shared/ops-customers';
import { CALLS } from '@obmen/shared/calls';
import { api } from '../../lib/api.ts';
import { FormError, FormSaved } from '../FormParts.tsx';
import { NO_REASON, ReasonFields, type TReason } from './ReasonFields.tsx';
import { useStepUp } from './StepUp.tsx';
import { OpsSubmit, useOpsAction } from './use-ops-action.tsx';

const ACTIONS = ['block_sign_in', 'unblock_sign_in', 'block_withdrawals', 'revoke_sessions', 'reset_second_factor'] as const;
type TAction = (typeof ACTIONS)[number];

/** One action on the customer, by name: the declared call it makes with the reason given. */
function perform(action: TAction, account_id: number, reason: TReason, until: string) {
  const params = { account_id };
  switch (action) {
    case 'block_sign_in':
      return api(CALLS['POST /api/ops/customers/{account_id}/block-sign-in'], { params, body: reason });
    case 'unblock_sign_in':
      return api(CALLS['POST /api/ops/customers/{account_id}/unblock-sign-in'], { params, body: reason });
    case 'block_withdrawals':
      return api(CALLS['POST /api/ops/customers/{account_id}/block-withdrawals'], { params, body: { ...reason, until: until || null } });
    case 'revoke_sessions':
      return api(CALLS['POST /api/ops/customers/{account_id}/revoke-sessions'], { params, body: reason });
    case 'reset_second_factor':
      // Four eyes: a proposal, done when a second operator approves it.
      return api(CALLS['POST /api/ops/requests'], { body: { action: 'customers.reset_second_factor', params, ...reason } });
  }
}

/**
 * What an operator may do to a customer: block or unblock sign-in, block withdrawals until a day
 * (an empty day lifts the block), sign them out everywhere, propose a second-factor reset (a
 * second operator approves it). Each with a catalogued reason and a
 * fresh second factor (the core asks; the code form appears here). The page reloads what it shows after.
 */
export function OpsCustomerActions({ customer, onDone }: { customer: TOpsCustomer; onDone: () => void }) {
  const { t } = useTranslation();
  const { stepped, prompt } = useStepUp();
  const [action, setAction] = useState<TAction>(customer.sign_in_blocked_at ? 'unblock_sign_in' : 'block_sign_in');
  const [reason, setReason] = useState<TReason>(NO_REASON);
  const [until, setUntil] = useState('');
  const { sending, error, fields, done, submit } = useOpsAction();

  const onSubmit = (event: FormEvent<HTMLFormElement>) =>
    submit(event, async () => {
      await stepped(() => perform(action, customer.account_id, reason, until));
      setReason(NO_REASON);
      onDone();
      return t(action === 'reset_second_factor' ? 'ops.request_proposed' : 'ops.action_done');
    });

  return (
    <section className="ops-audit" aria-labelledby="ops-actions-title">
      <h2 id="ops-actions-title">{t('ops.actions_title')}</h2>
      <form className="ops-form" noValidate onSubmit={onSubmit} data-testid="ops-customer-actions">
        <label className="field">
          <span className="field-label">{t('ops.action_label')}</span>
          <select name="action" value={action} onChange={(event) => setAction(event.target.value as TAction)} data-testid="ops-action">
            {ACTIONS.map((name) => (
              <option key={name} value={name}>
                {t(`ops.action.${name}`)}
              </option>
            ))}
          </select>
        </label>
        {action === 'block_withdrawals' && (
          <label className="field">
            <span className="field-label">{t('ops.block_until')}</span>
            <input name="until" type="date" value={until} onChange={(event) => setUntil(event.target.value)} data-testid="ops-block-until" />
            <span className="field-hint">{t('ops.block_until_hint')}</span>
          </label>
        )}
        <ReasonFields id="ops-action" value={reason} error={fields.text} onChange={setReason} />
        <FormError text={error} testId="ops-action-error" />
        <FormSaved text={done} testId="ops-action-done" />
        <OpsSubmit label={t('ops.action_submit')} testId="ops-action-submit" sending={sending} hidden={Boolean(prompt)} />
      </form>
      {prompt}
    </section>
  );
}
