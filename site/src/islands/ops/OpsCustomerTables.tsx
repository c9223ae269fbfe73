import { useTranslation } from 'react-i18next';
import { displayAmount } from '@obmen/shared/format';
import type { TOpsCustomer } from '@obmen/shared/ops-customers';
import { useDisplayDateTime } from '../IslandRoot.tsx';
import { OpsTable } from './OpsTable.tsx';

/** The customer's records, one table each, newest first: money, cards, sessions, the audit of operators. */
export function OpsCustomerTables({ customer }: { customer: TOpsCustomer }) {
  const { t, i18n } = useTranslation();
  const locale = i18n.language === 'en' ? 'en' : 'ru';
  const when = useDisplayDateTime();
  const amount = (row: { amount: string; currency: string }) => `${displayAmount(row.amount, locale)} ${row.currency}`;
  const at = { title: t('ops.col_at'), cell: (row: { at: string }) => when(row.at) };
  const state = (row: { state: string }) => <code>{row.state}</code>;
  return (
    <>
      <OpsTable
        id="ops-customer-wallets"
        title={t('ops.wallets_title')}
        rows={customer.wallets}
        rowKey={(row) => row.currency}
        columns={[
          { title: t('ops.col_currency'), cell: (row) => row.currency },
          { title: t('ops.col_balance'), cell: (row) => displayAmount(row.balance, locale) },
          { title: t('ops.col_held'), cell: (row) => displayAmount(row.held, locale) },
        ]}
      />
      <OpsTable
        id="ops-customer-ledger"
        title={t('ops.ledger_title')}
        rows={customer.ledger}
        rowKey={(row) => `${row.transaction_id}-${row.account}-${row.currency}`}
        columns={[
          at,
          { title: t('ops.col_transaction'), cell: (row) => `#${row.transaction_id}` },
          { title: t('ops.col_kind'), cell: (row) => <code>{row.kind}</code> },
          { title: t('ops.col_account'), cell: (row) => t(`ops.account.${row.account}`) },
          { title: t('ops.col_amount'), cell: amount },
          { title: t('ops.col_memo'), cell: (row) => row.memo ?? '—' },
        ]}
      />
      <OpsTable
        id="ops-customer-payments"
        title={t('ops.payments_title')}
        rows={customer.payments}
        rowKey={(row) => row.id}
        columns={[
          at,
          { title: t('ops.col_kind'), cell: (row) => t(`ops.payment.${row.kind}`) },
          { title: t('ops.col_amount'), cell: amount },
          { title: t('ops.col_state'), cell: state },
        ]}
      />
      <OpsTable
        id="ops-customer-exchanges"
        title={t('ops.exchanges_title')}
        rows={customer.exchanges}
        rowKey={(row) => row.id}
        columns={[at, { title: t('ops.col_paid'), cell: (row) => amount(row.from) }, { title: t('ops.col_received'), cell: (row) => amount(row.to) }]}
      />
      <OpsTable
        id="ops-customer-transfers"
        title={t('ops.transfers_title')}
        rows={customer.transfers}
        rowKey={(row) => row.id}
        columns={[
          at,
          { title: t('ops.col_direction'), cell: (row) => t(`ops.direction.${row.direction}`) },
          { title: t('ops.col_counterparty'), cell: (row) => <a href={`/ops/customers/${row.counterparty}`}>{row.counterparty}</a> },
          { title: t('ops.col_amount'), cell: amount },
        ]}
      />
      <OpsTable
        id="ops-customer-cards"
        title={t('ops.cards_title')}
        rows={customer.cards}
        rowKey={(row) => row.id}
        columns={[
          at,
          { title: t('ops.col_product'), cell: (row) => row.product },
          { title: t('ops.col_last4'), cell: (row) => row.last4 ?? '—' },
          { title: t('ops.col_state'), cell: state },
        ]}
      />
      <OpsTable
        id="ops-customer-sessions"
        title={t('ops.sessions_title')}
        rows={customer.security.sessions}
        rowKey={(row) => row.id}
        columns={[
          { title: t('ops.col_device'), cell: (row) => row.device ?? '—' },
          { title: t('ops.col_ip'), cell: (row) => row.ip ?? '—' },
          { title: t('ops.col_started'), cell: (row) => when(row.created_at) },
          { title: t('ops.col_last_seen'), cell: (row) => when(row.last_seen_at) },
        ]}
      />
      <OpsTable
        id="ops-customer-sign-ins"
        title={t('ops.sign_ins_title')}
        rows={customer.security.sign_ins}
        rowKey={(row) => `${row.at}-${row.method}-${row.ip}`}
        columns={[
          at,
          { title: t('ops.col_method'), cell: (row) => <code>{row.method}</code> },
          { title: t('ops.col_ip'), cell: (row) => row.ip ?? '—' },
          { title: t('ops.col_outcome'), cell: (row) => (row.success ? t('ops.sign_in_ok') : t('ops.sign_in_failed_as', { failure: row.failure ?? '' })) },
        ]}
      />
      <OpsTable
        id="ops-customer-audit"
        title={t('ops.customer_audit_title')}
        rows={customer.audit}
        rowKey={(row) => String(row.id)}
        columns={[
          at,
          { title: t('ops.audit_actor'), cell: (row) => row.actor },
          { title: t('ops.audit_action'), cell: (row) => <code>{row.action}</code> },
          { title: t('ops.audit_outcome'), cell: (row) => row.outcome },
        ]}
      />
    </>
  );
}
