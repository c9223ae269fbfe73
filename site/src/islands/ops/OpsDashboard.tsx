import { useTranslation } from 'react-i18next';
import type { TOpsQueue } from '@obmen/shared/ops-support';
import type { THealthPart, TVolume } from '@obmen/shared/ops-reconciliation';
import { displayMoney } from '@obmen/shared/format';
import { CALLS } from '@obmen/shared/calls';
import { api } from '../../lib/api.ts';
import { IslandRoot, type TIslandProps, useDisplayDateTime } from '../IslandRoot.tsx';
import { OpsLoadState, useDuration, useOpsLoad } from './OpsLoad.tsx';
import { OpsTable } from './OpsTable.tsx';

/*
 * The back office's home: the queues this operator's roles work (overdue first), today's money
 * movements by currency, and the health of the parts money depends on: one call, the figures
 * /metrics reads.
 */

const loadDashboard = () => api(CALLS['GET /api/ops/dashboard']);

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

function Volumes({ day, volumes }: { day: string; volumes: TVolume[] }) {
  const { t, i18n } = useTranslation();
  const locale = i18n.language === 'en' ? 'en' : 'ru';
  return (
    <OpsTable
      id="ops-home-volumes"
      title={t('ops.home.volumes', { day })}
      rows={volumes}
      rowKey={(row) => `${row.kind}-${row.currency}`}
      columns={[
        { title: t('ops.col_kind'), cell: (row) => t(`ops.home.kind.${row.kind}`) },
        { title: t('ops.col_currency'), cell: (row) => row.currency },
        { title: t('ops.home.col_count'), cell: (row) => row.count },
        { title: t('ops.col_amount'), cell: (row) => displayMoney(row.amount, row.currency, locale) },
      ]}
    />
  );
}

function Health({ parts }: { parts: THealthPart[] }) {
  const { t } = useTranslation();
  const when = useDisplayDateTime();
  const detail = (part: THealthPart) =>
    [
      part.value === null
        ? ''
        : part.part === 'database'
          ? t('ops.home.value.database', { value: part.value })
          : part.part === 'webhooks'
            ? t('ops.home.value.webhooks', { value: part.value })
            : '',
      part.at ? t('ops.home.last_run', { at: when(part.at) }) : '',
    ]
      .filter(Boolean)
      .join(' · ');
  return (
    <section className="ops-audit" aria-labelledby="ops-home-health-title" data-testid="ops-home-health">
      <h2 id="ops-home-health-title">{t('ops.home.health')}</h2>
      <ul className="ops-health">
        {parts.map((part) => (
          <li key={part.part} className={`ops-health-${part.state}`} data-testid={`ops-health-${part.part}`}>
            <span className="ops-health-name">{t(`ops.home.part.${part.part}`)}</span>
            <span className="ops-health-state">{t(`ops.home.state.${part.state}`)}</span>
            {detail(part) && <span className="ops-health-detail">{detail(part)}</span>}
          </li>
        ))}
      </ul>
    </section>
  );
}

function Dashboard() {
  const { t } = useTranslation();
  const { data, failure } = useOpsLoad(loadDashboard);
  if (!data) return <OpsLoadState failure={failure} />;
  return (
    <div className="ops-home" data-testid="ops-dashboard">
      <section className="ops-audit" aria-labelledby="ops-queues-title">
        <h2 id="ops-queues-title">{t('ops.home.queues')}</h2>
        {data.queues.length === 0 ? (
          <p className="ops-wait">{t('ops.home.no_queues')}</p>
        ) : (
          <section
            className="ops-table-wrap"
            aria-labelledby="ops-queues-title"
            // biome-ignore lint/a11y/noNoninteractiveTabindex: a scrolling region must be reachable by keyboard (axe scrollable-region-focusable)
            tabIndex={0}
          >
            <QueueTable queues={data.queues} />
          </section>
        )}
      </section>
      <Volumes day={data.day} volumes={data.volumes} />
      <Health parts={data.health} />
    </div>
  );
}

/** The back office's home page: what waits, today's volumes, the parts' health. */
export default function OpsDashboard({ locale, messages, timeZone }: TIslandProps) {
  return (
    <IslandRoot locale={locale} messages={messages} timeZone={timeZone}>
      <Dashboard />
    </IslandRoot>
  );
}
