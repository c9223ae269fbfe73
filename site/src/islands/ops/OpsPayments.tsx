import { type FormEvent, useCallback, useState } from 'react';
import { useTranslation } from 'react-i18next';
import { CALLS } from '@obmen/shared/calls';
import { displayMoney } from '@obmen/shared/format';
import type { TOpsBankPayment } from '@obmen/shared/ops-payments';
import { api } from '../../lib/api.ts';
import { useHydrated } from '../../lib/use-hydrated.ts';
import { FormError, FormSaved } from '../FormParts.tsx';
import { IslandRoot, type TIslandProps, useDisplayDateTime } from '../IslandRoot.tsx';
import { OpsLoadState, opsMessage, useDuration, useOpsLoad } from './OpsLoad.tsx';
import { OpsTable } from './OpsTable.tsx';
import { useStepUp } from './StepUp.tsx';

/*
 * The payments desk: bank payments held because they matched no deposit (searched by reference,
 * payer or amount; matched to the customer's deposit: credited at once, or proposed to a second
 * operator when the amounts differ), provider deliveries whose processing failed (replayed
 * through the inbox: payment providers' webhooks and card issuers' callbacks), the chain deposits
 * that wait (for confirmations, or held above the customer's limits until released here) and the
 * card orders that wait, each against its target.
 */

function Desk() {
  const { t, i18n } = useTranslation();
  const locale = i18n.language === 'en' ? 'en' : 'ru';
  const hydrated = useHydrated();
  const duration = useDuration();
  const when = useDisplayDateTime();
  const [query, setQuery] = useState('');
  const [q, setQ] = useState('');
  const load = useCallback(() => api(CALLS['GET /api/ops/payments'], { query: q ? { q } : {} }), [q]);
  const { data, failure, reload } = useOpsLoad(load);
  const { stepped, prompt } = useStepUp();
  const [busy, setBusy] = useState('');
  const [error, setError] = useState('');
  const [done, setDone] = useState('');

  async function run(id: string, call: () => Promise<{ state?: string; result?: string }>, message: (answer: { state?: string; result?: string }) => string) {
    setBusy(id);
    setError('');
    setDone('');
    try {
      setDone(message(await stepped(call)));
    } catch (err) {
      setError(opsMessage(err, t('error.generic')));
    } finally {
      setBusy('');
      void reload();
    }
  }

  const match = (id: string, deposit: string) =>
    void run(
      `bank-${id}`,
      () => api(CALLS['POST /api/ops/payments/bank/{id}/match'], { params: { id }, body: { deposit } }),
      (answer) => t(answer.state === 'requested' ? 'ops.pay_done_proposed' : 'ops.pay_done_credited'),
    );
  const replay = (inbox: 'payments' | 'cards', id: string) =>
    void run(
      `webhook-${inbox}-${id}`,
      () => api(CALLS[inbox === 'cards' ? 'POST /api/ops/payments/callbacks/{id}/replay' : 'POST /api/ops/payments/webhooks/{id}/replay'], { params: { id } }),
      (answer) => t('ops.pay_done_replayed', { result: answer.result ?? '' }),
    );
  const release = (id: string) =>
    void run(
      `chain-${id}`,
      () => api(CALLS['POST /api/ops/payments/chain/{id}/release'], { params: { id } }),
      () => t('ops.pay_done_credited'),
    );

  function onSearch(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    setQ(query.trim());
  }

  if (!data) return <OpsLoadState failure={failure} />;
  const wait = (ms: number, target: number) => t('ops.kyc.waiting', { waited: duration(ms), target: duration(target) });
  const overdue = data.bank.filter((item) => item.overdue).length;
  return (
    <div className="ops-home" data-testid="ops-payments">
      <section className="kyc-queue" aria-labelledby="ops-pay-bank-title" data-testid="ops-pay-bank">
        <h2 id="ops-pay-bank-title">{t('ops.pay_bank_title')}</h2>
        <p className="kyc-queue-summary">{t('ops.kyc.queue_summary', { total: data.bank.length, overdue })}</p>
        <form className="ops-form ops-pay-search" role="search" noValidate onSubmit={onSearch}>
          <label className="field">
            <span className="field-label">{t('ops.pay_search')}</span>
            <input type="search" maxLength={100} value={query} onChange={(event) => setQuery(event.target.value)} data-testid="ops-pay-search" />
            <span className="field-hint">{t('ops.pay_search_hint')}</span>
          </label>
          <div className="settings-actions">
            <button className="btn btn-outline" type="submit" disabled={!hydrated} data-testid="ops-pay-search-submit">
              {t('ops.pay_search_submit')}
            </button>
          </div>
        </form>
        <FormError text={error} testId="ops-pay-error" />
        <FormSaved text={done} testId="ops-pay-done" />
        {prompt}
        {data.bank.length === 0 ? (
          <p data-testid="ops-pay-bank-empty">{t('ops.kyc.queue_empty')}</p>
        ) : (
          <ol className="kyc-queue-list">
            {data.bank.map((item) => (
              <Held
                key={item.id}
                item={item}
                waiting={wait(item.waiting_ms, data.targets.bank_unmatched)}
                busy={busy === `bank-${item.id}` || !hydrated || Boolean(prompt)}
                onMatch={(deposit) => match(item.id, deposit)}
              />
            ))}
          </ol>
        )}
      </section>
      <OpsTable
        id="ops-pay-webhooks"
        title={t('ops.pay_webhooks_title')}
        rows={data.webhooks}
        rowKey={(row) => `${row.inbox}-${row.id}`}
        columns={[
          { title: t('ops.col_at'), cell: (row) => when(row.received_at) },
          { title: t('ops.pay_provider'), cell: (row) => `${t(`ops.pay_inbox.${row.inbox}`)}: ${row.provider} · ${row.event_id ?? '—'}` },
          { title: t('ops.pay_attempts'), cell: (row) => String(row.attempts) },
          { title: t('ops.pay_next_retry'), cell: (row) => (row.next_attempt_at ? when(row.next_attempt_at) : '—') },
          { title: t('ops.pay_error'), cell: (row) => row.last_error ?? '—' },
          { title: t('ops.pay_waiting'), cell: (row) => <Clock overdue={row.overdue} text={wait(row.waiting_ms, data.targets.webhooks_failed)} /> },
          {
            title: t('ops.request_decide'),
            cell: (row) => (
              <button
                className="btn btn-outline"
                type="button"
                disabled={busy === `webhook-${row.inbox}-${row.id}` || !hydrated}
                onClick={() => replay(row.inbox, row.id)}
                data-testid={`ops-pay-replay-${row.inbox === 'cards' ? 'callback-' : ''}${row.id}`}
              >
                {t('ops.pay_replay')}
              </button>
            ),
          },
        ]}
      />
      <OpsTable
        id="ops-pay-chain"
        title={t('ops.pay_chain_title')}
        rows={data.chain}
        rowKey={(row) => row.id}
        columns={[
          { title: t('ops.col_account'), cell: (row) => <a href={`/ops/customers/${row.account_id}`}>{row.account_id}</a> },
          { title: t('ops.col_amount'), cell: (row) => displayMoney(row.amount, row.currency, locale) },
          { title: t('ops.pay_confirmations'), cell: (row) => `${row.confirmations} / ${row.required_confirmations}` },
          {
            title: t('ops.pay_waiting'),
            cell: (row) => <Clock overdue={row.overdue} text={wait(row.waiting_ms, row.held_at ? data.targets.chain_held : data.targets.chain_waiting)} />,
          },
          {
            title: t('ops.request_decide'),
            cell: (row) =>
              row.held_at ? (
                <>
                  <span className="ops-badge">{t('ops.pay_held_over_limits')}</span>{' '}
                  <button
                    className="btn btn-primary"
                    type="button"
                    disabled={busy === `chain-${row.id}` || !hydrated || Boolean(prompt)}
                    onClick={() => release(row.id)}
                    data-testid={`ops-pay-release-${row.id}`}
                  >
                    {t('ops.pay_release')}
                  </button>
                </>
              ) : (
                '—'
              ),
          },
        ]}
      />
      <OpsTable
        id="ops-pay-cards"
        title={t('ops.pay_cards_title')}
        rows={data.cards}
        rowKey={(row) => row.id}
        columns={[
          { title: t('ops.col_account'), cell: (row) => <a href={`/ops/customers/${row.account_id}`}>{row.account_id}</a> },
          { title: t('ops.pay_issuer'), cell: (row) => `${row.issuer} · ${row.kind}` },
          { title: t('ops.col_state'), cell: (row) => row.status },
          { title: t('ops.pay_waiting'), cell: (row) => <Clock overdue={row.overdue} text={wait(row.waiting_ms, data.targets.card_orders)} /> },
        ]}
      />
    </div>
  );
}

const WHY_CODES = ['unknown_payment', 'amount_mismatch', 'currency_mismatch', 'wrong_state'] as const;
type TWhy = (typeof WHY_CODES)[number];
const WHY: ReadonlySet<string> = new Set(WHY_CODES);

function Clock({ overdue, text }: { overdue: boolean; text: string }) {
  const { t } = useTranslation();
  return (
    <>
      {text}
      {overdue && <span className="ops-badge danger">{t('ops.kyc.overdue')}</span>}
    </>
  );
}

/** One held payment: what arrived, why it matched nothing, the deposits it may be for, and a match by reference or id. */
function Held({ item, waiting, busy, onMatch }: { item: TOpsBankPayment; waiting: string; busy: boolean; onMatch: (deposit: string) => void }) {
  const { t, i18n } = useTranslation();
  const locale = i18n.language === 'en' ? 'en' : 'ru';
  const when = useDisplayDateTime();
  const [deposit, setDeposit] = useState('');
  const money = (amount: string) => displayMoney(amount, item.currency, locale);
  const title = `${money(item.amount)} · ${item.reference ?? t('ops.pay_no_reference')}`;
  return (
    <li className={`kyc-queue-item${item.overdue ? ' overdue' : ''}`} data-testid="ops-pay-held" data-id={item.id}>
      <div className="kyc-queue-head">
        <span className="kyc-queue-title">{title}</span>
        {item.overdue && <span className="ops-badge danger">{t('ops.kyc.overdue')}</span>}
      </div>
      <p className="kyc-queue-meta">
        {waiting} · {t('ops.pay_received_at', { at: when(item.received_at) })}
      </p>
      <dl className="kyc-dl">
        <div className="kyc-dl-row">
          <dt>{t('ops.pay_payer')}</dt>
          <dd>{item.payer ?? '—'}</dd>
        </div>
        <div className="kyc-dl-row">
          <dt>{t('ops.pay_why_label')}</dt>
          <dd>{WHY.has(item.why) ? t(`ops.pay_why.${item.why as TWhy}`) : item.why}</dd>
        </div>
      </dl>
      {item.request ? (
        <p className="kyc-queue-meta" data-testid="ops-pay-request">
          {t('ops.wd_request_waiting', { by: item.request.proposed_by })} <a href="/ops/approvals">{t('ops.nav_approvals')}</a>
        </p>
      ) : (
        <>
          {item.candidates.length > 0 && (
            <ul className="ops-pay-candidates" aria-label={t('ops.pay_candidates')}>
              {item.candidates.map((candidate) => {
                const label = t('ops.pay_candidate', {
                  reference: candidate.reference ?? candidate.id,
                  account: candidate.account_id,
                  amount: money(candidate.amount),
                });
                return (
                  <li key={candidate.id}>
                    <a href={`/ops/customers/${candidate.account_id}`}>{t('ops.kyc.account', { id: candidate.account_id })}</a>{' '}
                    <button
                      type="button"
                      className="btn btn-primary"
                      disabled={busy}
                      onClick={() => onMatch(candidate.id)}
                      aria-label={`${t('ops.pay_match')}: ${label}`}
                      data-testid="ops-pay-match-candidate"
                    >
                      {label}
                    </button>
                  </li>
                );
              })}
            </ul>
          )}
          <form
            className="ops-form"
            noValidate
            onSubmit={(event) => {
              event.preventDefault();
              if (deposit.trim()) onMatch(deposit.trim());
            }}
          >
            <label className="field">
              <span className="field-label">{t('ops.pay_deposit')}</span>
              <input type="text" maxLength={60} value={deposit} onChange={(event) => setDeposit(event.target.value)} data-testid="ops-pay-deposit" />
            </label>
            <div className="settings-actions">
              <button className="btn btn-outline" type="submit" disabled={busy} data-testid="ops-pay-match">
                {t('ops.pay_match')}
              </button>
            </div>
          </form>
        </>
      )}
    </li>
  );
}

export default function OpsPayments({ locale, messages, timeZone }: TIslandProps) {
  return (
    <IslandRoot locale={locale} messages={messages} timeZone={timeZone}>
      <Desk />
    </IslandRoot>
  );
}
