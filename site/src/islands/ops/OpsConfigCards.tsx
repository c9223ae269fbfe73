import { type FormEvent, useState } from 'react';
import { useTranslation } from 'react-i18next';
import { CALLS } from '@obmen/shared/calls';
import { displayMoney } from '@obmen/shared/format';
import type { TOpsCardCreateBody, TOpsCardProductRow } from '@obmen/shared/ops-config';
import { api } from '../../lib/api.ts';
import { FormError, FormSaved } from '../FormParts.tsx';
import { IslandRoot, type TIslandProps } from '../IslandRoot.tsx';
import { ConfigProposal, ConfigText, useConfigChange } from './ConfigFields.tsx';
import { OpsLoadState, useOpsLoad } from './OpsLoad.tsx';
import { OpsTable } from './OpsTable.tsx';
import { useStepUp } from './StepUp.tsx';
import { OpsSubmit, useOpsAction } from './use-ops-action.tsx';

/*
 * The card catalogue. Adding a product (it starts out of the catalogue) and putting one in or out
 * are one operator's (audited, placed cards keep theirs); its fees and limits are a
 * `config.change` request a second finance operator approves.
 */

const loadProducts = async () => ({ products: (await api(CALLS['GET /api/ops/config/cards'])).products });
const TERMS = ['issue_fee', 'monthly_fee', 'fee_currency', 'limits'] as const;
type TTerm = (typeof TERMS)[number];
const FEES: readonly TTerm[] = ['issue_fee', 'monthly_fee', 'fee_currency'];
const limitsText = (row: TOpsCardProductRow) => row.limits.map((limit) => `${limit.currency}:${limit.day}/${limit.month}`).join(', ');
const termsOf = (row: TOpsCardProductRow): Record<TTerm, string> => ({
  issue_fee: row.issue_fee,
  monthly_fee: row.monthly_fee,
  fee_currency: row.fee_currency,
  limits: limitsText(row),
});
const LABELS: Record<TTerm, string> = {
  issue_fee: 'ops.config.cards_issue_fee',
  monthly_fee: 'ops.config.cards_monthly_fee',
  fee_currency: 'ops.config.cards_fee_currency',
  limits: 'ops.config.cards_limits_input',
};

function Toggle({ row, onDone }: { row: TOpsCardProductRow; onDone: (products: TOpsCardProductRow[]) => void }) {
  const { t } = useTranslation();
  const { stepped, prompt } = useStepUp();
  const { sending, error, submit } = useOpsAction();
  const onSubmit = (event: FormEvent<HTMLFormElement>) =>
    submit(event, async () => {
      const body = { id: row.id, enabled: !row.enabled };
      onDone((await stepped(() => api(CALLS['POST /api/ops/config/cards/enabled'], { body }))).products);
      return undefined;
    });
  return (
    <form noValidate onSubmit={onSubmit}>
      <FormError text={error} />
      <OpsSubmit
        label={t(row.enabled ? 'ops.config.cards_disable' : 'ops.config.cards_enable')}
        testId={`ops-cards-toggle-${row.id}`}
        sending={sending}
        hidden={Boolean(prompt)}
        outline
      />
      {prompt}
    </form>
  );
}

function PriceForm({ products }: { products: TOpsCardProductRow[] }) {
  const { t, i18n } = useTranslation();
  const [chosen, setChosen] = useState(products[0]?.id ?? '');
  const change = useConfigChange<TTerm>();
  const { values, setValues, refused, propose, submit } = change;
  const row = products.find((product) => product.id === chosen);
  const now = row ? termsOf(row) : null;
  const locale = i18n.language === 'en' ? 'en' : 'ru';

  const onSubmit = (event: FormEvent<HTMLFormElement>) =>
    submit(event, async () => {
      if (!row || !now) return undefined;
      const given = (name: TTerm) => (values[name] ?? now[name]).trim();
      const changed = TERMS.filter((name) => given(name) !== now[name]);
      if (!changed.length) return t('ops.config.unchanged');
      // A fee changes with its currency named, and a new currency with both fees in it (as the command asks).
      const terms = changed.some((name) => FEES.includes(name)) ? [...new Set([...changed, ...FEES])] : changed;
      const value = { id: row.id, ...Object.fromEntries(terms.map((name) => [name, given(name)])) };
      return propose({ setting: 'cards.price', value });
    });

  return (
    <ConfigProposal
      id="ops-cards-price"
      title={t('ops.config.cards_price')}
      lead={t('ops.config.cards_price_lead')}
      choice={{
        name: 'product',
        label: t('ops.config.cards_product'),
        value: chosen,
        testId: 'ops-cards-product',
        options: products.map((product) => ({ value: product.id, label: `${product.name[locale]} (${product.id})` })),
        onChange: setChosen,
      }}
      change={change}
      onSubmit={onSubmit}
    >
      <div className="ops-config-row">
        {TERMS.filter((name) => name !== 'limits').map((name) => (
          <ConfigText
            key={name}
            id={`ops-cards-${name}`}
            name={name}
            label={t(LABELS[name] as 'ops.config.cards_issue_fee')}
            value={values[name] ?? now?.[name] ?? ''}
            error={refused(name)}
            onChange={(value) => setValues((held) => ({ ...held, [name]: value }))}
          />
        ))}
      </div>
      <ConfigText
        id="ops-cards-limits"
        name="limits"
        label={t('ops.config.cards_limits_input')}
        value={values.limits ?? now?.limits ?? ''}
        error={refused('limits')}
        onChange={(value) => setValues((held) => ({ ...held, limits: value }))}
      />
    </ConfigProposal>
  );
}

const NEW_FIELDS = [
  'id',
  'name_ru',
  'name_en',
  'description_ru',
  'description_en',
  'currencies',
  'fee_currency',
  'issue_fee',
  'monthly_fee',
  'limits',
  'delivery_days',
] as const;
type TNewField = (typeof NEW_FIELDS)[number];
const NEW_LABELS: Record<TNewField, string> = {
  id: 'ops.config.cards_new_id',
  name_ru: 'ops.config.cards_new_name_ru',
  name_en: 'ops.config.cards_new_name_en',
  description_ru: 'ops.config.cards_new_description_ru',
  description_en: 'ops.config.cards_new_description_en',
  currencies: 'ops.config.cards_new_currencies',
  fee_currency: 'ops.config.cards_fee_currency_new',
  issue_fee: 'ops.config.cards_issue_fee',
  monthly_fee: 'ops.config.cards_monthly_fee',
  limits: 'ops.config.cards_limits_input',
  delivery_days: 'ops.config.cards_new_delivery_days',
};
/** The form's rows: fields of one kind side by side, the long ones alone. */
const NEW_GROUPS: readonly (readonly TNewField[])[] = [
  ['id', 'delivery_days'],
  ['name_ru', 'name_en'],
  ['description_ru', 'description_en'],
  ['currencies', 'fee_currency'],
  ['issue_fee', 'monthly_fee'],
  ['limits'],
];
const NEW_EMPTY: Record<TNewField, string> = Object.fromEntries(NEW_FIELDS.map((name) => [name, ''])) as Record<TNewField, string>;

/** `cards:product:create` from the screen: the product starts out of the catalogue, to be put in when ready. */
function CreateForm({ onDone }: { onDone: (products: TOpsCardProductRow[]) => void }) {
  const { t } = useTranslation();
  const { stepped, prompt } = useStepUp();
  const [kind, setKind] = useState<TOpsCardCreateBody['kind']>('virtual');
  const [values, setValues] = useState(NEW_EMPTY);
  const { sending, error, fields, done, submit } = useOpsAction();
  const shown = NEW_FIELDS.filter((name) => name !== 'delivery_days' || kind === 'physical');

  const onSubmit = (event: FormEvent<HTMLFormElement>) =>
    submit(event, async () => {
      const given = Object.fromEntries(shown.filter((name) => values[name].trim()).map((name) => [name, values[name].trim()]));
      const body = { ...given, kind } as TOpsCardCreateBody;
      onDone((await stepped(() => api(CALLS['POST /api/ops/config/cards'], { body }))).products);
      setValues(NEW_EMPTY);
      return t('ops.config.cards_created', { id: body.id });
    });

  return (
    <section className="ops-audit" aria-labelledby="ops-cards-new-title">
      <h2 id="ops-cards-new-title">{t('ops.config.cards_new')}</h2>
      <p>{t('ops.config.cards_new_lead')}</p>
      <form className="ops-form" noValidate onSubmit={onSubmit} data-testid="ops-cards-new-form">
        <label className="field">
          <span className="field-label">{t('ops.config.cards_new_kind')}</span>
          <select name="kind" value={kind} onChange={(event) => setKind(event.target.value as TOpsCardCreateBody['kind'])} data-testid="ops-cards-new-kind">
            <option value="virtual">{t('ops.config.cards_kind_virtual')}</option>
            <option value="physical">{t('ops.config.cards_kind_physical')}</option>
          </select>
        </label>
        {NEW_GROUPS.map((group) => {
          const names = group.filter((name) => shown.includes(name));
          const fieldsOf = names.map((name) => (
            <ConfigText
              key={name}
              id={`ops-cards-new-${name}`}
              name={name}
              label={t(NEW_LABELS[name] as 'ops.config.cards_issue_fee')}
              value={values[name]}
              error={fields[name]}
              numeric={name === 'issue_fee' || name === 'monthly_fee' || name === 'delivery_days'}
              onChange={(value) => setValues((held) => ({ ...held, [name]: value }))}
            />
          ));
          return names.length > 1 ? (
            <div key={names.join()} className="ops-config-row">
              {fieldsOf}
            </div>
          ) : (
            fieldsOf
          );
        })}
        <FormError text={error} testId="ops-cards-new-error" />
        <FormSaved text={done} testId="ops-cards-new-done" />
        <OpsSubmit label={t('ops.config.cards_new_submit')} testId="ops-cards-new-submit" sending={sending} hidden={Boolean(prompt)} />
      </form>
      {prompt}
    </section>
  );
}

function Cards() {
  const { t, i18n } = useTranslation();
  const locale = i18n.language === 'en' ? 'en' : 'ru';
  const { data, failure } = useOpsLoad(loadProducts);
  const [products, setProducts] = useState<TOpsCardProductRow[] | null>(null);
  if (!data) return <OpsLoadState failure={failure} />;
  const rows = products ?? data.products;
  return (
    <div className="ops-home" data-testid="ops-config-cards">
      <PriceForm products={rows} />
      <CreateForm onDone={setProducts} />
      <OpsTable
        id="ops-cards"
        title={t('ops.config.section_cards')}
        rows={rows}
        rowKey={(row) => row.id}
        columns={[
          {
            title: t('ops.config.cards_name'),
            cell: (row) => `${row.name[locale]} (${row.id}, ${t(`ops.config.cards_kind_${row.kind as 'virtual'}`)})`,
          },
          { title: t('ops.config.cards_currencies'), cell: (row) => row.currencies.join(', ') },
          { title: t('ops.config.cards_issue_fee'), cell: (row) => displayMoney(row.issue_fee, row.fee_currency, locale) },
          { title: t('ops.config.cards_monthly_fee'), cell: (row) => displayMoney(row.monthly_fee, row.fee_currency, locale) },
          {
            title: t('ops.config.cards_limits'),
            cell: (row) =>
              row.limits.map((limit) => (
                <div key={limit.currency} className="ops-config-limit">
                  {`${displayMoney(limit.day, limit.currency, locale, 0)} / ${displayMoney(limit.month, limit.currency, locale, 0)}`}
                </div>
              )),
          },
          { title: t('ops.config.payments_state'), cell: (row) => t(row.enabled ? 'ops.config.cards_on' : 'ops.config.cards_off') },
          { title: t('ops.config.notify_col_action'), cell: (row) => <Toggle row={row} onDone={setProducts} /> },
        ]}
      />
    </div>
  );
}

export default function OpsConfigCards({ locale, messages, timeZone }: TIslandProps) {
  return (
    <IslandRoot locale={locale} messages={messages} timeZone={timeZone}>
      <Cards />
    </IslandRoot>
  );
}
