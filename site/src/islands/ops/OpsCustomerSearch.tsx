import { useEffect, useState } from 'react';
import { useTranslation } from 'react-i18next';
import type { TOpsCustomerHit } from '@obmen/shared/ops-customers';
import { CALLS } from '@obmen/shared/calls';
import { api } from '../../lib/api.ts';
import { IslandRoot, type TIslandProps, useDisplayDateTime } from '../IslandRoot.tsx';
import { FormError } from '../FormParts.tsx';
import { OpsTable } from './OpsTable.tsx';
import { opsFailure } from './ops-failure.ts';

/*
 * The customers' finder: the page's plain GET form puts the words in the address (a search is a
 * link to share with a colleague); this island asks the core and lists what matched.
 */

function Results({ q }: { q: string }) {
  const { t } = useTranslation();
  const displayDateTime = useDisplayDateTime();
  const [hits, setHits] = useState<TOpsCustomerHit[] | null>(null);
  const [error, setError] = useState('');

  useEffect(() => {
    void api(CALLS['GET /api/ops/customers'], { query: { q } })
      .then((answer) => setHits(answer.customers))
      .catch((err: unknown) => setError(opsFailure(err, t)));
  }, [q, t]);

  if (error) return <FormError text={error} />;
  if (!hits) return <p className="ops-wait">{t('ops.loading')}</p>;
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
