import { type FormEvent, useState } from 'react';
import { useTranslation } from 'react-i18next';
import { CALLS } from '@obmen/shared/calls';
import type { TOpsRateBody, TOpsRateRow } from '@obmen/shared/ops-config';
import { api } from '../../lib/api.ts';
import { FormError, FormSaved } from '../FormParts.tsx';
import { IslandRoot, type TIslandProps, useDisplayDateTime } from '../IslandRoot.tsx';
import { ConfigText } from './ConfigFields.tsx';
import { OpsLoadState, useOpsLoad } from './OpsLoad.tsx';
import { OpsTable } from './OpsTable.tsx';
import { useStepUp } from './StepUp.tsx';
import { OpsSubmit, useOpsAction } from './use-ops-action.tsx';

/*
 * Exchange rates and spreads: every pair's terms, where quotes take their mid rates from (the
 * operators' table or the price feed, with its last good fetch), and a pair's change as
 * `rates:set` makes it (only what is typed changes; audited with the pair before and after).
 */

const loadRates = () => api(CALLS['GET /api/ops/config/rates']);
const TERMS = ['rate', 'spread', 'fee_percent', 'fee_fixed', 'min', 'max'] as const;
type TTerm = (typeof TERMS)[number];
type TDraft = { src: string; dst: string; enabled: '' | 'true' | 'false' } & Record<TTerm, string>;
const EMPTY: TDraft = { src: '', dst: '', enabled: '', rate: '', spread: '', fee_percent: '', fee_fixed: '', min: '', max: '' };

const draftOf = (row: TOpsRateRow): TDraft => ({
  src: row.src,
  dst: row.dst,
  enabled: '',
  rate: row.rate,
  spread: row.spread,
  fee_percent: row.fee_percent,
  fee_fixed: row.fee_fixed,
  min: row.min_amount,
  max: row.max_amount ?? 'none',
});

/** What the operator typed differently from the pair as it is: nothing else is sent. */
function bodyOf(draft: TDraft, row: TOpsRateRow | undefined): TOpsRateBody {
  const was: Partial<TDraft> = row ? draftOf(row) : {};
  const body: TOpsRateBody = { src: draft.src.trim(), dst: draft.dst.trim() };
  for (const term of TERMS) if (draft[term].trim() !== '' && draft[term].trim() !== was[term]) body[term] = draft[term].trim();
  if (draft.enabled) body.enabled = draft.enabled;
  return body;
}

function Rates() {
  const { t } = useTranslation();
  const when = useDisplayDateTime();
  const { data, failure, reload } = useOpsLoad(loadRates);
  const { stepped, prompt } = useStepUp();
  const [draft, setDraft] = useState<TDraft>(EMPTY);
  const [search, setSearch] = useState('');
  const { sending, error, fields, done, submit } = useOpsAction();
  if (!data) return <OpsLoadState failure={failure} />;

  const row = data.pairs.find((pair) => pair.src === draft.src.trim().toUpperCase() && pair.dst === draft.dst.trim().toUpperCase());
  const wanted = search.trim().toUpperCase();
  const shown = data.pairs.filter((pair) => !wanted || `${pair.src}/${pair.dst}`.includes(wanted));
  const onSubmit = (event: FormEvent<HTMLFormElement>) =>
    submit(event, async () => {
      const { pair } = await stepped(() => api(CALLS['POST /api/ops/config/rates'], { body: bodyOf(draft, row) }));
      await reload();
      setDraft(draftOf(pair));
      return t('ops.config.rates_saved', { pair: `${pair.src}/${pair.dst}` });
    });
  const field = (name: TTerm | 'src' | 'dst') => (
    <ConfigText
      key={name}
      id={`ops-rate-${name}`}
      name={name}
      label={t(`ops.config.rates_${name}`)}
      value={draft[name]}
      error={fields[name]}
      onChange={(value) => setDraft((held) => ({ ...held, [name]: value }))}
    />
  );

  return (
    <div className="ops-home" data-testid="ops-config-rates">
      <p data-testid="ops-rates-feed">
        {data.feed.source === 'feed'
          ? t('ops.config.rates_feed', { at: data.feed.fetched_at ? when(data.feed.fetched_at) : t('ops.config.rates_feed_never') })
          : t('ops.config.rates_table')}
      </p>
      <section className="ops-audit" aria-labelledby="ops-rate-form-title">
        <h2 id="ops-rate-form-title">{t('ops.config.rates_change')}</h2>
        <form className="ops-form" noValidate onSubmit={onSubmit} data-testid="ops-rate-form">
          <div className="ops-config-row">
            {field('src')}
            {field('dst')}
          </div>
          <div className="ops-config-row">{TERMS.map(field)}</div>
          <label className="field">
            <span className="field-label">{t('ops.config.rates_enabled')}</span>
            <select
              name="enabled"
              value={draft.enabled}
              onChange={(event) => setDraft((held) => ({ ...held, enabled: event.target.value as TDraft['enabled'] }))}
              data-testid="ops-rate-enabled"
            >
              <option value="">{t('ops.config.rates_enabled_keep')}</option>
              <option value="true">{t('ops.config.rates_enabled_on')}</option>
              <option value="false">{t('ops.config.rates_enabled_off')}</option>
            </select>
          </label>
          <FormError text={error} testId="ops-rate-error" />
          <FormSaved text={done} testId="ops-rate-saved" />
          <OpsSubmit label={t('ops.config.save')} testId="ops-rate-submit" sending={sending} hidden={Boolean(prompt)} />
        </form>
        {prompt}
      </section>
      <label className="field ops-search">
        <span className="field-label">{t('ops.config.rates_search')}</span>
        <input name="search" type="search" value={search} onChange={(event) => setSearch(event.target.value)} data-testid="ops-rates-search" />
      </label>
      <OpsTable
        id="ops-rates"
        title={t('ops.config.section_rates')}
        rows={shown}
        rowKey={(pair) => `${pair.src}/${pair.dst}`}
        columns={[
          {
            title: t('ops.config.rates_pair'),
            cell: (pair) => (
              <button type="button" className="ops-link-button" onClick={() => setDraft(draftOf(pair))} data-testid={`ops-rate-edit-${pair.src}-${pair.dst}`}>
                {pair.src}/{pair.dst}
              </button>
            ),
          },
          { title: t('ops.config.rates_rate'), cell: (pair) => pair.rate },
          { title: t('ops.config.rates_spread'), cell: (pair) => pair.spread },
          { title: t('ops.config.rates_fee_percent'), cell: (pair) => pair.fee_percent },
          { title: t('ops.config.rates_limits'), cell: (pair) => `${pair.min_amount} – ${pair.max_amount ?? '∞'}` },
          { title: t('ops.config.rates_enabled'), cell: (pair) => t(pair.enabled ? 'ops.config.yes' : 'ops.config.no') },
          { title: t('ops.config.rates_source'), cell: (pair) => `${pair.source}, ${when(pair.updated_at)}` },
        ]}
      />
    </div>
  );
}

export default function OpsConfigRates({ locale, messages, timeZone }: TIslandProps) {
  return (
    <IslandRoot locale={locale} messages={messages} timeZone={timeZone}>
      <Rates />
    </IslandRoot>
  );
}
