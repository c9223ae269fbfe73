import { type FormEvent, useEffect, useState } from 'react';
import { useTranslation } from 'react-i18next';
import type { TLocale } from '@obmen/shared';
import { CALLS } from '@obmen/shared/calls';
import { api } from '../../lib/api.ts';
import { FieldNote, FormError, FormSaved } from '../FormParts.tsx';
import { IslandRoot, type TIslandProps, useDisplayDateTime } from '../IslandRoot.tsx';
import { ConfigText, LocaleSelect } from './ConfigFields.tsx';
import { OpsLoadState, useOpsLoad } from './OpsLoad.tsx';
import { OpsTable } from './OpsTable.tsx';
import { useStepUp } from './StepUp.tsx';
import { OpsSubmit, useOpsAction } from './use-ops-action.tsx';

/*
 * Articles in Markdown (HTML passes through it) with a live preview that is the core's: the
 * same conversion and the same sanitiser as on save and on the way out, so what the preview
 * shows is what the page will serve.
 */

const loadArticles = async () => ({ articles: (await api(CALLS['GET /api/ops/config/articles'])).articles });
type TDraft = { name: string; locale: TLocale; title: string; markdown: string };
const EMPTY: TDraft = { name: '', locale: 'ru', title: '', markdown: '' };
/** How long the typing pauses before the preview is asked for. */
const PREVIEW_AFTER_MS = 300;

function useLivePreview(markdown: string): string {
  const [html, setHtml] = useState('');
  useEffect(() => {
    if (!markdown.trim()) {
      setHtml('');
      return;
    }
    let current = true;
    const timer = setTimeout(() => {
      api(CALLS['POST /api/ops/config/articles/preview'], { body: { markdown } })
        .then((answer) => current && setHtml(answer.html))
        .catch(() => undefined);
    }, PREVIEW_AFTER_MS);
    return () => {
      current = false;
      clearTimeout(timer);
    };
  }, [markdown]);
  return html;
}

function Editor({ draft, setDraft, onSaved }: { draft: TDraft; setDraft: (draft: TDraft) => void; onSaved: () => void }) {
  const { t } = useTranslation();
  const { stepped, prompt } = useStepUp();
  const { sending, error, fields, done, submit } = useOpsAction();
  const html = useLivePreview(draft.markdown);
  const onSubmit = (event: FormEvent<HTMLFormElement>) =>
    submit(event, async () => {
      await stepped(() => api(CALLS['POST /api/ops/config/articles'], { body: draft }));
      onSaved();
      return t('ops.config.articles_saved', { name: draft.name });
    });
  const input = (name: 'name' | 'title') => (
    <ConfigText
      id={`ops-article-${name}`}
      name={name}
      label={t(`ops.config.articles_${name}`)}
      value={draft[name]}
      error={fields[name]}
      onChange={(value) => setDraft({ ...draft, [name]: value })}
    />
  );
  return (
    <section className="ops-audit" aria-labelledby="ops-article-title">
      <h2 id="ops-article-title">{t('ops.config.articles_edit')}</h2>
      <form className="ops-form ops-config-wide" noValidate onSubmit={onSubmit} data-testid="ops-article-form">
        <div className="ops-config-row">
          {input('name')}
          <LocaleSelect id="ops-article-locale" value={draft.locale} onChange={(locale) => setDraft({ ...draft, locale })} />
        </div>
        {input('title')}
        <div className="ops-config-locales">
          <label className="field">
            <span className="field-label">{t('ops.config.articles_markdown')}</span>
            <textarea
              name="markdown"
              rows={14}
              value={draft.markdown}
              onChange={(event) => setDraft({ ...draft, markdown: event.target.value })}
              aria-invalid={fields.markdown ? 'true' : undefined}
              aria-describedby={fields.markdown ? 'ops-article-markdown-error' : undefined}
              data-testid="ops-article-markdown"
            />
            <FieldNote error={fields.markdown} errorId="ops-article-markdown-error" testId="ops-article-markdown-error" />
          </label>
          <section className="ops-config-preview" aria-labelledby="ops-article-preview-title" aria-live="polite">
            <h3 id="ops-article-preview-title" className="field-label">
              {t('ops.config.articles_preview')}
            </h3>
            {/* biome-ignore lint/security/noDangerouslySetInnerHtml: the core's sanitiser already ran; this is exactly what the article page serves */}
            <div className="prose ops-config-article" lang={draft.locale} data-testid="ops-article-preview" dangerouslySetInnerHTML={{ __html: html }} />
          </section>
        </div>
        <FormError text={error} testId="ops-article-error" />
        <FormSaved text={done} testId="ops-article-saved" />
        <OpsSubmit label={t('ops.config.articles_publish')} testId="ops-article-submit" sending={sending} hidden={Boolean(prompt)} />
      </form>
      {prompt}
    </section>
  );
}

function Articles() {
  const { t } = useTranslation();
  const when = useDisplayDateTime();
  const { data, failure, reload } = useOpsLoad(loadArticles);
  const [draft, setDraft] = useState<TDraft>(EMPTY);
  const [error, setError] = useState('');
  if (!data) return <OpsLoadState failure={failure} />;
  const open = async (name: string, locale: TLocale) => {
    setError('');
    try {
      const { article } = await api(CALLS['GET /api/ops/config/articles/{name}/{locale}'], { params: { name, locale } });
      setDraft({ name: article.name, locale: article.locale, title: article.title, markdown: article.body_html });
    } catch {
      setError(t('error.generic'));
    }
  };
  return (
    <div className="ops-home" data-testid="ops-config-articles">
      <Editor draft={draft} setDraft={setDraft} onSaved={() => void reload()} />
      <FormError text={error} />
      <OpsTable
        id="ops-articles"
        title={t('ops.config.section_articles')}
        rows={data.articles}
        rowKey={(row) => `${row.name}:${row.locale}`}
        columns={[
          {
            title: t('ops.config.articles_name'),
            cell: (row) => (
              <button
                type="button"
                className="ops-link-button"
                onClick={() => void open(row.name, row.locale)}
                data-testid={`ops-article-open-${row.name}-${row.locale}`}
              >
                {row.name} ({row.locale})
              </button>
            ),
          },
          { title: t('ops.config.articles_title'), cell: (row) => row.title },
          { title: t('ops.config.articles_updated'), cell: (row) => when(row.updated_at) },
        ]}
      />
    </div>
  );
}

export default function OpsConfigArticles({ locale, messages, timeZone }: TIslandProps) {
  return (
    <IslandRoot locale={locale} messages={messages} timeZone={timeZone}>
      <Articles />
    </IslandRoot>
  );
}
