import { type FormEvent, useRef, useState } from 'react';
import { useTranslation } from 'react-i18next';
import { CALLS, type TAnswer } from '@obmen/shared/calls';
import { api } from '../../lib/api.ts';
import { uploadForm } from '../../lib/upload.ts';
import { FieldNote, FormError, FormSaved } from '../FormParts.tsx';
import { IslandRoot, type TIslandProps } from '../IslandRoot.tsx';
import { ConfigText } from './ConfigFields.tsx';
import { OpsLoadState, useOpsLoad } from './OpsLoad.tsx';
import { OpsTable } from './OpsTable.tsx';
import { useStepUp } from './StepUp.tsx';
import { OpsSubmit, useOpsAction } from './use-ops-action.tsx';

/*
 * The footer's logos: upload a picture under a name (the core sniffs it by its bytes and
 * re-encodes it; a name already used is replaced), with where it links to, or take one out.
 */

type TImage = TAnswer<(typeof CALLS)['GET /api/ops/config/footer']>['images'][number];
const loadImages = async () => (await api(CALLS['GET /api/ops/config/footer'])).images;
const LOGO_ACCEPT = '.png,.jpg,.jpeg,.webp,image/png,image/jpeg,image/webp';

function UploadForm({ onDone }: { onDone: (images: TImage[]) => void }) {
  const { t } = useTranslation();
  const { stepped, prompt } = useStepUp();
  const [values, setValues] = useState({ name: '', url: '', order: '' });
  const file = useRef<HTMLInputElement>(null);
  const { sending, error, fields, done, submit } = useOpsAction();

  const onSubmit = (event: FormEvent<HTMLFormElement>) =>
    submit(event, async () => {
      const form = new FormData();
      for (const [name, value] of Object.entries(values)) if (value.trim()) form.set(name, value.trim());
      const picked = file.current?.files?.[0];
      if (picked) form.set('file', picked);
      onDone((await stepped(() => uploadForm(CALLS['POST /api/ops/config/footer'], {}, form, () => {}))).images);
      const name = values.name.trim();
      setValues({ name: '', url: '', order: '' });
      if (file.current) file.current.value = '';
      return t('ops.config.footer_saved', { name });
    });

  return (
    <section className="ops-audit" aria-labelledby="ops-footer-upload-title">
      <h2 id="ops-footer-upload-title">{t('ops.config.footer_upload')}</h2>
      <p>{t('ops.config.footer_lead')}</p>
      <form className="ops-form" noValidate onSubmit={onSubmit} data-testid="ops-footer-form">
        <div className="ops-config-row">
          {(['name', 'url', 'order'] as const).map((name) => (
            <ConfigText
              key={name}
              id={`ops-footer-${name}`}
              name={name}
              label={t(`ops.config.footer_${name}`)}
              value={values[name]}
              error={fields[name]}
              numeric={name === 'order'}
              onChange={(value) => setValues((held) => ({ ...held, [name]: value }))}
            />
          ))}
        </div>
        <label className="field">
          <span className="field-label">{t('ops.config.footer_file')}</span>
          <input
            ref={file}
            name="file"
            type="file"
            accept={LOGO_ACCEPT}
            aria-invalid={fields.file ? 'true' : undefined}
            aria-describedby={fields.file ? 'ops-footer-file-error' : undefined}
            data-testid="ops-footer-file"
          />
          <FieldNote error={fields.file} errorId="ops-footer-file-error" testId="ops-footer-file-error" />
        </label>
        <FormError text={error} testId="ops-footer-error" />
        <FormSaved text={done} testId="ops-footer-saved" />
        <OpsSubmit label={t('ops.config.footer_submit')} testId="ops-footer-submit" sending={sending} hidden={Boolean(prompt)} />
      </form>
      {prompt}
    </section>
  );
}

function RemoveButton({ image, onDone }: { image: TImage; onDone: (images: TImage[]) => void }) {
  const { t } = useTranslation();
  const { stepped, prompt } = useStepUp();
  const { sending, error, submit } = useOpsAction();
  const onSubmit = (event: FormEvent<HTMLFormElement>) =>
    submit(event, async () => {
      onDone((await stepped(() => api(CALLS['POST /api/ops/config/footer/remove'], { body: { name: image.name } }))).images);
      return undefined;
    });
  return (
    <form noValidate onSubmit={onSubmit}>
      <FormError text={error} />
      <OpsSubmit label={t('ops.config.menus_remove')} testId={`ops-footer-remove-${image.name}`} sending={sending} hidden={Boolean(prompt)} outline />
      {prompt}
    </form>
  );
}

function Footer() {
  const { t } = useTranslation();
  const { data, failure } = useOpsLoad(loadImages);
  const [images, setImages] = useState<TImage[] | null>(null);
  if (!data) return <OpsLoadState failure={failure} />;
  const rows = images ?? data;
  return (
    <div className="ops-home" data-testid="ops-config-footer">
      <UploadForm onDone={setImages} />
      <OpsTable
        id="ops-footer-images"
        title={t('ops.config.footer_images')}
        rows={rows}
        rowKey={(row) => row.name}
        columns={[
          { title: t('ops.config.footer_logo'), cell: (row) => <img className="ops-footer-logo" src={row.src} alt={row.name} height="28" /> },
          { title: t('ops.config.footer_col_name'), cell: (row) => row.name },
          { title: t('ops.config.footer_col_url'), cell: (row) => row.url ?? '—' },
          { title: t('ops.config.footer_order'), cell: (row) => row.order },
          { title: t('ops.config.footer_source'), cell: (row) => t(row.uploaded ? 'ops.config.footer_uploaded' : 'ops.config.footer_site_file') },
          { title: t('ops.config.notify_col_action'), cell: (row) => <RemoveButton image={row} onDone={setImages} /> },
        ]}
      />
    </div>
  );
}

export default function OpsConfigFooter({ locale, messages, timeZone }: TIslandProps) {
  return (
    <IslandRoot locale={locale} messages={messages} timeZone={timeZone}>
      <Footer />
    </IslandRoot>
  );
}
