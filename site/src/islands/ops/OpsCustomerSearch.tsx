import { useCallback } from 'react';
import { useTranslation } from 'react-i18next';
import { CALLS } from '@obmen/shared/calls';
import { api } from '../../lib/api.ts';
import { IslandRoot, type TIslandProps, useDisplayDateTime } from '../IslandRoot.tsx';
import { OpsTable } from './OpsTable.tsx';
import { OpsLoadState, useOpsLoad } from './OpsLoad.tsx';

/*
 * The customers' finder: the page's plain GET form puts the words in the address (a search is a
 * link to share with a colleague); this island asks the core and lists what matched.
 */

function Results({ q }: { q: string }) {
  const { t } = useTranslation();
  const displayDateTime = useDisplayDateTime();
  const load = useCallback(async () => (await api(CALLS['GET /api/ops/customers'], { query: { q } })).customers, [q]);
  const { data: hits, failure } = useOpsLoad(load);

  if (!hits) return <OpsLoadState failure={failure} />;
  return (
    <OpsTable
      id="ops-customer-hits"
      title={t('ops.customers_found', { count: hits.length })}
      rowKey={(hit) => String(hit.account_id)}
      rows={hits}
      columns={[
        { title: t('ops.customer_account'), cell: (hit) => <a href={`/ops/customers/${hit.account_id}`}>{hit.account_id}</a> },
        { title: t('ops.customer_email'), cell: (hit) => hit.email },
        { title: t('ops.customer_name'), cell: (hit) => hit.name ?? '—' },
        { title: t('ops.customer_level'), cell: (hit) => hit.level },
        { title: t('ops.customer_since'), cell: (hit) => displayDateTime(hit.created_at) },
        { title: t('ops.customer_matched'), cell: (hit) => t(`ops.match.${hit.matched}`) },
      ]}
    />
  );
}

export default function OpsCustomerSearch({ locale, messages, timeZone, q }: TIslandProps & { q: string }) {
  return (
    <IslandRoot locale={locale} messages={messages} timeZone={timeZone}>
      {q ? <Results q={q} /> : null}
    </IslandRoot>
  );
}
