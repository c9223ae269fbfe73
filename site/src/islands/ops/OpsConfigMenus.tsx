import { type FormEvent, useState } from 'react';
import { useTranslation } from 'react-i18next';
import { LOCALES, MENU_NAMES, type TLocale, type TMenuName, type TMenus } from '@obmen/shared';
import { CALLS } from '@obmen/shared/calls';
import { api } from '../../lib/api.ts';
import { FormError, FormSaved } from '../FormParts.tsx';
import { IslandRoot, type TIslandProps } from '../IslandRoot.tsx';
import { ConfigText, LocaleSelect } from './ConfigFields.tsx';
import { OpsLoadState, useOpsLoad } from './OpsLoad.tsx';
import { OpsTable } from './OpsTable.tsx';
import { useStepUp } from './StepUp.tsx';
import { OpsSubmit, useOpsAction } from './use-ops-action.tsx';

/*
 * The header, footer and main menus per language, as `menu:set` and `menu:remove` change them:
 * an item is known by its language, menu and address; setting it again changes its title and order.
 */

const loadMenus = async () => ({ menus: (await api(CALLS['GET /api/ops/config/menus'])).menus });
type TAll = Record<TLocale, TMenus>;
type TDraft = { locale: TLocale; menu: TMenuName; url: string; title: string; order: string };
const EMPTY: TDraft = { locale: 'ru', menu: 'header_menu', url: '', title: '', order: '0' };

function Remove({ target, onDone }: { target: Pick<TDraft, 'locale' | 'menu' | 'url'>; onDone: (menus: TAll) => void }) {
  const { t } = useTranslation();
  const { stepped, prompt } = useStepUp();
  const { sending, error, submit } = useOpsAction();
  const onSubmit = (event: FormEvent<HTMLFormElement>) =>
    submit(event, async () => {
      onDone((await stepped(() => api(CALLS['POST /api/ops/config/menus/remove'], { body: target }))).menus);
      return undefined;
    });
  return (
    <form noValidate onSubmit={onSubmit}>
      <FormError text={error} />
      <OpsSubmit
        label={t('ops.config.menus_remove')}
        testId={`ops-menu-remove-${target.locale}-${target.menu}-${target.url}`}
        sending={sending}
        hidden={Boolean(prompt)}
        outline
      />
      {prompt}
    </form>
  );
}

function Menus() {
  const { t } = useTranslation();
  const { data, failure } = useOpsLoad(loadMenus);
  const [menus, setMenus] = useState<TAll | null>(null);
  const [draft, setDraft] = useState<TDraft>(EMPTY);
  const { stepped, prompt } = useStepUp();
  const { sending, error, fields, done, submit } = useOpsAction();
  if (!data) return <OpsLoadState failure={failure} />;
  const all = menus ?? data.menus;
  const onSubmit = (event: FormEvent<HTMLFormElement>) =>
    submit(event, async () => {
      const body = { locale: draft.locale, menu: draft.menu, url: draft.url.trim(), title: draft.title, order: Number(draft.order) || 0 };
      setMenus((await stepped(() => api(CALLS['POST /api/ops/config/menus'], { body }))).menus);
      return t('ops.config.menus_saved');
    });
  const text = (name: 'url' | 'title' | 'order') => (
    <ConfigText
      id={`ops-menu-${name}`}
      name={name}
      label={t(`ops.config.menus_${name}`)}
      value={draft[name]}
      error={fields[name]}
      numeric={name === 'order'}
      onChange={(value) => setDraft({ ...draft, [name]: value })}
    />
  );
  return (
    <div className="ops-home" data-testid="ops-config-menus">
      <section className="ops-audit" aria-labelledby="ops-menu-form-title">
        <h2 id="ops-menu-form-title">{t('ops.config.menus_change')}</h2>
        <form className="ops-form" noValidate onSubmit={onSubmit} data-testid="ops-menu-form">
          <div className="ops-config-row">
            <LocaleSelect id="ops-menu-locale" value={draft.locale} onChange={(locale) => setDraft({ ...draft, locale })} />
            <label className="field">
              <span className="field-label">{t('ops.config.menus_menu')}</span>
              <select
                name="menu"
                value={draft.menu}
                onChange={(event) => setDraft({ ...draft, menu: event.target.value as TMenuName })}
                data-testid="ops-menu-menu"
              >
                {MENU_NAMES.map((menu) => (
                  <option key={menu} value={menu}>
                    {t(`ops.config.menus_${menu}`)}
                  </option>
                ))}
              </select>
            </label>
          </div>
          {text('url')}
          {text('title')}
          {text('order')}
          <FormError text={error} testId="ops-menu-error" />
          <FormSaved text={done} testId="ops-menu-saved" />
          <OpsSubmit label={t('ops.config.save')} testId="ops-menu-submit" sending={sending} hidden={Boolean(prompt)} />
        </form>
        {prompt}
      </section>
      {LOCALES.flatMap((locale) =>
        MENU_NAMES.map((menu) => (
          <OpsTable
            key={`${locale}-${menu}`}
            id={`ops-menu-${locale}-${menu}`}
            title={`${t(`ops.config.menus_${menu}`)}, ${t(`ops.config.notify_locale_${locale}`).toLowerCase()}`}
            rows={all[locale][menu]}
            rowKey={(item) => item.url}
            columns={[
              { title: t('ops.config.menus_title'), cell: (item) => item.title },
              {
                title: t('ops.config.menus_url'),
                cell: (item) => (
                  <button
                    type="button"
                    className="ops-link-button"
                    onClick={() => setDraft({ locale, menu, url: item.url, title: item.title, order: String(item.order) })}
                    data-testid={`ops-menu-edit-${locale}-${menu}-${item.url}`}
                  >
                    {item.url}
                  </button>
                ),
              },
              { title: t('ops.config.menus_order'), cell: (item) => item.order },
              { title: t('ops.config.notify_col_action'), cell: (item) => <Remove target={{ locale, menu, url: item.url }} onDone={setMenus} /> },
            ]}
          />
        )),
      )}
    </div>
  );
}

export default function OpsConfigMenus({ locale, messages, timeZone }: TIslandProps) {
  return (
    <IslandRoot locale={locale} messages={messages} timeZone={timeZone}>
      <Menus />
    </IslandRoot>
  );
}
