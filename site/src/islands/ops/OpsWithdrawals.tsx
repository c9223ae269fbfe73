import { type FormEvent, useCallback, useState } from 'react';
import { useTranslation } from 'react-i18next';
import { CALLS } from '@obmen/shared/calls';
import { displayMoney } from '@obmen/shared/format';
import { type TOpsPayoutTrouble, type TOpsWithdrawalItem, WITHDRAWAL_REJECT_REASONS, type TWithdrawalRejectReason } from '@obmen/shared/ops-withdrawals';
import { api } from '../../lib/api.ts';
import { useHydrated } from '../../lib/use-hydrated.ts';
import { FormError, FormSaved } from '../FormParts.tsx';
import { IslandRoot, type TIslandProps, useDisplayDateTime } from '../IslandRoot.tsx';
import { OpsLoadState, opsMessage, useDuration, useOpsLoad } from './OpsLoad.tsx';
import { OpsTable } from './OpsTable.tsx';
import { useStepUp } from './StepUp.tsx';

/*
 * The withdrawals desk: requests waiting for an operator, oldest first, each with what the
 * decision weighs (level and limits used, the account's age, earlier payouts to the same
 * destination, the last 24 hours), claimed, then approved or rejected with a reason the customer
 * reads. A large one's approval is a request a second operator confirms on /ops/approvals. Below,
 * payouts stuck at their provider (retry, or give up: the hold is released) and recent failures.
 */

const loadDesk = () => api(CALLS['GET /api/ops/withdrawals']);

type TAct = 'claim' | 'approve' | 'retry' | 'mark-failed';
const CALL_OF = {
  claim: CALLS['POST /api/ops/withdrawals/{id}/claim'],
  approve: CALLS['POST /api/ops/withdrawals/{id}/approve'],
  retry: CALLS['POST /api/ops/withdrawals/{id}/retry'],
  'mark-failed': CALLS['POST /api/ops/withdrawals/{id}/mark-failed'],
} as const;

function Desk() {
  const { t } = useTranslation();
  const hydrated = useHydrated();
  const { data, failure, reload } = useOpsLoad(loadDesk);
  const { stepped, prompt } = useStepUp();
  const [busy, setBusy] = useState('');
  const [error, setError] = useState('');
  const [done, setDone] = useState('');

  async function act(id: string, action: TAct) {
    setBusy(id);
    setError('');
    setDone('');
    try {
      const answer = await stepped(() => api(CALL_OF[action], { params: { id } }));
      if (action === 'approve') setDone(t('request' in answer && answer.request ? 'ops.wd_done_proposed' : 'ops.wd_done_approved'));
      else if (action !== 'claim') setDone(t(`ops.wd_done.${action}`));
    } catch (err) {
      setError(opsMessage(err, t('error.generic')));
    } finally {
      setBusy('');
      void reload();
    }
  }

  if (!data) return <OpsLoadState failure={failure} />;
  const overdue = data.waiting.filter((item) => item.overdue).length;
  return (
    <div className="ops-home" data-testid="ops-withdrawals">
      <section className="kyc-queue" aria-labelledby="ops-wd-title" data-testid="ops-wd-waiting">
        <h2 id="ops-wd-title">{t('ops.wd_waiting')}</h2>
        <p className="kyc-queue-summary" data-testid="ops-wd-summary">
          {t('ops.kyc.queue_summary', { total: data.waiting.length, overdue })}
        </p>
        <FormError text={error} testId="ops-wd-error" />
        <FormSaved text={done} testId="ops-wd-done" />
        {prompt}
        {data.waiting.length === 0 ? (
          <p data-testid="ops-wd-empty">{t('ops.kyc.queue_empty')}</p>
        ) : (
          <ol className="kyc-queue-list">
            {data.waiting.map((item) => (
              <Waiting
                key={item.id}
                item={item}
                targetMs={data.target_ms}
                busy={busy === item.id || !hydrated || Boolean(prompt)}
                onAct={(action) => void act(item.id, action)}
                onRejected={() => {
                  setDone(t('ops.wd_done.reject'));
                  void reload();
                }}
              />
            ))}
          </ol>
        )}
      </section>
      <Troubled rows={data.troubled} busy={busy} onAct={(id, action) => void act(id, action)} />
    </div>
  );
}

function Waiting({
  item,
  targetMs,
  busy,
  onAct,
  onRejected,
}: {
  item: TOpsWithdrawalItem;
  targetMs: number;
  busy: boolean;
  onAct: (action: TAct) => void;
  onRejected: () => void;
}) {
  const { t, i18n } = useTranslation();
  const locale = i18n.language === 'en' ? 'en' : 'ru';
  const duration = useDuration();
  const when = useDisplayDateTime();
  const [rejecting, setRejecting] = useState(false);
  const money = (amount: string, currency: string) => displayMoney(amount, currency, locale);
  const heldByOther = item.claim && !item.claim.mine;
  const title = `${money(item.amount, item.currency)} · ${t('ops.kyc.account', { id: item.account_id })}`;
  const facts: Array<[string, string]> = [
    [t('ops.wd_destination'), `${item.system}: ${item.destination}`],
    [t('ops.wd_fee'), money(item.fee, item.currency)],
    [t('ops.wd_level'), String(item.level)],
    [
      t('ops.wd_limits'),
      t('ops.wd_limits_text', {
        day: money(item.limits.used_24h, item.limits.currency),
        day_limit: money(item.limits.limit_24h, item.limits.currency),
        month: money(item.limits.used_30d, item.limits.currency),
        month_limit: money(item.limits.limit_30d, item.limits.currency),
      }),
    ],
    [t('ops.wd_account_since'), when(item.account_created_at)],
    [t('ops.wd_same_destination'), t('ops.wd_same_text', { own: item.same_destination.own, others: item.same_destination.others })],
    [t('ops.wd_sum_24h'), money(item.sum_24h, item.currency)],
  ];
  return (
    <li className={`kyc-queue-item${item.overdue ? ' overdue' : ''}`} data-testid="ops-wd-item" data-id={item.id}>
      <div className="kyc-queue-head">
        <a href={`/ops/customers/${item.account_id}`} className="kyc-queue-title">
          {title}
        </a>
        {item.large && <span className="ops-badge">{t('ops.wd_large')}</span>}
        {item.overdue && <span className="ops-badge danger">{t('ops.kyc.overdue')}</span>}
      </div>
      <p className="kyc-queue-meta">
        {t('ops.kyc.waiting', { waited: duration(item.waiting_ms), target: duration(targetMs) })} · {t('ops.kyc.submitted_at', { at: when(item.created_at) })}
      </p>
      <dl className="kyc-dl ops-wd-facts">
        {facts.map(([label, value]) => (
          <div key={label} className="kyc-dl-row">
            <dt>{label}</dt>
            <dd>{value}</dd>
          </div>
        ))}
      </dl>
      <p className="kyc-queue-meta" data-testid="ops-wd-claim">
        {item.claim ? (item.claim.mine ? t('ops.kyc.claim_mine') : t('ops.kyc.claim_other', { email: item.claim.operator })) : t('ops.kyc.claim_free')}
      </p>
      {item.request ? (
        <p className="kyc-queue-meta" data-testid="ops-wd-request">
          {t('ops.wd_request_waiting', { by: item.request.proposed_by })} <a href="/ops/approvals">{t('ops.nav_approvals')}</a>
        </p>
      ) : (
        !heldByOther && (
          <div className="kyc-queue-actions">
            {!item.claim?.mine && (
              <button type="button" className="btn btn-outline" disabled={busy} onClick={() => onAct('claim')} data-testid="ops-wd-claim-button">
                {t('ops.kyc.claim')}
              </button>
            )}
            <button
              type="button"
              className="btn btn-primary"
              disabled={busy}
              onClick={() => onAct('approve')}
              aria-label={`${t(item.large ? 'ops.wd_propose' : 'ops.wd_approve')}: ${title}`}
              data-testid="ops-wd-approve"
            >
              {t(item.large ? 'ops.wd_propose' : 'ops.wd_approve')}
            </button>
            <button
              type="button"
              className="btn btn-outline"
              disabled={busy}
              aria-expanded={rejecting}
              onClick={() => setRejecting(!rejecting)}
              data-testid="ops-wd-reject"
            >
              {t('ops.wd_reject')}
            </button>
          </div>
        )
      )}
      {rejecting && !item.request && <RejectForm id={item.id} onDone={onRejected} />}
    </li>
  );
}

/** The reason the customer reads (their language), and the operator's words if any. */
function RejectForm({ id, onDone }: { id: string; onDone: () => void }) {
  const { t } = useTranslation();
  const { stepped, prompt } = useStepUp();
  const [reason, setReason] = useState<TWithdrawalRejectReason>('details_invalid');
  const [text, setText] = useState('');
  const [error, setError] = useState('');
  const [sending, setSending] = useState(false);

  async function onSubmit(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    setSending(true);
    setError('');
    try {
      await stepped(() => api(CALLS['POST /api/ops/withdrawals/{id}/reject'], { params: { id }, body: { reason, text } }));
      onDone();
    } catch (err) {
      setError(opsMessage(err, t('error.generic')));
    } finally {
      setSending(false);
    }
  }

  return (
    <>
      <form className="ops-form" noValidate onSubmit={onSubmit} data-testid="ops-wd-reject-form">
        <label className="field">
          <span className="field-label">{t('ops.wd_reject_reason')}</span>
          <select value={reason} onChange={(event) => setReason(event.target.value as TWithdrawalRejectReason)} data-testid="ops-wd-reject-reason">
            {WITHDRAWAL_REJECT_REASONS.map((code) => (
              <option key={code} value={code}>
                {t(`withdraw.reject.${code}`)}
              </option>
            ))}
          </select>
          <span className="field-hint">{t('ops.wd_reject_hint')}</span>
        </label>
        <label className="field">
          <span className="field-label">{t('ops.wd_reject_text')}</span>
          <input type="text" maxLength={500} value={text} onChange={(event) => setText(event.target.value)} data-testid="ops-wd-reject-text" />
        </label>
        <FormError text={error} testId="ops-wd-reject-error" />
        {!prompt && (
          <div className="settings-actions">
            <button className="btn btn-primary" type="submit" disabled={sending} data-testid="ops-wd-reject-submit">
              {t('ops.wd_reject_submit')}
            </button>
          </div>
        )}
      </form>
      {prompt}
    </>
  );
}

function Troubled({ rows, busy, onAct }: { rows: TOpsPayoutTrouble[]; busy: string; onAct: (id: string, action: TAct) => void }) {
  const { t, i18n } = useTranslation();
  const locale = i18n.language === 'en' ? 'en' : 'ru';
  const when = useDisplayDateTime();
  return (
    <OpsTable
      id="ops-wd-troubled"
      title={t('ops.wd_troubled')}
      rows={rows}
      rowKey={(row) => row.id}
      columns={[
        { title: t('ops.col_at'), cell: (row) => when(row.since) },
        { title: t('ops.col_account'), cell: (row) => <a href={`/ops/customers/${row.account_id}`}>{row.account_id}</a> },
        { title: t('ops.col_amount'), cell: (row) => displayMoney(row.amount, row.currency, locale) },
        { title: t('ops.wd_destination'), cell: (row) => row.system },
        { title: t('ops.col_state'), cell: (row) => t(`ops.wd_state.${row.state}`) },
        { title: t('ops.wd_expected'), cell: (row) => (row.expected_at ? when(row.expected_at) : '—') },
        {
          title: t('ops.request_decide'),
          cell: (row) =>
            row.stuck ? (
              <span className="ops-row-actions">
                <button
                  className="btn btn-outline"
                  type="button"
                  disabled={busy === row.id}
                  onClick={() => onAct(row.id, 'retry')}
                  data-testid={`ops-wd-retry-${row.id}`}
                >
                  {t('ops.wd_retry')}
                </button>
                <button
                  className="btn btn-outline"
                  type="button"
                  disabled={busy === row.id}
                  onClick={() => onAct(row.id, 'mark-failed')}
                  data-testid={`ops-wd-fail-${row.id}`}
                >
                  {t('ops.wd_mark_failed')}
                </button>
              </span>
            ) : (
              '—'
            ),
        },
      ]}
    />
  );
}

export default function OpsWithdrawals({ locale, messages, timeZone }: TIslandProps) {
  return (
    <IslandRoot locale={locale} messages={messages} timeZone={timeZone}>
      <Desk />
    </IslandRoot>
  );
}
