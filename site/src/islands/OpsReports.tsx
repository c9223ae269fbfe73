import { useState, type FormEvent } from 'react';
import { useTranslation } from 'react-i18next';
import type { TOpsChatReport } from '@obmen/shared/ops-support';
import { CALLS } from '@obmen/shared/calls';
import { api, ApiError } from '../lib/api.ts';
import { useDisplayDateTime } from './IslandRoot.tsx';
import { useDuration } from './ops/OpsLoad.tsx';

/** One reported private chat: who reported whom and why, the latest messages, and the decision. */
function Report({ report, onResolved }: { report: TOpsChatReport; onResolved: () => void }) {
  const { t } = useTranslation();
  const when = useDisplayDateTime();
  const duration = useDuration();
  const [outcome, setOutcome] = useState<'no_violation' | 'violation'>('no_violation');
  const [note, setNote] = useState('');
  const [error, setError] = useState('');
  const [busy, setBusy] = useState(false);
  const titleId = `report-${report.id}`;

  async function resolve(event: FormEvent) {
    event.preventDefault();
    setBusy(true);
    setError('');
    try {
      await api(CALLS['POST /api/ops/chat-reports/{id}/resolve'], { params: { id: report.id }, body: { outcome, note } });
      onResolved();
    } catch (err) {
      setError(err instanceof ApiError ? (Object.values(err.fields)[0] ?? err.message) : (err as Error).message);
      setBusy(false);
    }
  }

  return (
    <li className="card desk-report" aria-labelledby={titleId} data-testid="desk-report">
      <h3 id={titleId}>{t('ops.report_title', { reporter: report.reporter, reported: report.reported })}</h3>
      <p className="muted">
        <time dateTime={report.created_at}>{when(report.created_at)}</time> · {duration(report.waited_ms)}
      </p>
      <p>{report.reason ? t('ops.report_reason', { reason: report.reason }) : t('ops.report_no_reason')}</p>
      <h4>{t('ops.report_messages')}</h4>
      <ol className="desk-report-messages">
        {report.messages.map((message) => (
          <li key={message.id}>
            <span className="chat-author">{t('ops.report_from', { id: message.from })}</span>{' '}
            <time dateTime={message.created_at}>{when(message.created_at, 'short')}</time>: {message.text}
            {message.files > 0 && <span className="muted"> ({t('ops.report_files', { count: message.files })})</span>}
          </li>
        ))}
      </ol>
      <form className="desk-report-form" onSubmit={resolve}>
        <fieldset>
          <legend>{t('ops.report_outcome')}</legend>
          {(['no_violation', 'violation'] as const).map((value) => (
            <label key={value} className="desk-radio">
              <input type="radio" name={`outcome-${report.id}`} value={value} checked={outcome === value} onChange={() => setOutcome(value)} />{' '}
              {t(`ops.report_${value}`)}
            </label>
          ))}
        </fieldset>
        <label className="field">
          <span className="field-label">{t('ops.report_note')}</span>
          <input type="text" maxLength={1000} value={note} onChange={(event) => setNote(event.target.value)} />
        </label>
        {error && (
          <p className="field-error" role="alert">
            {error}
          </p>
        )}
        <button type="submit" className="btn btn-primary btn-sm" disabled={busy} data-testid="desk-resolve">
          {t('ops.report_resolve')}
        </button>
      </form>
    </li>
  );
}

/** The reported chats' queue, oldest first. */
export function OpsReports({ reports, onResolved }: { reports: TOpsChatReport[]; onResolved: () => void }) {
  const { t } = useTranslation();
  if (!reports.length)
    return (
      <p className="desk-empty" data-testid="desk-reports-empty">
        {t('ops.reports_empty')}
      </p>
    );
  return (
    <ul className="desk-reports" data-testid="desk-reports">
      {reports.map((report) => (
        <Report key={report.id} report={report} onResolved={onResolved} />
      ))}
    </ul>
  );
}
