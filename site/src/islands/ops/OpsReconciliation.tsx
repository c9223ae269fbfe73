import { type FormEvent, useCallback, useState } from 'react';
import { useTranslation } from 'react-i18next';
import { CALLS } from '@obmen/shared/calls';
import { displayMoney } from '@obmen/shared/format';
import type { TLedgerAdjustmentReason } from '@obmen/shared/ops-requests';
import type { TSuspenseItem } from '@obmen/shared/ops-reconciliation';
import { api } from '../../lib/api.ts';
import { FieldNote, FormError, FormSaved } from '../FormParts.tsx';
import { IslandRoot, type TIslandProps, useDisplayDateTime } from '../IslandRoot.tsx';
import { OpsLoadState, useOpsLoad } from './OpsLoad.tsx';
import { OpsTable } from './OpsTable.tsx';
import { useStepUp } from './StepUp.tsx';
import { OpsSubmit, useOpsAction } from './use-ops-action.tsx';
import { AdjustmentReasonSelect } from './ReasonFields.tsx';

/*
 * Reconciliation: a period's (UTC days) provider records against the ledger's clearing accounts,
 * the differences found, the clearing accounts day by day, and the suspense list where each
 * difference waits until it is explained or the adjustment proposed for it is approved by a
 * second operator on /ops/approvals. The CSV is the period's differences.
 */

type TPeriod = { provider: string; from: string; to: string };

const DAY_MS = 86_400_000;
const isoDay = (ms: number) => new Date(ms).toISOString().slice(0, 10);

/** The last seven UTC days, today included. */
function lastWeek(): TPeriod {
  const today = Math.floor(Date.now() / DAY_MS) * DAY_MS;
  return { provider: '', from: isoDay(today - 6 * DAY_MS), to: isoDay(today) };
}

const queryOf = (period: TPeriod) => ({ from: period.from, to: period.to, ...(period.provider ? { provider: period.provider } : {}) });

function csvHref(period: TPeriod): string {
  return `/api/ops/reconciliation?${new URLSearchParams({ ...queryOf(period), format: 'csv' }).toString()}`;
}

function useMoney() {
  const { i18n } = useTranslation();
  const locale = i18n.language === 'en' ? 'en' : 'ru';
  return (amount: string | null, currency: string) => (amount === null ? '—' : displayMoney(amount, currency, locale));
}

function Reconciliation() {
  const { t } = useTranslation();
  const money = useMoney();
  const [draft, setDraft] = useState<TPeriod>(lastWeek);
  const [period, setPeriod] = useState<TPeriod>(draft);
  const load = useCallback(() => api(CALLS['GET /api/ops/reconciliation'], { query: queryOf(period) }), [period]);
  const { data, failure, reload } = useOpsLoad(load);
  const [done, setDone] = useState('');

  const onRun = (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    setDone('');
    setPeriod({ ...draft });
  };

  if (!data) return <OpsLoadState failure={failure} />;
  return (
    <div className="ops-home" data-testid="ops-reconciliation">
      <p className="field-hint">{t('ops.recon.lead')}</p>
      <form className="ops-form ops-recon-period" noValidate onSubmit={onRun} data-testid="ops-recon-form">
        <label className="field">
          <span className="field-label">{t('ops.recon.provider')}</span>
          <select value={draft.provider} onChange={(event) => setDraft({ ...draft, provider: event.target.value })} data-testid="ops-recon-provider">
            <option value="">{t('ops.recon.all_providers')}</option>
            {data.providers.map((provider) => (
              <option key={provider} value={provider}>
                {provider}
              </option>
            ))}
          </select>
        </label>
        <label className="field">
          <span className="field-label">{t('ops.recon.from')}</span>
          <input type="date" value={draft.from} onChange={(event) => setDraft({ ...draft, from: event.target.value })} data-testid="ops-recon-from" />
        </label>
        <label className="field">
          <span className="field-label">{t('ops.recon.to')}</span>
          <input type="date" value={draft.to} onChange={(event) => setDraft({ ...draft, to: event.target.value })} data-testid="ops-recon-to" />
        </label>
        <div className="settings-actions">
          <button className="btn btn-primary" type="submit" data-testid="ops-recon-run">
            {t('ops.recon.run')}
          </button>
          <a className="btn btn-outline" href={csvHref(period)} download data-testid="ops-recon-csv">
            {t('ops.recon.csv')}
          </a>
        </div>
      </form>
      <FormError text={failure?.message} testId="ops-recon-error" />
      <p className="kyc-queue-summary" data-testid="ops-recon-summary">
        {data.ok ? t('ops.recon.ok') : t('ops.recon.found', { count: data.differences.length })}
      </p>
      <OpsTable
        id="ops-recon-differences"
        title={t('ops.recon.differences')}
        rows={data.differences}
        rowKey={(row) => row.id}
        columns={[
          { title: t('ops.recon.col_kind'), cell: (row) => t(`ops.recon.kind.${row.kind}`) },
          { title: t('ops.recon.col_provider'), cell: (row) => row.provider },
          { title: t('ops.recon.col_reference'), cell: (row) => row.reference || '—' },
          { title: t('ops.recon.col_provider_amount'), cell: (row) => money(row.provider_amount, row.currency) },
          { title: t('ops.recon.col_ledger_amount'), cell: (row) => money(row.ledger_amount, row.currency) },
          { title: t('ops.col_state'), cell: (row) => t(`ops.recon.state.${row.state}`) },
        ]}
      />
      <OpsTable
        id="ops-recon-daily"
        title={t('ops.recon.daily')}
        rows={data.daily}
        rowKey={(row) => `${row.day}-${row.provider}-${row.currency}`}
        columns={[
          { title: t('ops.recon.col_day'), cell: (row) => row.day },
          { title: t('ops.recon.col_provider'), cell: (row) => `${row.provider} · ${row.currency}` },
          { title: t('ops.recon.col_transactions'), cell: (row) => row.transactions },
          { title: t('ops.recon.col_increase'), cell: (row) => money(row.increase, row.currency) },
          { title: t('ops.recon.col_decrease'), cell: (row) => money(row.decrease, row.currency) },
          { title: t('ops.recon.col_net'), cell: (row) => money(row.net, row.currency) },
        ]}
      />
      <section className="kyc-queue" aria-labelledby="ops-recon-suspense-title" data-testid="ops-recon-suspense">
        <h2 id="ops-recon-suspense-title">{t('ops.recon.suspense')}</h2>
        <FormSaved text={done} testId="ops-recon-done" />
        {data.suspense.length === 0 ? (
          <p className="ops-wait">{t('ops.none')}</p>
        ) : (
          <ol className="kyc-queue-list">
            {data.suspense.map((item) => (
              <SuspenseItem
                key={item.id}
                item={item}
                onDone={(text) => {
                  setDone(text);
                  void reload();
                }}
              />
            ))}
          </ol>
        )}
      </section>
    </div>
  );
}

type TOpen = 'explain' | 'adjust' | null;

function SuspenseItem({ item, onDone }: { item: TSuspenseItem; onDone: (text: string) => void }) {
  const { t } = useTranslation();
  const money = useMoney();
  const when = useDisplayDateTime();
  const [open, setOpen] = useState<TOpen>(null);
  const title = `${t(`ops.recon.kind.${item.kind}`)} · ${item.provider} · ${item.currency}`;
  const resolution = item.explanation
    ? t('ops.recon.explained_by', { by: item.resolved_by ?? '', text: item.explanation })
    : item.state === 'resolved'
      ? t('ops.recon.adjusted_by', { by: item.resolved_by ?? '' })
      : t(`ops.recon.state.${item.state}`);
  return (
    <li className="kyc-queue-item" data-testid="ops-recon-item" data-id={item.id} data-state={item.state}>
      <div className="kyc-queue-head">
        <span className="kyc-queue-title">{title}</span>
      </div>
      <dl className="kyc-dl">
        <div className="kyc-dl-row">
          <dt>{t('ops.recon.col_reference')}</dt>
          <dd>{item.reference || '—'}</dd>
        </div>
        <div className="kyc-dl-row">
          <dt>{t('ops.recon.col_provider_amount')}</dt>
          <dd>{money(item.provider_amount, item.currency)}</dd>
        </div>
        <div className="kyc-dl-row">
          <dt>{t('ops.recon.col_ledger_amount')}</dt>
          <dd>{money(item.ledger_amount, item.currency)}</dd>
        </div>
        <div className="kyc-dl-row">
          <dt>{t('ops.recon.col_found')}</dt>
          <dd>{when(item.found_at)}</dd>
        </div>
        <div className="kyc-dl-row">
          <dt>{t('ops.recon.col_resolution')}</dt>
          <dd data-testid="ops-recon-resolution">
            {resolution}
            {item.state === 'proposed' && (
              <>
                {' '}
                <a href="/ops/approvals">{t('ops.nav_approvals')}</a>
              </>
            )}
          </dd>
        </div>
      </dl>
      {item.state === 'open' && (
        <div className="kyc-queue-actions">
          {(['explain', 'adjust'] as const).map((form) => (
            <button
              key={form}
              type="button"
              className="btn btn-outline"
              aria-expanded={open === form}
              onClick={() => setOpen(open === form ? null : form)}
              data-testid={`ops-recon-${form}`}
            >
              {t(`ops.recon.${form}`)}
            </button>
          ))}
        </div>
      )}
      {item.state === 'open' && open === 'explain' && <ExplainForm id={item.id} onDone={() => onDone(t('ops.recon.done_explained'))} />}
      {item.state === 'open' && open === 'adjust' && <AdjustForm item={item} onDone={() => onDone(t('ops.recon.done_proposed'))} />}
    </li>
  );
}

function ExplainForm({ id, onDone }: { id: string; onDone: () => void }) {
  const { t } = useTranslation();
  const { stepped, prompt } = useStepUp();
  const { sending, error, fields, submit } = useOpsAction();
  const [text, setText] = useState('');
  const onSubmit = (event: FormEvent<HTMLFormElement>) =>
    submit(event, async () => {
      await stepped(() => api(CALLS['POST /api/ops/reconciliation/suspense/{id}/explain'], { params: { id }, body: { text } }));
      onDone();
      return undefined;
    });
  return (
    <>
      <form className="ops-form" noValidate onSubmit={onSubmit} data-testid="ops-recon-explain-form">
        <TextField id="ops-recon-explain-text" label={t('ops.recon.explain_text')} maxLength={500} value={text} error={fields.text} onChange={setText} />
        <FormError text={error} testId="ops-recon-explain-error" />
        <OpsSubmit label={t('ops.recon.explain_submit')} testId="ops-recon-explain-submit" sending={sending} hidden={Boolean(prompt)} />
      </form>
      {prompt}
    </>
  );
}

type TAdjustDraft = { account_id: string; amount: string; direction: 'credit' | 'debit'; reason: TLedgerAdjustmentReason; memo: string };

/** One labelled text input of a form, with the core's refusal of it (if any) under it. */
function TextField({
  id,
  label,
  value,
  error,
  inputMode,
  maxLength,
  onChange,
}: {
  id: string;
  label: string;
  value: string;
  error: string | undefined;
  inputMode?: 'numeric' | 'decimal';
  maxLength?: number;
  onChange: (value: string) => void;
}) {
  const errorId = `${id}-error`;
  return (
    <label className="field">
      <span className="field-label">{label}</span>
      <input
        type="text"
        inputMode={inputMode}
        maxLength={maxLength}
        value={value}
        onChange={(event) => onChange(event.target.value)}
        aria-invalid={error ? 'true' : undefined}
        aria-describedby={error ? errorId : undefined}
        data-testid={id}
      />
      <FieldNote error={error} errorId={errorId} testId={errorId} />
    </label>
  );
}

/** The `ledger.adjust` proposal that settles the item: which customer's wallet, how much, which way, why. */
function AdjustForm({ item, onDone }: { item: TSuspenseItem; onDone: () => void }) {
  const { t } = useTranslation();
  const { stepped, prompt } = useStepUp();
  const { sending, error, fields, submit } = useOpsAction();
  const [draft, setDraft] = useState<TAdjustDraft>({ account_id: '', amount: '', direction: 'credit', reason: 'correction', memo: '' });
  const set = (change: Partial<TAdjustDraft>) => setDraft((current) => ({ ...current, ...change }));
  const onSubmit = (event: FormEvent<HTMLFormElement>) =>
    submit(event, async () => {
      await stepped(() =>
        api(CALLS['POST /api/ops/reconciliation/suspense/{id}/adjust'], {
          params: { id: item.id },
          body: { ...draft, account_id: Number(draft.account_id), currency: item.currency },
        }),
      );
      onDone();
      return undefined;
    });
  return (
    <>
      <form className="ops-form" noValidate onSubmit={onSubmit} data-testid="ops-recon-adjust-form">
        <p className="field-hint">{t('ops.money_lead')}</p>
        <TextField
          id="ops-recon-adjust-account"
          label={t('ops.recon.adjust_account')}
          inputMode="numeric"
          value={draft.account_id}
          error={fields.account_id}
          onChange={(account_id) => set({ account_id })}
        />
        <label className="field">
          <span className="field-label">{t('ops.money_kind')}</span>
          <select value={draft.direction} onChange={(event) => set({ direction: event.target.value as TAdjustDraft['direction'] })}>
            <option value="credit">{t('ops.money_kinds.credit')}</option>
            <option value="debit">{t('ops.money_kinds.debit')}</option>
          </select>
        </label>
        <TextField
          id="ops-recon-adjust-amount"
          label={`${t('ops.money_amount')}, ${item.currency}`}
          inputMode="decimal"
          value={draft.amount}
          error={fields.amount}
          onChange={(amount) => set({ amount })}
        />
        <AdjustmentReasonSelect value={draft.reason} onChange={(reason) => set({ reason })} />
        <TextField
          id="ops-recon-adjust-memo"
          label={t('ops.money_memo')}
          maxLength={200}
          value={draft.memo}
          error={fields.memo}
          onChange={(memo) => set({ memo })}
        />
        <FormError text={error} testId="ops-recon-adjust-error" />
        <OpsSubmit label={t('ops.recon.adjust_submit')} testId="ops-recon-adjust-submit" sending={sending} hidden={Boolean(prompt)} />
      </form>
      {prompt}
    </>
  );
}

export default function OpsReconciliation({ locale, messages, timeZone }: TIslandProps) {
  return (
    <IslandRoot locale={locale} messages={messages} timeZone={timeZone}>
      <Reconciliation />
    </IslandRoot>
  );
}
