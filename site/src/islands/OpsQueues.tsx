import { useEffect, useState } from 'react';
import { useTranslation } from 'react-i18next';
import type { TOpsQueue } from '@obmen/shared/ops-support';
import { CALLS } from '@obmen/shared/calls';
import { api, ApiError } from '../lib/api.ts';
import { IslandRoot, type TIslandProps } from './IslandRoot.tsx';
import { useDuration } from './ops/OpsLoad.tsx';

/** Every queue's clock: how many wait, the oldest, the target, and how many are past it (overdue first to the eye). */
export function QueueTable({ queues }: { queues: TOpsQueue[] }) {
  const { t } = useTranslation();
  const duration = useDuration();
  return (
    <table className="ops-table desk-queues" data-testid="ops-queues">
      <caption className="visually-hidden">{t('ops.queues_title')}</caption>
      <thead>
        <tr>
          <th scope="col">{t('ops.queue_name')}</th>
          <th scope="col">{t('ops.queue_overdue')}</th>
          <th scope="col">{t('ops.queue_count')}</th>
          <th scope="col">{t('ops.queue_oldest')}</th>
        </tr>
      </thead>
      <tbody>
        {queues.map((queue) => (
          <tr key={queue.name} className={queue.overdue > 0 ? 'desk-overdue' : undefined} data-testid={`ops-queue-${queue.name}`}>
            <th scope="row">
              {t(`ops.queue_${queue.name}`)}
              <span className="desk-queue-target">{t('ops.queue_target', { target: duration(queue.target_ms) })}</span>
            </th>
            <td>{queue.overdue}</td>
            <td>{queue.count}</td>
            <td>{queue.oldest_ms === null ? '—' : duration(queue.oldest_ms)}</td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

function QueuesBody() {
  const { t } = useTranslation();
  const [queues, setQueues] = useState<TOpsQueue[] | null>(null);
  const [error, setError] = useState('');
  useEffect(() => {
    api(CALLS['GET /api/ops/queues'])
      .then((answer) => setQueues(answer.queues))
      .catch((err: unknown) => setError(err instanceof ApiError ? err.message : t('error.generic')));
  }, [t]);
  return (
    <section className="ops-audit" aria-labelledby="ops-queues-title">
      <h2 id="ops-queues-title">{t('ops.queues_title')}</h2>
      {queues ? (
        <section
          className="ops-table-wrap"
          aria-labelledby="ops-queues-title"
          // biome-ignore lint/a11y/noNoninteractiveTabindex: a scrolling region must be reachable by keyboard (axe scrollable-region-focusable)
          tabIndex={0}
        >
          <QueueTable queues={queues} />
        </section>
      ) : (
        <p className="ops-wait">{error || t('ops.loading')}</p>
      )}
    </section>
  );
}

/** The queues on the back office's home page. */
export default function OpsQueues({ locale, messages, timeZone }: TIslandProps) {
  return (
    <IslandRoot locale={locale} messages={messages} timeZone={timeZone}>
      <QueuesBody />
    </IslandRoot>
  );
}
