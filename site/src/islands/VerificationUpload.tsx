import { useEffect, useRef, useState, type DragEvent, type FormEvent } from 'react';
import { useTranslation } from 'react-i18next';
import { ACCEPTED_FILE_TYPES, FILE_MAX_BYTES } from '@obmen/shared/files';
import {
  REQUIRED_SIDES,
  isoDay,
  verificationSubmitSchema,
  type TVerificationFile,
  type TVerificationSide,
  type TVerificationSubmission,
  type TVerificationType,
} from '@obmen/shared/verification';
import { api, ApiError } from '../lib/api.ts';
import { CALLS, checkInput } from '@obmen/shared/calls';
import { uploadForm } from '../lib/upload.ts';
import { ActionRow, FieldNote, FormError } from './FormParts.tsx';
import { useHydrated } from '../lib/use-hydrated.ts';
import { issueErrors } from '../lib/field-errors.ts';
import { IslandRoot, type TIslandProps, useKeyTranslate } from './IslandRoot.tsx';
import { VerificationSide, type TSideState } from './VerificationSide.tsx';

/** What the form starts with: the sent document's fields on a retry (its number is never shown, so typed again), else the personal data. */
type TPrefill = Record<'issuing_country' | 'issue_date' | 'expiry_date' | 'first_name' | 'last_name' | 'middle_name' | 'birth_date', string>;
type TProps = TIslandProps & { type: TVerificationType; current: TVerificationSubmission | null; prefill: TPrefill };

const FIELDS = [
  { name: 'number', type: 'text', autoComplete: 'off', label: 'kycpage.number' },
  { name: 'issuing_country', type: 'text', autoComplete: 'country', label: 'kycpage.issuing_country' },
  { name: 'issue_date', type: 'date', autoComplete: 'off', label: 'kycpage.issue_date' },
  { name: 'expiry_date', type: 'date', autoComplete: 'off', label: 'kycpage.expiry_date' },
  { name: 'last_name', type: 'text', autoComplete: 'family-name', label: 'settingspage.last_name' },
  { name: 'first_name', type: 'text', autoComplete: 'given-name', label: 'settingspage.first_name' },
  { name: 'middle_name', type: 'text', autoComplete: 'additional-name', label: 'settingspage.middle_name' },
  { name: 'birth_date', type: 'date', autoComplete: 'bday', label: 'settingspage.birth_date' },
] as const;

function UploadBody({ type, current: initial, prefill }: Omit<TProps, 'locale' | 'messages'>) {
  const { t } = useTranslation();
  const tk = useKeyTranslate();
  const [current, setCurrent] = useState(initial);
  const [sides, setSides] = useState<Partial<Record<TVerificationSide, TSideState>>>({});
  const [values, setValues] = useState<Record<string, string>>({ number: '', ...prefill });
  const [errors, setErrors] = useState<Record<string, string>>({});
  const [formError, setFormError] = useState('');
  const [sending, setSending] = useState(false);
  const hydrated = useHydrated();
  const [dragging, setDragging] = useState<TVerificationSide | null>(null);
  const previews = useRef<string[]>([]);
  useEffect(() => () => previews.current.forEach((url) => URL.revokeObjectURL(url)), []);

  const required = REQUIRED_SIDES[type];
  const uploadable = current ? current.uploadable_sides : [...required];
  const fileOf = (side: TVerificationSide): TVerificationFile | undefined => current?.files.find((file) => file.side === side);
  const patchSide = (side: TVerificationSide, patch: TSideState) => setSides((all) => ({ ...all, [side]: { ...all[side], ...patch } }));

  /** The draft to upload into: the open one, or a new one (spec: get new id, then upload). */
  async function draftId(): Promise<string> {
    if (current) return current.id;
    const answer = await api(CALLS['GET /api/verification/{type}/new'], { params: { type } });
    setCurrent(answer.verification.current);
    return answer.verification.current!.id;
  }

  async function pick(side: TVerificationSide, file: File | undefined) {
    if (!file) return;
    // Early hints only: the server decides by the bytes.
    if (file.size > FILE_MAX_BYTES) return patchSide(side, { error: t('kycpage.file_too_big_local'), progress: undefined });
    if (file.type && !(ACCEPTED_FILE_TYPES as readonly string[]).includes(file.type))
      return patchSide(side, { error: t('kycpage.file_type_local'), progress: undefined });
    const preview = URL.createObjectURL(file);
    previews.current.push(preview);
    patchSide(side, { preview, previewIsImage: file.type.startsWith('image/'), progress: 0, error: undefined });
    try {
      const form = new FormData();
      form.append('id', await draftId());
      form.append('side0', side);
      form.append('file0', file);
      const answer = await uploadForm(CALLS['POST /api/verification/{type}/upload'], { type }, form, (fraction) => patchSide(side, { progress: fraction }));
      setCurrent(answer.verification.current);
      patchSide(side, { progress: undefined });
      setErrors((all) => ({ ...all, [side]: '' }));
    } catch (err) {
      const message = err instanceof ApiError ? (err.fields.file0 ?? err.fields[side] ?? err.message) : t('error.generic');
      patchSide(side, { progress: undefined, error: message });
    }
  }

  function onDrop(side: TVerificationSide, event: DragEvent<HTMLElement>) {
    event.preventDefault();
    setDragging(null);
    if (uploadable.includes(side)) void pick(side, event.dataTransfer.files[0]);
  }

  async function onSubmit(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    setFormError('');
    const id = current?.id ?? '00000000-0000-4000-8000-000000000000';
    const parsed = checkInput(verificationSubmitSchema(isoDay(new Date())), { ...values, id });
    const next: Record<string, string> = parsed.success ? {} : issueErrors(tk, parsed.error.issues);
    for (const side of required) {
      const file = fileOf(side);
      if (!file) next[side] = t('verification.file_missing');
      else if (file.reject_reason && uploadable.includes(side)) next[side] = t('verification.file_still_rejected');
    }
    if (!parsed.success || Object.keys(next).length) {
      setErrors(next);
      return;
    }
    setErrors({});
    setSending(true);
    try {
      await api(CALLS['POST /api/verification/{type}/submit'], { params: { type }, body: parsed.input });
      window.location.assign('/settings/verification');
    } catch (err) {
      if (err instanceof ApiError) {
        setErrors(err.fields);
        setFormError(err.message);
      } else setFormError(t('error.generic'));
      setSending(false);
    }
  }

  return (
    <form className="settings-form" method="post" noValidate onSubmit={onSubmit} data-testid="form-verification">
      <h2>{t('kycpage.step_files')}</h2>
      <p className="settings-lead">{t('kycpage.files_rules')}</p>
      <div className="kyc-sides">
        {required.map((side) => (
          <VerificationSide
            key={side}
            side={side}
            state={sides[side] ?? {}}
            file={fileOf(side)}
            editable={uploadable.includes(side)}
            error={sides[side]?.error || errors[side]}
            dragging={dragging === side}
            hydrated={hydrated}
            onDragging={(on) => setDragging(on && uploadable.includes(side) ? side : null)}
            onDrop={(event) => onDrop(side, event)}
            onPick={(file) => void pick(side, file)}
          />
        ))}
      </div>

      <h2>{t('kycpage.step_fields')}</h2>
      <FormError text={formError} testId="form-error" />
      <div className="settings-grid">
        {FIELDS.map(({ name, type: inputType, autoComplete, label }) => (
          <label key={name} className="field">
            <span className="field-label">{t(label)}</span>
            <input
              name={name}
              type={inputType}
              autoComplete={autoComplete}
              value={values[name] ?? ''}
              aria-invalid={errors[name] ? 'true' : undefined}
              onChange={(event) => setValues({ ...values, [name]: event.target.value })}
            />
            <FieldNote error={errors[name]} testId={`error-${name}`} />
          </label>
        ))}
      </div>
      <ActionRow sending={sending} hydrated={hydrated} label={t('kycpage.submit')} sendingLabel={t('kycpage.submitting')} testId="kyc-submit" />
    </form>
  );
}

export default function VerificationUpload({ locale, messages, ...rest }: TProps) {
  return (
    <IslandRoot locale={locale} messages={messages}>
      <UploadBody {...rest} />
    </IslandRoot>
  );
}
