import { useState, type FormEvent } from 'react';
import { useTranslation } from 'react-i18next';
import { CALLS } from '@obmen/shared/calls';
import type { TOpsKycRejectBody, TOpsKycReview } from '@obmen/shared/ops-kyc';
import { REJECT_REASONS, type TRejectReason, type TVerificationSide } from '@obmen/shared/verification';
import { api, ApiError } from '../../lib/api.ts';
import { useHydrated } from '../../lib/use-hydrated.ts';
import { FieldNote, FormError } from '../FormParts.tsx';
import { opsFailure } from './OpsLoad.tsx';
import { useStepUp } from './StepUp.tsx';

type TChoice = { reason: TRejectReason | ''; note: string };

/**
 * The decision on a submission: each file accepted or rejected with a reason from the catalogue
 * (the customer reads it with what to redo, and sends only those files again); approval when
 * every file is accepted. Both ask for a fresh second factor (the step-up form, beside the button).
 */
export function KycDecision({ review }: { review: TOpsKycReview }) {
  const { t } = useTranslation();
  const { stepped, prompt } = useStepUp();
  const hydrated = useHydrated();
  const [choices, setChoices] = useState<Partial<Record<TVerificationSide, TChoice>>>({});
  const [fields, setFields] = useState<Record<string, string>>({});
  const [error, setError] = useState('');
  const [sending, setSending] = useState(false);
  const [done, setDone] = useState<'approved' | 'rejected' | null>(null);
  const rejected = review.files.flatMap((file) => {
    const choice = choices[file.side];
    return choice?.reason ? [{ side: file.side, reason: choice.reason, ...(choice.note.trim() ? { note: choice.note.trim() } : {}) }] : [];
  });
  const choose = (side: TVerificationSide, patch: Partial<TChoice>) =>
    setChoices((all) => ({ ...all, [side]: { reason: '', note: '', ...all[side], ...patch } }));

  async function decide(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    setError('');
    setFields({});
    setSending(true);
    try {
      const params = { id: review.id };
      const body: TOpsKycRejectBody = { files: rejected };
      const answer = await stepped(() =>
        rejected.length ? api(CALLS['POST /api/ops/kyc/{id}/reject'], { params, body }) : api(CALLS['POST /api/ops/kyc/{id}/approve'], { params }),
      );
      setDone(answer.verification_status === 'approved' ? 'approved' : 'rejected');
    } catch (err) {
      if (err instanceof ApiError) setFields(err.fields);
      setError(opsFailure(err, t('error.generic')).message);
    }
    setSending(false);
  }

  if (done)
    return (
      <div className="kyc-decided" data-testid="kyc-decided">
        <p className="form-success" role="status">
          {t(done === 'approved' ? 'ops.kyc.done_approved' : 'ops.kyc.done_rejected')}
        </p>
        <a className="btn btn-primary" href="/ops/kyc" data-testid="kyc-back">
          {t('ops.kyc.back_to_queue')}
        </a>
      </div>
    );
  return (
    <form className="kyc-decision" method="post" noValidate onSubmit={decide} data-testid="kyc-decision">
      <h2>{t('ops.kyc.decision_title')}</h2>
      <p className="settings-lead">{t('ops.kyc.decision_lead')}</p>
      <FormError text={error} testId="kyc-decision-error" />
      <div className="kyc-decision-files">
        {review.files.map((file, index) => {
          const choice = choices[file.side] ?? { reason: '', note: '' };
          const reasonError = fields[`files.${rejected.findIndex((item) => item.side === file.side)}.reason`];
          const noteId = `kyc-note-${file.side}`;
          return (
            <fieldset key={file.id} className="kyc-decision-file" data-testid={`kyc-decide-${file.side}`}>
              <legend>{t(`verification.side.${file.side}`)}</legend>
              <label className="field">
                <span className="field-label">{t('ops.kyc.file_decision')}</span>
                <select
                  value={choice.reason}
                  onChange={(event) => choose(file.side, { reason: event.target.value as TChoice['reason'] })}
                  aria-invalid={reasonError ? 'true' : undefined}
                  data-testid={`kyc-reason-${file.side}`}
                >
                  <option value="">{t('ops.kyc.accept_file')}</option>
                  {REJECT_REASONS.map((reason) => (
                    <option key={reason} value={reason}>
                      {t('ops.kyc.reject_with', { reason: t(`verification.reason.${reason}`) })}
                    </option>
                  ))}
                </select>
                <FieldNote error={reasonError} testId={`kyc-reason-error-${index}`} />
              </label>
              {choice.reason && (
                <label className="field">
                  <span className="field-label">{t(choice.reason === 'other' ? 'ops.kyc.note_required' : 'ops.kyc.note_optional')}</span>
                  <input
                    id={noteId}
                    type="text"
                    maxLength={500}
                    value={choice.note}
                    onChange={(event) => choose(file.side, { note: event.target.value })}
                    data-testid={`kyc-note-${file.side}`}
                  />
                </label>
              )}
              {choice.reason && <p className="field-hint">{t('kycpage.redo', { redo: t(`verification.redo.${choice.reason}`) })}</p>}
            </fieldset>
          );
        })}
      </div>
      {prompt}
      <div className="settings-actions">
        <button
          className={`btn ${rejected.length ? 'btn-danger' : 'btn-primary'}`}
          type="submit"
          disabled={sending || !hydrated}
          data-testid={rejected.length ? 'kyc-reject' : 'kyc-approve'}
        >
          {rejected.length ? t('ops.kyc.reject', { files: rejected.length }) : t('ops.kyc.approve')}
        </button>
      </div>
    </form>
  );
}
