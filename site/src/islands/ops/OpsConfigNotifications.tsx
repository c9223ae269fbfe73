import { type FormEvent, useState } from 'react';
import { useTranslation } from 'react-i18next';
import { LOCALES, NOTIFICATION_DISPLAYS, NOTIFICATION_TYPES, type TLocale } from '@obmen/shared';
import { CALLS, type TAnswer } from '@obmen/shared/calls';
import type { TOpsNotificationBody } from '@obmen/shared/ops-config';
import { api } from '../../lib/api.ts';
import { FieldNote, FormError, FormSaved } from '../FormParts.tsx';
import { IslandRoot, type TIslandProps, useDisplayDateTime } from '../IslandRoot.tsx';
import { OpsLoadState, useOpsLoad } from './OpsLoad.tsx';
import { OpsTable } from './OpsTable.tsx';
import { useStepUp } from './StepUp.tsx';
import { OpsSubmit, useOpsAction } from './use-ops-action.tsx';

/*
 * Notifications for customers: to everyone or to chosen accounts, a banner or a modal window,
 * in Russian and English, with buttons, now or at a chosen time. The preview is the core's: the
 * texts after the same sanitiser that stores and serves them. Publishing reaches open pages live;
 * a scheduled one waits in its own list, where it can be cancelled until it goes out.
 */

const loadRecent = async () => {
  const { notifications, scheduled } = await api(CALLS['GET /api/ops/config/notifications']);
  return { notifications, scheduled };
};
type TRow = TAnswer<(typeof CALLS)['GET /api/ops/config/notifications']>['notifications'][number];
type TScheduled = TAnswer<(typeof CALLS)['GET /api/ops/config/notifications']>['scheduled'][number];
type TPreview = TAnswer<(typeof CALLS)['POST /api/ops/config/notifications/preview']>['texts'];
type TText = { title: string; text: string; buttons: string };
type TDraft = {
  to: 'everyone' | 'accounts';
  accounts: string;
  display: TOpsNotificationBody['display'];
  type: TOpsNotificationBody['type'];
  closable: boolean;
  expires: string;
  sendAt: string;
  texts: Record<TLocale, TText>;
};

const EMPTY: TDraft = {
  to: 'everyone',
  accounts: '',
  display: 'inner',
  type: 'secondary',
  closable: true,
  expires: '',
  sendAt: '',
  texts: { ru: { title: '', text: '', buttons: '' }, en: { title: '', text: '', buttons: '' } },
};

/** "address, label" per line; a line without its comma stays as it is for the core to refuse. */
const buttonsOf = (lines: string) =>
  lines
    .split('\n')
    .map((line) => line.trim())
    .filter(Boolean)
    .map((line) => {
      const comma = line.indexOf(',');
      return comma < 1 ? { url: line, title: '' } : { url: line.slice(0, comma).trim(), title: line.slice(comma + 1).trim() };
    });

/** The languages given a title: a customer of another language gets the default one's. */
const textsOf = (draft: TDraft) =>
  LOCALES.filter((locale) => draft.texts[locale].title.trim() !== '').map((locale) => ({
    locale,
    title: draft.texts[locale].title,
    text: draft.texts[locale].text,
    buttons: buttonsOf(draft.texts[locale].buttons),
  }));

const bodyOf = (draft: TDraft): TOpsNotificationBody => ({
  to: draft.to,
  accounts:
    draft.to === 'accounts'
      ? draft.accounts
          .split(/[\s,;]+/)
          .filter(Boolean)
          .map(Number)
      : [],
  display: draft.display,
  type: draft.type,
  closable: draft.closable,
  expires_at: draft.expires ? new Date(draft.expires).toISOString() : null,
  send_at: draft.sendAt ? new Date(draft.sendAt).toISOString() : null,
  texts: textsOf(draft),
});

/** The notification as the customer's page draws it (the site's notice styles), without its behaviour. */
function Preview({ texts, display, type }: { texts: TPreview; display: string; type: string }) {
  const { t } = useTranslation();
  return (
    <section className="ops-config-previews" aria-labelledby="ops-notify-preview-title" data-testid="ops-notify-preview">
      <h2 id="ops-notify-preview-title">{t('ops.config.notify_preview_title')}</h2>
      {texts.map((text) => (
        <figure key={text.locale} className="ops-config-preview" lang={text.locale} data-testid={`ops-notify-preview-${text.locale}`}>
          <figcaption>{t(`ops.config.notify_locale_${text.locale}`)}</figcaption>
          <div className={`notice notice-${display === 'modal' ? 'preview-modal' : 'inner'} notice-${type}`}>
            <p className="notice-title">{text.title}</p>
            {/* biome-ignore lint/security/noDangerouslySetInnerHtml: the core's sanitiser already ran; this is exactly what customers' pages insert */}
            <div className="notice-text" dangerouslySetInnerHTML={{ __html: text.text }} />
            <div className="notice-buttons">
              {text.buttons.map((button) => (
                <span key={button.url + button.title} className="btn btn-outline">
                  {button.title}
                </span>
              ))}
            </div>
          </div>
        </figure>
      ))}
    </section>
  );
}

function Compose({ onPublished }: { onPublished: () => void }) {
  const { t } = useTranslation();
  const { stepped, prompt } = useStepUp();
  const [draft, setDraft] = useState<TDraft>(EMPTY);
  const [preview, setPreview] = useState<TPreview | null>(null);
  const { sending, error, fields, done, submit } = useOpsAction();
  const set = (change: Partial<TDraft>) => setDraft((current) => ({ ...current, ...change }));
  const setText = (locale: TLocale, change: Partial<TText>) =>
    setDraft((current) => ({ ...current, texts: { ...current.texts, [locale]: { ...current.texts[locale], ...change } } }));

  const refused = (name: string) => Object.entries(fields).find(([key]) => key === name || key.startsWith(`${name}.`))?.[1];
  const refusedText = (locale: TLocale, name: string) => {
    const index = textsOf(draft).findIndex((text) => text.locale === locale);
    return index < 0 ? undefined : refused(`texts.${index}.${name}`);
  };

  const onSubmit = (event: FormEvent<HTMLFormElement>) => {
    const publish = (event.nativeEvent as SubmitEvent).submitter?.getAttribute('value') === 'publish';
    return submit(event, async () => {
      if (!publish) {
        setPreview((await api(CALLS['POST /api/ops/config/notifications/preview'], { body: { texts: textsOf(draft) } })).texts);
        return undefined;
      }
      const { scheduled } = await stepped(() => api(CALLS['POST /api/ops/config/notifications'], { body: bodyOf(draft) }));
      setDraft(EMPTY);
      setPreview(null);
      onPublished();
      return t(scheduled === null ? 'ops.config.notify_published' : 'ops.config.notify_scheduled');
    });
  };

  return (
    <section className="ops-audit" aria-labelledby="ops-notify-title">
      <h2 id="ops-notify-title">{t('ops.config.notify_compose')}</h2>
      <form className="ops-form" noValidate onSubmit={onSubmit} data-testid="ops-notify-form">
        <fieldset className="ops-checks">
          <legend className="field-label">{t('ops.config.notify_to')}</legend>
          {(['everyone', 'accounts'] as const).map((to) => (
            <label key={to} className="check">
              <input type="radio" name="to" value={to} checked={draft.to === to} onChange={() => set({ to })} data-testid={`ops-notify-to-${to}`} />
              <span>{t(`ops.config.notify_to_${to}`)}</span>
            </label>
          ))}
        </fieldset>
        {draft.to === 'accounts' ? (
          <label className="field">
            <span className="field-label">{t('ops.config.notify_accounts')}</span>
            <input
              name="accounts"
              type="text"
              inputMode="numeric"
              value={draft.accounts}
              onChange={(event) => set({ accounts: event.target.value })}
              aria-invalid={refused('accounts') ? 'true' : undefined}
              aria-describedby={refused('accounts') ? 'ops-notify-accounts-error' : undefined}
              data-testid="ops-notify-accounts"
            />
            <FieldNote error={refused('accounts')} errorId="ops-notify-accounts-error" testId="ops-notify-accounts-error" />
          </label>
        ) : null}
        <div className="ops-config-row">
          <label className="field">
            <span className="field-label">{t('ops.config.notify_display')}</span>
            <select
              name="display"
              value={draft.display}
              onChange={(event) => set({ display: event.target.value as TDraft['display'] })}
              data-testid="ops-notify-display"
            >
              {NOTIFICATION_DISPLAYS.map((display) => (
                <option key={display} value={display}>
                  {t(`ops.config.notify_display_${display}`)}
                </option>
              ))}
            </select>
          </label>
          <label className="field">
            <span className="field-label">{t('ops.config.notify_type')}</span>
            <select name="type" value={draft.type} onChange={(event) => set({ type: event.target.value as TDraft['type'] })} data-testid="ops-notify-type">
              {NOTIFICATION_TYPES.map((type) => (
                <option key={type} value={type}>
                  {t(`ops.config.notify_type_${type}`)}
                </option>
              ))}
            </select>
          </label>
          <label className="field">
            <span className="field-label">{t('ops.config.notify_expires')}</span>
            <input
              name="expires"
              type="datetime-local"
              value={draft.expires}
              onChange={(event) => set({ expires: event.target.value })}
              aria-invalid={refused('expires_at') ? 'true' : undefined}
              aria-describedby={refused('expires_at') ? 'ops-notify-expires-error' : undefined}
              data-testid="ops-notify-expires"
            />
            <FieldNote error={refused('expires_at')} errorId="ops-notify-expires-error" testId="ops-notify-expires-error" />
          </label>
          <label className="field">
            <span className="field-label">{t('ops.config.notify_send_at')}</span>
            <input
              name="send_at"
              type="datetime-local"
              value={draft.sendAt}
              onChange={(event) => set({ sendAt: event.target.value })}
              aria-invalid={refused('send_at') ? 'true' : undefined}
              aria-describedby={refused('send_at') ? 'ops-notify-send-at-error' : undefined}
              data-testid="ops-notify-send-at"
            />
            <FieldNote error={refused('send_at')} errorId="ops-notify-send-at-error" testId="ops-notify-send-at-error" />
          </label>
        </div>
        <label className="check">
          <input
            type="checkbox"
            name="closable"
            checked={draft.closable}
            onChange={(event) => set({ closable: event.target.checked })}
            data-testid="ops-notify-closable"
          />
          <span>{t('ops.config.notify_closable')}</span>
        </label>
        <div className="ops-config-locales">
          {LOCALES.map((locale) => (
            <fieldset key={locale} className="ops-config-locale" lang={locale}>
              <legend className="field-label">{t(`ops.config.notify_locale_${locale}`)}</legend>
              <label className="field">
                <span className="field-label">{t('ops.config.notify_title')}</span>
                <input
                  name={`title-${locale}`}
                  type="text"
                  maxLength={200}
                  value={draft.texts[locale].title}
                  onChange={(event) => setText(locale, { title: event.target.value })}
                  aria-invalid={refusedText(locale, 'title') ? 'true' : undefined}
                  data-testid={`ops-notify-title-${locale}`}
                />
              </label>
              <label className="field">
                <span className="field-label">{t('ops.config.notify_text')}</span>
                <textarea
                  name={`text-${locale}`}
                  rows={4}
                  value={draft.texts[locale].text}
                  onChange={(event) => setText(locale, { text: event.target.value })}
                  data-testid={`ops-notify-text-${locale}`}
                />
              </label>
              <label className="field">
                <span className="field-label">{t('ops.config.notify_buttons')}</span>
                <textarea
                  name={`buttons-${locale}`}
                  rows={2}
                  value={draft.texts[locale].buttons}
                  onChange={(event) => setText(locale, { buttons: event.target.value })}
                  aria-invalid={refusedText(locale, 'buttons') ? 'true' : undefined}
                  aria-describedby={refusedText(locale, 'buttons') ? `ops-notify-buttons-${locale}-error` : undefined}
                  data-testid={`ops-notify-buttons-${locale}`}
                />
                <FieldNote
                  error={refusedText(locale, 'buttons')}
                  errorId={`ops-notify-buttons-${locale}-error`}
                  testId={`ops-notify-buttons-${locale}-error`}
                />
              </label>
            </fieldset>
          ))}
        </div>
        <FormError text={error} testId="ops-notify-error" />
        <FormSaved text={done} testId="ops-notify-published" />
        {prompt ? null : (
          <div className="settings-actions">
            <button className="btn btn-outline" type="submit" name="do" value="preview" disabled={sending} data-testid="ops-notify-preview-button">
              {t('ops.config.notify_preview')}
            </button>
            <button className="btn btn-primary" type="submit" name="do" value="publish" disabled={sending} data-testid="ops-notify-publish">
              {t('ops.config.notify_publish')}
            </button>
          </div>
        )}
      </form>
      {prompt}
      {preview ? <Preview texts={preview} display={draft.display} type={draft.type} /> : null}
    </section>
  );
}

function DeleteButton({ row, onDeleted }: { row: TRow; onDeleted: () => void }) {
  const { t } = useTranslation();
  const { stepped, prompt } = useStepUp();
  const { sending, error, submit } = useOpsAction();
  const onSubmit = (event: FormEvent<HTMLFormElement>) =>
    submit(event, async () => {
      await stepped(() => api(CALLS['POST /api/ops/config/notifications/{id}/delete'], { params: { id: String(row.id) } }));
      onDeleted();
      return undefined;
    });
  return (
    <form noValidate onSubmit={onSubmit}>
      <FormError text={error} />
      <OpsSubmit label={t('ops.config.notify_delete')} testId={`ops-notify-delete-${row.id}`} sending={sending} hidden={Boolean(prompt)} outline />
      {prompt}
    </form>
  );
}

function CancelButton({ row, onCancelled }: { row: TScheduled; onCancelled: () => void }) {
  const { t } = useTranslation();
  const { stepped, prompt } = useStepUp();
  const { sending, error, submit } = useOpsAction();
  const onSubmit = (event: FormEvent<HTMLFormElement>) =>
    submit(event, async () => {
      await stepped(() => api(CALLS['POST /api/ops/config/notifications/scheduled/{id}/cancel'], { params: { id: String(row.id) } }));
      onCancelled();
      return undefined;
    });
  return (
    <form noValidate onSubmit={onSubmit}>
      <FormError text={error} />
      <OpsSubmit label={t('ops.config.notify_cancel')} testId={`ops-notify-cancel-${row.id}`} sending={sending} hidden={Boolean(prompt)} outline />
      {prompt}
    </form>
  );
}

function Notifications() {
  const { t } = useTranslation();
  const when = useDisplayDateTime();
  const { data, failure, reload } = useOpsLoad(loadRecent);
  if (!data) return <OpsLoadState failure={failure} />;
  const rows = data.notifications;
  return (
    <div className="ops-home" data-testid="ops-config-notifications">
      <Compose onPublished={() => void reload()} />
      {data.scheduled.length ? (
        <OpsTable
          id="ops-notify-scheduled"
          title={t('ops.config.notify_scheduled_list')}
          rows={data.scheduled}
          rowKey={(row) => String(row.id)}
          columns={[
            { title: t('ops.config.notify_send_at_col'), cell: (row) => when(row.send_at) },
            { title: t('ops.config.notify_to'), cell: (row) => (row.to === 'everyone' ? t('ops.config.notify_to_everyone') : row.accounts.join(', ')) },
            { title: t('ops.config.notify_title'), cell: (row) => `${row.title} (${row.locales.join(', ')})` },
            { title: t('ops.config.notify_display'), cell: (row) => t(`ops.config.notify_display_${row.display as 'inner' | 'modal'}`) },
            { title: t('ops.config.notify_scheduled_by'), cell: (row) => row.scheduled_by },
            { title: t('ops.config.notify_col_action'), cell: (row) => <CancelButton row={row} onCancelled={() => void reload()} /> },
          ]}
        />
      ) : null}
      <OpsTable
        id="ops-notify-recent"
        title={t('ops.config.notify_recent')}
        rows={rows}
        rowKey={(row) => String(row.id)}
        columns={[
          { title: t('ops.config.notify_col_id'), cell: (row) => row.id },
          { title: t('ops.config.notify_to'), cell: (row) => row.account_id ?? t('ops.config.notify_to_everyone') },
          { title: t('ops.config.notify_title'), cell: (row) => `${row.title} (${row.locales.join(', ')})` },
          { title: t('ops.config.notify_display'), cell: (row) => t(`ops.config.notify_display_${row.display as 'inner' | 'modal'}`) },
          { title: t('ops.config.notify_col_when'), cell: (row) => `${when(row.created_at)}${row.expires_at ? ` – ${when(row.expires_at)}` : ''}` },
          { title: t('ops.config.notify_col_closed'), cell: (row) => row.closed_by },
          { title: t('ops.config.notify_col_action'), cell: (row) => <DeleteButton row={row} onDeleted={() => void reload()} /> },
        ]}
      />
    </div>
  );
}

export default function OpsConfigNotifications({ locale, messages, timeZone }: TIslandProps) {
  return (
    <IslandRoot locale={locale} messages={messages} timeZone={timeZone}>
      <Notifications />
    </IslandRoot>
  );
}
