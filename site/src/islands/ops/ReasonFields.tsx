import { useTranslation } from 'react-i18next';
import { OPS_REASONS, type TOpsReason } from '@obmen/shared/ops';
import { LEDGER_ADJUSTMENT_REASONS, type TLedgerAdjustmentReason } from '@obmen/shared/ops-requests';
import { FieldNote } from '../FormParts.tsx';

export type TReason = { reason: TOpsReason; text: string };
export const NO_REASON: TReason = { reason: 'customer_request', text: '' };

/** Why the operator acts: a reason from the catalogue and words of their own (needed for "other"). */
export function ReasonFields({ id, value, error, onChange }: { id: string; value: TReason; error: string | undefined; onChange: (value: TReason) => void }) {
  const { t } = useTranslation();
  return (
    <>
      <label className="field">
        <span className="field-label">{t('ops.reason_label')}</span>
        <select
          name="reason"
          value={value.reason}
          onChange={(event) => onChange({ ...value, reason: event.target.value as TOpsReason })}
          data-testid={`${id}-reason`}
        >
          {OPS_REASONS.map((code) => (
            <option key={code} value={code}>
              {t(`ops.reason.${code}`)}
            </option>
          ))}
        </select>
      </label>
      <label className="field">
        <span className="field-label">{t('ops.reason_text')}</span>
        <input
          name="text"
          type="text"
          maxLength={500}
          value={value.text}
          onChange={(event) => onChange({ ...value, text: event.target.value })}
          aria-invalid={error ? 'true' : undefined}
          aria-describedby={error ? `${id}-text-error` : undefined}
          data-testid={`${id}-text`}
        />
        <FieldNote error={error} errorId={`${id}-text-error`} testId={`${id}-text-error`} />
      </label>
    </>
  );
}

/** What a balance adjustment is for, from the ledger's closed catalogue (the house account it posts against). */
export function AdjustmentReasonSelect({
  value,
  testId,
  onChange,
}: {
  value: TLedgerAdjustmentReason;
  testId?: string;
  onChange: (value: TLedgerAdjustmentReason) => void;
}) {
  const { t } = useTranslation();
  return (
    <label className="field">
      <span className="field-label">{t('ops.money_adjustment')}</span>
      <select name="adjustment" value={value} onChange={(event) => onChange(event.target.value as TLedgerAdjustmentReason)} data-testid={testId}>
        {LEDGER_ADJUSTMENT_REASONS.map((code) => (
          <option key={code} value={code}>
            {t(`ops.adjustment.${code}`)}
          </option>
        ))}
      </select>
    </label>
  );
}
