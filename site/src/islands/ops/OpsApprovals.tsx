import { useState } from 'react';
import { useTranslation } from 'react-i18next';
import type { TOpsRequest } from '@obmen/shared/ops-requests';
import { CALLS } from '@obmen/shared/calls';
import { api } from '../../lib/api.ts';
import { FormError } from '../FormParts.tsx';
import { IslandRoot, type TIslandProps, useDisplayDateTime } from '../IslandRoot.tsx';
import { OpsTable } from './OpsTable.tsx';
import { useStepUp } from './StepUp.tsx';
import { OpsLoadState, opsMessage, useOpsLoad } from './OpsLoad.tsx';
import { useRequestText } from './request-text.ts';

/*
 * Four eyes: what colleagues proposed, waiting for a second operator (oldest first, with the
 * time left before it lapses), and what was decided lately. One's own proposals can only be
 * withdrawn; the core and the database refuse the rest.
 */

type TDecision = 'approve' | 'decline' | 'withdraw';

const CALL_OF = {
  approve: CALLS['POST /api/ops/requests/{id}/approve'],
  decline: CALLS['POST /api/ops/requests/{id}/decline'],
  withdraw: CALLS['POST /api/ops/requests/{id}/withdraw'],
} as const;

const loadRequests = () => api(CALLS['GET /api/ops/requests']);

function Approvals() {
  const { t } = useTranslation();
  const when = useDisplayDateTime();
  const requestText = useRequestText();
  const { stepped, prompt } = useStepUp();
  const { data: lists, failure, reload } = useOpsLoad(loadRequests);
  const [error, setError] = useState('');
  const [busy, setBusy] = useState(false);

  async function decide(request: TOpsRequest, decision: TDecision) {
    setBusy(true);
    setError('');
    try {
      await stepped(() => api(CALL_OF[decision], { params: { id: request.id } }));
    } catch (err) {
      setError(opsMessage(err, t('error.generic')));
    } finally {
      setBusy(false);
      void reload();
    }
  }

  if (!lists) return <OpsLoadState failure={failure} />;
  const common = [
    { title: t('ops.request_action'), cell: (row: TOpsRequest) => t(`ops.request.${row.action}`) },
    { title: t('ops.request_params'), cell: (row: TOpsRequest) => requestText(row) },
    { title: t('ops.reason_label'), cell: (row: TOpsRequest) => [t(`ops.reason.${row.reason_code}`), row.reason_text].filter(Boolean).join(': ') },
    { title: t('ops.request_by'), cell: (row: TOpsRequest) => row.proposed_by },
  ];
  return (
    <div className="ops-home" data-testid="ops-approvals">
      <FormError text={error} testId="ops-approvals-error" />
      {prompt}
      <OpsTable
        id="ops-requests-pending"
        title={t('ops.requests_pending')}
        rows={lists.pending}
        rowKey={(row) => row.id}
        columns={[
          { title: t('ops.col_at'), cell: (row) => when(row.proposed_at) },
          ...common,
          {
            title: t('ops.request_decide'),
            cell: (row) => (
              <span className="ops-row-actions">
                {row.mine ? (
                  <button
                    className="btn btn-outline"
                    type="button"
                    disabled={busy}
                    onClick={() => decide(row, 'withdraw')}
                    data-testid={`ops-withdraw-${row.id}`}
                  >
                    {t('ops.request_withdraw')}
                  </button>
                ) : (
                  <>
                    <button
                      className="btn btn-primary"
                      type="button"
                      disabled={busy}
                      onClick={() => decide(row, 'approve')}
                      data-testid={`ops-approve-${row.id}`}
                    >
                      {t('ops.request_approve')}
                    </button>
                    <button
                      className="btn btn-outline"
                      type="button"
                      disabled={busy}
                      onClick={() => decide(row, 'decline')}
                      data-testid={`ops-decline-${row.id}`}
                    >
                      {t('ops.request_decline')}
                    </button>
                  </>
                )}
              </span>
            ),
          },
          { title: t('ops.request_lapses'), cell: (row) => when(row.expires_at) },
        ]}
      />
      <OpsTable
        id="ops-requests-decided"
        title={t('ops.requests_decided')}
        rows={lists.decided}
        rowKey={(row) => row.id}
        columns={[
          { title: t('ops.col_at'), cell: (row) => when(row.decided_at ?? row.expires_at) },
          ...common,
          { title: t('ops.col_state'), cell: (row) => t(`ops.request_state.${row.state}`) },
          { title: t('ops.request_decided_by'), cell: (row) => row.decided_by ?? '—' },
        ]}
      />
    </div>
  );
}

export default function OpsApprovals({ locale, messages, timeZone }: TIslandProps) {
  return (
    <IslandRoot locale={locale} messages={messages} timeZone={timeZone}>
      <Approvals />
    </IslandRoot>
  );
}
