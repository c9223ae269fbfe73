import { useCallback, useEffect, useState } from 'react';
import { useTranslation } from 'react-i18next';
import type { TOpsChatReport, TOpsSavedReply, TOpsSupportListResponse, TOpsSupportThreadResponse } from '@obmen/shared/ops-support';
import { CALLS } from '@obmen/shared/calls';
import { api, ApiError } from '../lib/api.ts';
import { startDeskLive, type TDeskLive } from '../lib/ops-live.ts';
import { FormError } from './FormParts.tsx';
import { IslandRoot, type TIslandProps } from './IslandRoot.tsx';
import { OpsReports } from './OpsReports.tsx';
import { OpsSupportList } from './OpsSupportList.tsx';
import { OpsSupportThread } from './OpsSupportThread.tsx';

/*
 * The support desk (/ops/support): the open (or closed) conversations, longest waiting first, one
 * conversation beside the list (in place of it on a phone), and the reported chats. The header
 * counts the customers' unanswered messages, live over /ws?ops=1; each change reloads what is shown.
 */

type TView = 'open' | 'closed' | 'reports';
const LOGIN_PATH = '/ops/login';
const VIEWS: TView[] = ['open', 'closed', 'reports'];

/** The conversation in the address (?account=…), so a reload or a shared link opens it again. */
function accountInUrl(): number | null {
  const value = Number(new URLSearchParams(window.location.search).get('account'));
  return Number.isSafeInteger(value) && value > 0 ? value : null;
}

function DeskBody({ locale }: { locale: string }) {
  const { t } = useTranslation();
  const [view, setView] = useState<TView>('open');
  const [list, setList] = useState<TOpsSupportListResponse | null>(null);
  const [reports, setReports] = useState<TOpsChatReport[] | null>(null);
  const [thread, setThread] = useState<TOpsSupportThreadResponse | null>(null);
  const [replies, setReplies] = useState<TOpsSavedReply[]>([]);
  const [selected, setSelected] = useState<number | null>(null);
  const [live, setLive] = useState<TDeskLive | null>(null);
  const [connected, setConnected] = useState(true);
  const [error, setError] = useState('');

  const failed = useCallback(
    (err: unknown) => {
      // The core hides /api/ops from anyone without an ops session: 404 means "sign in".
      if (err instanceof ApiError && err.status === 404 && err.code === 'route_not_found') window.location.replace(LOGIN_PATH);
      else setError(err instanceof ApiError ? err.message : t('error.generic'));
    },
    [t],
  );

  const load = useCallback(async () => {
    try {
      if (view === 'reports') setReports((await api(CALLS['GET /api/ops/chat-reports'])).reports);
      else setList(await api(CALLS['GET /api/ops/support'], { query: { status: view } }));
      setError('');
    } catch (err) {
      failed(err);
    }
  }, [view, failed]);

  const open = useCallback(
    async (accountId: number | null) => {
      setSelected(accountId);
      const url = new URL(window.location.href);
      if (accountId) url.searchParams.set('account', String(accountId));
      else url.searchParams.delete('account');
      window.history.replaceState(null, '', url);
      if (!accountId) return setThread(null);
      try {
        setThread(await api(CALLS['GET /api/ops/support/{account}'], { params: { account: accountId } }));
      } catch (err) {
        failed(err);
      }
    },
    [failed],
  );

  // biome-ignore lint/correctness/useExhaustiveDependencies: once, on arrival
  useEffect(() => {
    void open(accountInUrl());
    api(CALLS['GET /api/ops/support/replies'])
      .then((answer) => setReplies(answer.replies))
      .catch(() => {});
    const line = startDeskLive(setLive, setConnected);
    return () => line.stop();
  }, []);

  useEffect(() => {
    void load();
  }, [load]);

  // Something changed on the desk (a customer wrote, a colleague answered): what is shown is read again.
  // biome-ignore lint/correctness/useExhaustiveDependencies: on each live state only
  useEffect(() => {
    if (!live) return;
    void load();
    if (selected) void open(selected);
  }, [live]);

  const changed = () => {
    void load();
    if (selected) void open(selected);
  };
  const unread = live?.unread ?? list?.unread ?? 0;

  return (
    <div className={`desk ${thread ? 'desk-has-thread' : ''}`} data-testid="desk">
      <div className="desk-header">
        <p className="desk-unread" aria-live="polite" data-testid="desk-unread">
          {t('ops.support_unread', { count: unread })}
        </p>
        {!connected && (
          <p className="desk-live-lost" role="status">
            {t('ops.live_lost')}
          </p>
        )}
      </div>
      <nav className="settings-tabs desk-views" aria-label={t('ops.support_views')}>
        {VIEWS.map((name) => (
          <button
            key={name}
            type="button"
            className={`settings-tab ${view === name ? 'active' : ''}`}
            aria-pressed={view === name}
            onClick={() => setView(name)}
            data-testid={`desk-view-${name}`}
          >
            {t(`ops.support_tab_${name}`)}
          </button>
        ))}
      </nav>
      {error && <FormError text={error} />}
      {view === 'reports' ? (
        reports ? (
          <OpsReports reports={reports} onResolved={() => void load()} />
        ) : (
          <p className="ops-wait">{t('ops.loading')}</p>
        )
      ) : (
        <div className="desk-panes">
          <div className="desk-list-pane">
            {list ? (
              <OpsSupportList items={list.conversations} targetMs={list.target_ms} selected={selected} onOpen={(id) => void open(id)} />
            ) : (
              <p className="ops-wait">{t('ops.loading')}</p>
            )}
          </div>
          <div className="desk-thread-pane">
            {thread ? (
              <OpsSupportThread
                item={thread.conversation}
                messages={thread.messages}
                replies={replies}
                locale={locale}
                onChanged={changed}
                onBack={() => void open(null)}
              />
            ) : (
              <p className="desk-pick">{t('ops.support_pick')}</p>
            )}
          </div>
        </div>
      )}
    </div>
  );
}

export default function OpsSupport({ locale, messages, timeZone }: TIslandProps) {
  return (
    <IslandRoot locale={locale} messages={messages} timeZone={timeZone}>
      <DeskBody locale={locale} />
    </IslandRoot>
  );
}
