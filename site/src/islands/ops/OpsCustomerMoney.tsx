import { type FormEvent, useCallback, useState } from 'react';
import { useTranslation } from 'react-i18next';
import { displayMoney } from '@obmen/shared/format';
import type { TOpsCustomer } from '@obmen/shared/ops-customers';
import type { TLedgerAdjustmentReason, TOpsRequest } from '@obmen/shared/ops-requests';
import { CALLS } from '@obmen/shared/calls';
import { api } from '../../lib/api.ts';
import { FieldNote, FormError, FormSaved } from '../FormParts.tsx';
import { useDisplayDateTime } from '../IslandRoot.tsx';
import { AdjustmentReasonSelect, NO_REASON, ReasonFields, type TReason } from './ReasonFields.tsx';
import { useStepUp } from './StepUp.tsx';
import { OpsTable } from './OpsTable.tsx';
import { useOpsLoad } from './OpsLoad.tsx';
import { OpsSubmit, useOpsAction } from './use-ops-action.tsx';
import { useRequestText } from './request-text.ts';

type TKind = 'credit' | 'debit' | 'reverse';
const KINDS: readonly TKind[] = ['credit', 'debit', 'reverse'];
type TDraft = { kind: TKind; currency: string; amount: string; adjustment: TLedgerAdjustmentReason; transaction: string; memo: string };

/** The proposal a draft makes: a credit or debit against the reason's account, or a reversal. */
function propose(accountId: number, draft: TDraft, reason: TReason) {
  const memo = draft.memo;
  const body =
    draft.kind === 'reverse'
      ? { action: 'ledger.reverse' as const, params: { account_id: accountId, transaction_id: draft.transaction, memo } }
      : {
          action: 'ledger.adjust' as const,
          params: { account_id: accountId, currency: draft.currency, amount: draft.amount, direction: draft.kind, reason: draft.adjustment, memo },
        };
  return api(CALLS['POST /api/ops/requests'], { body: { ...body, ...reason } });
}

/**
 * Money, for an operator who may move it (`ledger.adjust`; nobody else sees this section): propose a
 * credit or debit of a wallet, or the reversal of one of the listed transactions, and see what
 * waits for a second operator (who approves it on /ops/approvals). Nothing moves until then.
 */
export function OpsCustomerMoney({ customer }: { customer: TOpsCustomer }) {
  const { t, i18n } = useTranslation();
  const locale = i18n.language === 'en' ? 'en' : 'ru';
  const when = useDisplayDateTime();
  const requestText = useRequestText();
  const { stepped, prompt } = useStepUp();
  const accountId = customer.account_id;
  const load = useCallback(async () => {
    const [me, requests] = await Promise.all([api(CALLS['GET /api/ops/me']), api(CALLS['GET /api/ops/requests'], { query: { account_id: accountId } })]);
    return { allowed: me.operator.permissions.includes('ledger.adjust'), pending: requests.pending };
  }, [accountId]);
  const { data, reload } = useOpsLoad(load);
  // Transactions of the customer's wallets that moved no held money (those end with their withdrawal or card order), newest first, each once.
  const held = new Set(customer.ledger.filter((line) => line.account === 'hold').map((line) => line.transaction_id));
  const transactions = [
    ...new Map(customer.ledger.filter((line) => line.account === 'user' && !held.has(line.transaction_id)).map((line) => [line.transaction_id, line])).values(),
  ];
  const blank: TDraft = {
    kind: 'credit',
    currency: customer.wallets[0]?.currency ?? 'USDT',
    amount: '',
    adjustment: 'compensation',
    transaction: transactions[0]?.transaction_id ?? '',
    memo: '',
  };
  const [draft, setDraft] = useState<TDraft>(blank);
  const [reason, setReason] = useState<TReason>(NO_REASON);
  const { sending, error, fields, done, submit } = useOpsAction();
  const set = (change: Partial<TDraft>) => setDraft((current) => ({ ...current, ...change }));

  if (!data?.allowed) return null;

  const onSubmit = (event: FormEvent<HTMLFormElement>) =>
    submit(event, async () => {
      await stepped(() => propose(accountId, draft, reason));
      setDraft(blank);
      setReason(NO_REASON);
      void reload();
      return t('ops.request_proposed');
    });

  const field = (name: string) => fields[`params.${name}`] ?? fields[name];
  const noteOf = (name: string) => <FieldNote error={field(name)} errorId={`ops-money-${name}-error`} testId={`ops-money-${name}-error`} />;
  const invalid = (name: string) => (field(name) ? { 'aria-invalid': 'true' as const, 'aria-describedby': `ops-money-${name}-error` } : {});

  return (
    <section className="ops-audit" aria-labelledby="ops-money-title" data-testid="ops-customer-money">
      <h2 id="ops-money-title">{t('ops.money_title')}</h2>
      <p className="field-hint">{t('ops.money_lead')}</p>
      <form className="ops-form" noValidate onSubmit={onSubmit} data-testid="ops-money-form">
        <label className="field">
          <span className="field-label">{t('ops.money_kind')}</span>
          <select name="kind" value={draft.kind} onChange={(event) => set({ kind: event.target.value as TKind })} data-testid="ops-money-kind">
            {KINDS.map((kind) => (
              <option key={kind} value={kind}>
                {t(`ops.money_kinds.${kind}`)}
              </option>
            ))}
          </select>
        </label>
        {draft.kind === 'reverse' ? (
          <label className="field">
            <span className="field-label">{t('ops.money_transaction')}</span>
            <select
              name="transaction"
              value={draft.transaction}
              onChange={(event) => set({ transaction: event.target.value })}
              data-testid="ops-money-transaction"
              {...invalid('transaction_id')}
            >
              {transactions.map((line) => (
                <option key={line.transaction_id} value={line.transaction_id}>
                  {`#${line.transaction_id} · ${when(line.at)} · ${line.kind} · ${displayMoney(line.amount, line.currency, locale)}`}
                </option>
              ))}
            </select>
            {noteOf('transaction_id')}
          </label>
        ) : (
          <>
            <label className="field">
              <span className="field-label">{t('ops.money_currency')}</span>
              <input
                name="currency"
                type="text"
                list="ops-money-currencies"
                autoCapitalize="characters"
                maxLength={10}
                value={draft.currency}
                onChange={(event) => set({ currency: event.target.value.toUpperCase() })}
                data-testid="ops-money-currency"
                {...invalid('currency')}
              />
              <datalist id="ops-money-currencies">
                {customer.wallets.map((wallet) => (
                  <option key={wallet.currency} value={wallet.currency} />
                ))}
              </datalist>
              {noteOf('currency')}
            </label>
            <label className="field">
              <span className="field-label">{t('ops.money_amount')}</span>
              <input
                name="amount"
                type="text"
                inputMode="decimal"
                autoComplete="off"
                value={draft.amount}
                onChange={(event) => set({ amount: event.target.value })}
                data-testid="ops-money-amount"
                {...invalid('amount')}
              />
              {noteOf('amount')}
            </label>
            <AdjustmentReasonSelect value={draft.adjustment} testId="ops-money-adjustment" onChange={(adjustment) => set({ adjustment })} />
          </>
        )}
        <label className="field">
          <span className="field-label">{t('ops.money_memo')}</span>
          <input
            name="memo"
            type="text"
            maxLength={200}
            value={draft.memo}
            onChange={(event) => set({ memo: event.target.value })}
            data-testid="ops-money-memo"
            {...invalid('memo')}
          />
          <span className="field-hint">{t('ops.money_memo_hint')}</span>
          {noteOf('memo')}
        </label>
        <ReasonFields id="ops-money" value={reason} error={fields.text} onChange={setReason} />
        <FormError text={error} testId="ops-money-error" />
        <FormSaved text={done} testId="ops-money-done" />
        <OpsSubmit label={t('ops.money_submit')} testId="ops-money-submit" sending={sending} hidden={Boolean(prompt)} />
      </form>
      {prompt}
      <OpsTable<TOpsRequest>
        id="ops-money-pending"
        title={t('ops.money_pending')}
        rows={data.pending}
        rowKey={(row) => row.id}
        columns={[
          { title: t('ops.col_at'), cell: (row) => when(row.proposed_at) },
          { title: t('ops.request_params'), cell: (row) => requestText(row) },
          { title: t('ops.request_by'), cell: (row) => row.proposed_by },
          { title: t('ops.request_lapses'), cell: (row) => when(row.expires_at) },
        ]}
      />
    </section>
  );
}
