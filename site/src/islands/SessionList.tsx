import { useState } from 'react';
import { useTranslation } from 'react-i18next';
import { api, ApiError } from '../lib/api.ts';
import { CALLS } from '@obmen/shared/calls';
import { IslandRoot, type TIslandProps } from './IslandRoot.tsx';
import { FormError } from './FormParts.tsx';

/** A live session as the page shows it (times already formatted by the page). */
export type TSessionRow = { id: string; device: string | null; ip: string | null; lastSeen: string; lastSeenIso: string; current: boolean };

type TProps = TIslandProps & { sessions: TSessionRow[] };

/** The live sessions with "sign out" per device and "sign out everywhere else". */
function SessionListBody({ sessions: initial }: { sessions: TSessionRow[] }) {
  const { t } = useTranslation();
  const [sessions, setSessions] = useState(initial);
  const [status, setStatus] = useState('');
  const [error, setError] = useState('');
  const [busy, setBusy] = useState<string | null>(null);

  async function run(key: string, work: () => Promise<void>) {
    setError('');
    setStatus('');
    setBusy(key);
    try {
      await work();
    } catch (err) {
      setError(err instanceof ApiError ? err.message : t('error.generic'));
    } finally {
      setBusy(null);
    }
  }

  const revoke = (session: TSessionRow) =>
    run(session.id, async () => {
      await api(CALLS['POST /api/security/sessions/{id}/revoke'], { params: { id: session.id }, body: {} });
      setSessions((list) => list.filter((item) => item.id !== session.id));
      setStatus(t('securitypage.session_signed_out', { device: session.device ?? t('securitypage.unknown_device') }));
    });

  const revokeOthers = () =>
    run('others', async () => {
      const answer = await api(CALLS['POST /api/security/sessions/revoke_others'], { body: {} });
      setSessions((list) => list.filter((item) => item.current));
      setStatus(answer.message);
    });

  const others = sessions.filter((item) => !item.current).length;
  return (
    <div className="session-block">
      <p className="visually-hidden-status" role="status" data-testid="sessions-status">
        {status}
      </p>
      <FormError text={error} />
      <ul className="security-list" data-testid="sessions">
        {sessions.map((session) => (
          <li key={session.id} className="security-item" data-testid="session" data-current={session.current || undefined}>
            <div className="security-item-main">
              <strong>{session.device ?? t('securitypage.unknown_device')}</strong>
              {session.current && <span className="sec-badge ok">{t('securitypage.this_device')}</span>}
              <span className="security-meta">
                {session.ip ?? '—'} · {t('securitypage.last_used')} <time dateTime={session.lastSeenIso}>{session.lastSeen}</time>
              </span>
            </div>
            {!session.current && (
              <button
                className="btn btn-ghost btn-sm"
                type="button"
                onClick={() => revoke(session)}
                disabled={busy !== null}
                aria-label={t('securitypage.sign_out_device', { device: session.device ?? t('securitypage.unknown_device') })}
              >
                {t('securitypage.sign_out')}
              </button>
            )}
          </li>
        ))}
      </ul>
      {others > 0 && (
        <div className="settings-actions">
          <button className="btn btn-outline" type="button" onClick={revokeOthers} disabled={busy !== null} data-testid="sign-out-others">
            {t('securitypage.sign_out_others')}
          </button>
        </div>
      )}
    </div>
  );
}

export default function SessionList({ locale, messages, sessions }: TProps) {
  return (
    <IslandRoot locale={locale} messages={messages}>
      <SessionListBody sessions={sessions} />
    </IslandRoot>
  );
}
