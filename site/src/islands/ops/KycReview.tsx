import { useCallback, useState } from 'react';
import { useTranslation } from 'react-i18next';
import { CALLS } from '@obmen/shared/calls';
import type { TOpsKycFile, TOpsKycReview } from '@obmen/shared/ops-kyc';
import { api } from '../../lib/api.ts';
import { useHydrated } from '../../lib/use-hydrated.ts';
import { FormError } from '../FormParts.tsx';
import { KycDecision } from './KycDecision.tsx';
import { OpsLoadState, opsFailure, useDuration, useOpsLoad } from './OpsLoad.tsx';
import { useStepUp } from './StepUp.tsx';

/**
 * One submission under review: the document images beside the data the customer typed and the
 * checks the core made, the claim, and the decision. The review and the images are views of
 * personal data: they ask for a fresh second factor (the step-up form) and are audited.
 */
export function KycReview({ id }: { id: string }) {
  const { t } = useTranslation();
  const { stepped, prompt } = useStepUp();
  const load = useCallback(() => stepped(() => api(CALLS['GET /api/ops/kyc/{id}'], { params: { id } })), [stepped, id]);
  const { data, failure, reload } = useOpsLoad(load);
  // Bumped to fetch the images again after a step-up (an <img> cannot ask for the code itself).
  const [imagesRound, setImagesRound] = useState(0);

  const review = data?.review;
  return (
    <>
      {prompt}
      {review ? (
        <div className="kyc-review" data-testid="kyc-review" data-status={review.status}>
          <ReviewHead review={review} onClaimed={reload} />
          <div className="kyc-review-grid">
            <section className="kyc-review-images" aria-labelledby="kyc-images-title">
              <h2 id="kyc-images-title">{t('ops.kyc.images_title')}</h2>
              {review.files.map((file) => (
                <DocumentImage
                  key={`${file.id}-${imagesRound}`}
                  file={file}
                  round={imagesRound}
                  onRetry={async () => {
                    await reload();
                    setImagesRound((round) => round + 1);
                  }}
                />
              ))}
            </section>
            <TypedData review={review} />
          </div>
          {review.status === 'submitted' ? (
            <KycDecision review={review} />
          ) : (
            <p className="form-success" role="status" data-testid="kyc-decided">
              {t(`kycpage.status.${review.status}`)}
            </p>
          )}
        </div>
      ) : (
        !prompt && <OpsLoadState failure={failure} />
      )}
    </>
  );
}

function ReviewHead({ review, onClaimed }: { review: TOpsKycReview; onClaimed: () => Promise<void> }) {
  const { t } = useTranslation();
  const hydrated = useHydrated();
  const duration = useDuration();
  const [error, setError] = useState('');
  const [sending, setSending] = useState(false);
  async function claim() {
    setSending(true);
    setError('');
    try {
      await api(CALLS['POST /api/ops/kyc/{id}/claim'], { params: { id: review.id } });
      await onClaimed();
    } catch (err) {
      setError(opsFailure(err, t('error.generic')).message);
    }
    setSending(false);
  }
  return (
    <header className="kyc-review-head">
      <h2>
        {t(`kycpage.type.${review.type}`)} · {t('ops.kyc.account', { id: review.account_id })}
      </h2>
      <p className="kyc-queue-meta">{t('ops.kyc.waited', { waited: duration(review.waiting_ms) })}</p>
      <p className="kyc-queue-meta" data-testid="kyc-review-claim">
        {review.claim ? (review.claim.mine ? t('ops.kyc.claim_mine') : t('ops.kyc.claim_other', { email: review.claim.email })) : t('ops.kyc.claim_free')}
      </p>
      {review.status === 'submitted' && !review.claim?.mine && (
        <button type="button" className="btn btn-outline" onClick={() => void claim()} disabled={sending || !hydrated} data-testid="kyc-review-claim-button">
          {t('ops.kyc.claim')}
        </button>
      )}
      <FormError text={error} testId="kyc-claim-error" />
    </header>
  );
}

function DocumentImage({ file, round, onRetry }: { file: TOpsKycFile; round: number; onRetry: () => Promise<void> }) {
  const { t } = useTranslation();
  const [failed, setFailed] = useState(false);
  const side = t(`verification.side.${file.side}`);
  return (
    <figure className="kyc-review-figure" data-testid={`kyc-image-${file.side}`}>
      {file.mime === 'application/pdf' ? (
        <a className="kyc-preview-file" href={file.url} target="_blank" rel="noreferrer">
          PDF · {side}
        </a>
      ) : failed ? (
        <div className="kyc-preview-file">
          <p>{t('ops.kyc.image_failed')}</p>
          <button type="button" className="btn btn-outline" onClick={() => void onRetry()} data-testid={`kyc-image-retry-${file.side}`}>
            {t('ops.kyc.image_retry')}
          </button>
        </div>
      ) : (
        <img className="kyc-review-img" src={round ? `${file.url}?round=${round}` : file.url} alt={side} onError={() => setFailed(true)} />
      )}
      <figcaption>
        {side}
        {file.reject_reason && <span className="ops-badge danger">{t(`verification.reason.${file.reject_reason}`)}</span>}
      </figcaption>
    </figure>
  );
}

function TypedData({ review }: { review: TOpsKycReview }) {
  const { t } = useTranslation();
  const { document: doc, checks } = review;
  const rows: Array<[string, string]> = [
    [t('kycpage.number'), doc.number],
    [t('settingspage.last_name'), doc.last_name],
    [t('settingspage.first_name'), doc.first_name],
    [t('settingspage.middle_name'), doc.middle_name ?? '—'],
    [t('settingspage.birth_date'), doc.birth_date],
    [t('kycpage.issuing_country'), doc.issuing_country],
    [t('kycpage.issue_date'), doc.issue_date],
    [t('kycpage.expiry_date'), doc.expiry_date],
  ];
  return (
    <section className="kyc-review-data" aria-labelledby="kyc-data-title">
      <h2 id="kyc-data-title">{t('ops.kyc.data_title')}</h2>
      <dl className="kyc-dl" data-testid="kyc-data">
        {rows.map(([label, value]) => (
          <div key={label} className="kyc-dl-row">
            <dt>{label}</dt>
            <dd>{value}</dd>
          </div>
        ))}
      </dl>
      <h3>{t('ops.kyc.checks_title')}</h3>
      <ul className="kyc-checks" data-testid="kyc-checks">
        <li className={checks.expired ? 'bad' : 'good'}>{checks.expired ? t('ops.kyc.check_expired') : t('ops.kyc.check_valid')}</li>
        <li className={checks.adult ? 'good' : 'bad'}>{t(checks.adult ? 'ops.kyc.check_adult' : 'ops.kyc.check_minor', { years: checks.age_years })}</li>
        <li className={checks.duplicates.length ? 'bad' : 'good'} data-testid="kyc-check-duplicates">
          {checks.duplicates.length
            ? t('ops.kyc.check_duplicates', { accounts: checks.duplicates.map((dup) => `${dup.account_id} (${t(`kycpage.status.${dup.status}`)})`).join(', ') })
            : t('ops.kyc.check_unique')}
        </li>
      </ul>
    </section>
  );
}
