import { useEffect, useRef, useState } from 'react';
import { useTranslation } from 'react-i18next';
import type { TOpsAuditFilter, TOpsAuditRow } from '@obmen/shared/ops';
import { CALLS } from '@obmen/shared/calls';
import { api } from '../../lib/api.ts';
import { FormError } from '../FormParts.tsx';
import { IslandRoot, type TIslandProps, useDisplayDateTime } from '../IslandRoot.tsx';
import { OpsTable } from './OpsTable.tsx';
import { OpsLoadState, opsMessage } from './OpsLoad.tsx';

/*
 * The audit trail, newest first, filtered by what the page's form put in the address (operator,
 * subject, action, period); older rows a page at a time. Each row shows the start of its hash,
 * which links it to the row before.
 */

const PAGE = 200;

function Audit({ filter }: { filter: TOpsAuditFilter }) {
  const { t } = useTranslation();
  const when = useDisplayDateTime();
  const [rows, setRows] = useState<TOpsAuditRow[] | null>(null);
  const [more, setMore] = useState(false);
  const [error, setError] = useState('');
  const generic = useRef('');
  generic.current = t('error.generic');

  async function load(before?: number) {
    try {
      const answer = await api(CALLS['GET /api/ops/audit'], { query: { ...filter, order: 'desc', ...(before ? { before } : {}) } });
      setRows((shown) => [...(before ? (shown ?? []) : []), ...answer.rows]);
      setMore(answer.rows.length === PAGE);
    } catch (err) {
      setError(opsMessage(err, generic.current));
    }
  }
  // biome-ignore lint/correctness/useExhaustiveDependencies: once per filter (the page's address)
  useEffect(() => void load(), []);

  if (!rows) return error ? <FormError text={error} /> : <OpsLoadState failure={null} />;
  return (
    <div className="ops-home" data-testid="ops-audit-page">
      <FormError text={error} />
      <OpsTable
        id="ops-audit-rows"
        title={t('ops.audit_found', { count: rows.length })}
        rows={rows}
        rowKey={(row) => String(row.id)}
        columns={[
          { title: '#', cell: (row) => row.id },
          { title: t('ops.audit_at'), cell: (row) => when(row.at) },
          { title: t('ops.audit_actor'), cell: (row) => row.actor },
          { title: t('ops.audit_action'), cell: (row) => <code>{row.action}</code> },
          { title: t('ops.audit_subject'), cell: (row) => row.subject ?? '—' },
          { title: t('ops.audit_outcome'), cell: (row) => row.outcome },
          { title: t('ops.audit_hash'), cell: (row) => <code title={row.hash}>{row.hash.slice(0, 12)}</code> },
        ]}
      />
      {more && (
        <div className="settings-actions">
          <button className="btn btn-outline" type="button" onClick={() => load(rows.at(-1)?.id)} data-testid="ops-audit-older">
            {t('ops.audit_older')}
          </button>
        </div>
      )}
    </div>
  );
}

export default function OpsAudit({ locale, messages, timeZone, filter }: TIslandProps & { filter: TOpsAuditFilter }) {
  return (
    <IslandRoot locale={locale} messages={messages} timeZone={timeZone}>
      <Audit filter={filter} />
    </IslandRoot>
  );
}
