import { useCallback, useState } from 'react';
import { useTranslation } from 'react-i18next';
import { CALLS } from '@obmen/shared/calls';
import type { TOpsKycQueueItem } from '@obmen/shared/ops-kyc';
import { api } from '../../lib/api.ts';
import { useHydrated } from '../../lib/use-hydrated.ts';
import { FormError } from '../FormParts.tsx';
import { useDisplayDateTime } from '../IslandRoot.tsx';
import { OpsLoadState, opsFailure, useDuration, useOpsLoad } from './OpsLoad.tsx';

/** Where the review of one submission lives. */
export const kycReviewPath = (id: string) => `/ops/kyc/${id}`;

/**
 * The identity queue: submitted verifications, oldest first, each with how long it has waited
 * against the target (overdue ones marked), who holds it, its review (a link: looking claims
 * nothing), and a claim that opens the review.
 */
export function KycQueue() {
  const { t } = useTranslation();
  const hydrated = useHydrated();
  const load = useCallback(() => api(CALLS['GET /api/ops/kyc']), []);
  const { data, failure, reload } = useOpsLoad(load);
  const [claiming, setClaiming] = useState('');
  const [error, setError] = useState('');

  async function claim(id: string) {
    setClaiming(id);
    setError('');
    try {
      await api(CALLS['POST /api/ops/kyc/{id}/claim'], { params: { id } });
      window.location.assign(kycReviewPath(id));
    } catch (err) {
      setError(opsFailure(err, t('error.generic')).message);
      setClaiming('');
      await reload();
    }
  }

  if (!data) return <OpsLoadState failure={failure} />;
  const overdue = data.items.filter((item) => item.overdue).length;
  return (
    <section className="kyc-queue" aria-labelledby="kyc-queue-title" data-testid="kyc-queue">
      <h2 id="kyc-queue-title">{t('ops.kyc.queue_title')}</h2>
      <p className="kyc-queue-summary" data-testid="kyc-queue-summary">
        {t('ops.kyc.queue_summary', { total: data.items.length, overdue })}
      </p>
      <FormError text={error} testId="kyc-queue-error" />
      {data.items.length === 0 ? (
        <p data-testid="kyc-queue-empty">{t('ops.kyc.queue_empty')}</p>
      ) : (
        <ol className="kyc-queue-list">
          {data.items.map((item) => (
            <QueueItem key={item.id} item={item} targetMs={data.target_ms} busy={claiming === item.id || !hydrated} onClaim={() => void claim(item.id)} />
          ))}
        </ol>
      )}
    </section>
  );
}

function QueueItem({ item, targetMs, busy, onClaim }: { item: TOpsKycQueueItem; targetMs: number; busy: boolean; onClaim: () => void }) {
  const { t } = useTranslation();
  const duration = useDuration();
  const displayDateTime = useDisplayDateTime();
  const heldByOther = item.claim && !item.claim.mine;
  const title = `${t(`kycpage.type.${item.type}`)} · ${t('ops.kyc.account', { id: item.account_id })}`;
  return (
    <li className={`kyc-queue-item${item.overdue ? ' overdue' : ''}`} data-testid="kyc-item" data-id={item.id}>
      <div className="kyc-queue-head">
        <a href={kycReviewPath(item.id)} className="kyc-queue-title" data-testid="kyc-open">
          {title}
        </a>
        {item.resubmitted && <span className="ops-badge">{t('ops.kyc.resubmitted')}</span>}
        {item.overdue && <span className="ops-badge danger">{t('ops.kyc.overdue')}</span>}
      </div>
      <p className="kyc-queue-meta">
        {t('ops.kyc.waiting', { waited: duration(item.waiting_ms), target: duration(targetMs) })} ·{' '}
        {t('ops.kyc.submitted_at', { at: displayDateTime(item.submitted_at) })}
      </p>
      <p className="kyc-queue-meta" data-testid="kyc-item-claim">
        {item.claim ? (item.claim.mine ? t('ops.kyc.claim_mine') : t('ops.kyc.claim_other', { email: item.claim.email })) : t('ops.kyc.claim_free')}
      </p>
      {!heldByOther && (
        <div className="kyc-queue-actions">
          <button
            type="button"
            className="btn btn-primary"
            onClick={onClaim}
            disabled={busy}
            aria-label={`${t('ops.kyc.claim')}: ${title}`}
            data-testid="kyc-claim"
          >
            {item.claim?.mine ? t('ops.kyc.continue') : t('ops.kyc.claim')}
          </button>
        </div>
      )}
    </li>
  );
}
