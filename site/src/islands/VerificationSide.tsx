import type { DragEvent } from 'react';
import { useTranslation } from 'react-i18next';
import { FILE_INPUT_ACCEPT } from '@obmen/shared/files';
import type { TVerificationFile, TVerificationSide } from '@obmen/shared/verification';

/** What the page knows of a side while the user works on it: a local preview, the upload's progress, a refusal. */
export type TSideState = { preview?: string; previewIsImage?: boolean; progress?: number; error?: string };

/**
 * One side of a document on the upload form (islands/VerificationUpload.tsx): its preview, its
 * upload, and after a rejection the operator's reason with what to redo; only a side the user
 * may upload now has the buttons (on a retry, only the rejected ones).
 */
export function VerificationSide({
  side,
  state,
  file,
  editable,
  error,
  dragging,
  hydrated,
  onDragging,
  onDrop,
  onPick,
}: {
  side: TVerificationSide;
  state: TSideState;
  file: TVerificationFile | undefined;
  editable: boolean;
  error: string | undefined;
  dragging: boolean;
  hydrated: boolean;
  onDragging: (on: boolean) => void;
  onDrop: (event: DragEvent<HTMLElement>) => void;
  onPick: (file: File | undefined) => void;
}) {
  const { t } = useTranslation();
  const rejected = file?.reject_reason;
  const capture = side === 'selfie' ? 'user' : 'environment';
  return (
    <section
      className={['kyc-side', dragging ? 'dragging' : '', error ? 'has-error' : '', file && !rejected ? 'done' : ''].join(' ')}
      onDragOver={(event) => {
        event.preventDefault();
        onDragging(true);
      }}
      onDragLeave={() => onDragging(false)}
      onDrop={onDrop}
      data-testid={`side-${side}`}
      aria-labelledby={`side-title-${side}`}
    >
      <h3 id={`side-title-${side}`}>{t(`verification.side.${side}`)}</h3>
      {state.preview && state.previewIsImage ? (
        <img className="kyc-preview" src={state.preview} alt={t(`verification.side.${side}`)} />
      ) : file && file.mime.startsWith('image/') ? (
        <img className="kyc-preview" src={file.url} alt={t(`verification.side.${side}`)} />
      ) : file || state.preview ? (
        <div className="kyc-preview-file">PDF</div>
      ) : (
        <div className="kyc-preview-file">{t('kycpage.drop')}</div>
      )}
      {state.progress !== undefined && (
        <>
          <progress max={1} value={state.progress} aria-label={t('kycpage.uploading')} />
          <p className="kyc-side-status" role="status">
            {t('kycpage.uploading')}
          </p>
        </>
      )}
      {state.progress === undefined && file && !rejected && (
        <p className="kyc-side-status ok" data-testid={`uploaded-${side}`}>
          {t('kycpage.uploaded')}
        </p>
      )}
      {rejected && (
        <div className="kyc-side-rejected">
          <p className="field-error" data-testid={`rejected-${side}`}>
            {t('kycpage.rejected_because', { reason: t(`verification.reason.${rejected}`) + (file.reject_note ? ` (${file.reject_note})` : '') })}
          </p>
          <p className="field-hint" data-testid={`redo-${side}`}>
            {t('kycpage.redo', { redo: t(`verification.redo.${rejected}`) })}
          </p>
        </div>
      )}
      {error && (
        <p className="field-error" role="alert" data-testid={`error-${side}`}>
          {error}
        </p>
      )}
      {editable && (
        <div className="kyc-side-buttons">
          <label className="btn btn-outline">
            {file ? t('kycpage.replace') : t('kycpage.choose_file')}
            <input
              className="visually-hidden"
              type="file"
              accept={FILE_INPUT_ACCEPT}
              disabled={!hydrated}
              data-testid={`file-${side}`}
              onChange={(event) => onPick(event.target.files?.[0])}
            />
          </label>
          <label className="btn btn-ghost">
            {t('kycpage.take_photo')}
            <input
              className="visually-hidden"
              type="file"
              accept="image/jpeg,image/png,image/webp"
              capture={capture}
              disabled={!hydrated}
              onChange={(event) => onPick(event.target.files?.[0])}
            />
          </label>
        </div>
      )}
    </section>
  );
}
