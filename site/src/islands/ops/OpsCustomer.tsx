import { type FormEvent, Fragment, useCallback, useState } from 'react';
import { useTranslation } from 'react-i18next';
import type { TOpsCustomer } from '@obmen/shared/ops-customers';
import { CALLS } from '@obmen/shared/calls';
import { api } from '../../lib/api.ts';
import { FormError } from '../FormParts.tsx';
import { IslandRoot, type TIslandProps, useDisplayDateTime } from '../IslandRoot.tsx';
import { OpsCustomerActions } from './OpsCustomerActions.tsx';
import { OpsCustomerMoney } from './OpsCustomerMoney.tsx';
import { OpsCustomerNotes } from './OpsCustomerNotes.tsx';
import { OpsCustomerTables } from './OpsCustomerTables.tsx';
import { NO_REASON, ReasonFields, type TReason } from './ReasonFields.tsx';
import { useStepUp } from './StepUp.tsx';
import { OpsLoadState, useOpsLoad } from './OpsLoad.tsx';
import { OpsSubmit, useOpsAction } from './use-ops-action.tsx';

/*
 * One customer on one page: who they are (personal data masked until revealed), their blocks,
 * the actions and notes, then every record. Opening the page is itself audited by the core.
 */

function Profile({ customer, onRevealed }: { customer: TOpsCustomer; onRevealed: (customer: TOpsCustomer) => void }) {
  const { t } = useTranslation();
  const when = useDisplayDateTime();
  const { stepped, prompt } = useStepUp();
  const [reason, setReason] = useState<TReason>(NO_REASON);
  const { sending, error, submit } = useOpsAction();
  const { personal } = customer;

  const reveal = (event: FormEvent<HTMLFormElement>) =>
    submit(event, async () => {
      const answer = await stepped(() =>
        api(CALLS['POST /api/ops/customers/{account_id}/reveal'], { params: { account_id: customer.account_id }, body: reason }),
      );
      onRevealed(answer.customer);
      return undefined;
    });

  const name = [personal.last_name, personal.first_name, personal.middle_name].filter(Boolean).join(' ') || '—';
  const rows: Array<[string, string]> = [
    [t('ops.customer_email'), `${customer.email}${customer.email_confirmed ? '' : ` (${t('ops.unconfirmed')})`}`],
    [t('ops.customer_since'), when(customer.created_at)],
    [t('ops.customer_level'), String(customer.level)],
    [t('ops.customer_verification'), customer.verification ? t(`ops.verification.${customer.verification.status}`) : '—'],
    [t('ops.customer_name'), name],
    [t('ops.customer_birth_date'), personal.birth_date ?? '—'],
    [t('ops.customer_phone'), personal.phone ?? '—'],
    [t('ops.customer_address'), [personal.country, personal.city, personal.address].filter(Boolean).join(', ') || '—'],
    [t('ops.customer_second_factor'), customer.security.second_factor.enabled || customer.security.second_factor.passkeys > 0 ? t('ops.on') : t('ops.off')],
    [t('ops.customer_referral'), t('ops.referral_summary', { invited: customer.referral.invited, by: customer.referral.referred_by ?? '—' })],
    [t('ops.customer_support'), t('ops.support_summary', { messages: customer.support.messages, reports: customer.support.reports_against })],
  ];
  return (
    <section className="ops-audit" aria-labelledby="ops-profile-title">
      <h2 id="ops-profile-title">{t('ops.profile_title')}</h2>
      <ul className="ops-badges" data-testid="ops-customer-blocks">
        {customer.sign_in_blocked_at && (
          <li className="ops-badge ops-badge-danger">{t('ops.sign_in_blocked_since', { at: when(customer.sign_in_blocked_at) })}</li>
        )}
        {customer.security.withdrawals_blocked_until && (
          <li className="ops-badge ops-badge-danger">{t('ops.withdrawals_blocked_until', { at: when(customer.security.withdrawals_blocked_until) })}</li>
        )}
      </ul>
      <dl className="kyc-dl" data-testid="ops-customer-profile">
        {rows.map(([label, value]) => (
          <Fragment key={label}>
            <dt>{label}</dt>
            <dd>{value}</dd>
          </Fragment>
        ))}
      </dl>
      {!personal.revealed && (
        <form className="ops-form" noValidate onSubmit={reveal} data-testid="ops-reveal">
          <ReasonFields id="ops-reveal" value={reason} error={undefined} onChange={setReason} />
          <FormError text={error} testId="ops-reveal-error" />
          <OpsSubmit label={t('ops.reveal')} testId="ops-reveal-submit" sending={sending} hidden={Boolean(prompt)} outline />
        </form>
      )}
      {prompt}
    </section>
  );
}

function Customer({ accountId }: { accountId: number }) {
  // Each load is a view the core audits; a reveal shows the answer it brought until the next load.
  const load = useCallback(async () => (await api(CALLS['GET /api/ops/customers/{account_id}'], { params: { account_id: accountId } })).customer, [accountId]);
  const { data, failure, reload } = useOpsLoad(load);
  const [revealed, setRevealed] = useState<TOpsCustomer | null>(null);
  const customer = revealed ?? data;
  const refresh = useCallback(() => {
    setRevealed(null);
    void reload();
  }, [reload]);

  if (!customer) return <OpsLoadState failure={failure} />;
  return (
    <div className="ops-home" data-testid="ops-customer">
      <Profile customer={customer} onRevealed={setRevealed} />
      <OpsCustomerActions customer={customer} onDone={refresh} />
      <OpsCustomerMoney customer={customer} />
      <OpsCustomerNotes customer={customer} onDone={refresh} />
      <OpsCustomerTables customer={customer} />
    </div>
  );
}

export default function OpsCustomer({ locale, messages, timeZone, accountId }: TIslandProps & { accountId: number }) {
  return (
    <IslandRoot locale={locale} messages={messages} timeZone={timeZone}>
      <Customer accountId={accountId} />
    </IslandRoot>
  );
}
