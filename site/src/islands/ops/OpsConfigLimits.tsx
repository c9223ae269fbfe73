import { type FormEvent, useState } from 'react';
import { useTranslation } from 'react-i18next';
import { CALLS } from '@obmen/shared/calls';
import { displayMoney } from '@obmen/shared/format';
import type { TLevelLimitInput } from '@obmen/shared/ops-config';
import type { TVerificationLimit } from '@obmen/shared/verification';
import { api } from '../../lib/api.ts';
import { IslandRoot, type TIslandProps } from '../IslandRoot.tsx';
import { ConfigProposal, ConfigText, useConfigChange } from './ConfigFields.tsx';
import { OpsLoadState, useOpsLoad } from './OpsLoad.tsx';
import { OpsTable } from './OpsTable.tsx';

/*
 * Verification limits per level: what each level may bring in, take out and spend by card per
 * 24 hours and 30 days. A change is a `config.change` request a second finance operator approves.
 */

const loadLimits = async () => ({ limits: (await api(CALLS['GET /api/ops/config/limits'])).limits });
const TERMS = ['currency', 'per_24h', 'per_30d'] as const;
type TTerm = (typeof TERMS)[number];
const LABELS = { currency: 'ops.config.limits_currency', per_24h: 'ops.config.limits_per_24h', per_30d: 'ops.config.limits_per_30d' } as const;
const keyOf = (row: Pick<TVerificationLimit, 'level' | 'operation'>) => `${row.level}:${row.operation}`;

function LimitForm({ limits }: { limits: TVerificationLimit[] }) {
  const { t } = useTranslation();
  const [chosen, setChosen] = useState(limits[0] ? keyOf(limits[0]) : '');
  const change = useConfigChange<TTerm>();
  const { values, setValues, refused, propose, submit } = change;
  const row = limits.find((limit) => keyOf(limit) === chosen);

  const onSubmit = (event: FormEvent<HTMLFormElement>) =>
    submit(event, async () => {
      if (!row) return undefined;
      const given = (name: TTerm) => (values[name] ?? row[name]).trim();
      if (TERMS.every((name) => given(name) === row[name])) return t('ops.config.unchanged');
      const value = {
        level: row.level as TLevelLimitInput['level'],
        operation: row.operation,
        currency: given('currency'),
        per_24h: given('per_24h'),
        per_30d: given('per_30d'),
      };
      return propose({ setting: 'limits.level', value });
    });

  return (
    <ConfigProposal
      id="ops-limits"
      title={t('ops.config.limits_change')}
      lead={t('ops.config.limits_lead')}
      choice={{
        name: 'limit',
        label: t('ops.config.limits_which'),
        value: chosen,
        testId: 'ops-limits-which',
        options: limits.map((limit) => ({
          value: keyOf(limit),
          label: t('ops.config.limits_option', { level: limit.level, operation: t(`ops.config.limits_operation_${limit.operation}`) }),
        })),
        onChange: setChosen,
      }}
      change={change}
      onSubmit={onSubmit}
    >
      <div className="ops-config-row">
        {TERMS.map((name) => (
          <ConfigText
            key={name}
            id={`ops-limits-${name}`}
            name={name}
            label={t(LABELS[name])}
            value={values[name] ?? row?.[name] ?? ''}
            error={refused(name)}
            numeric={name !== 'currency'}
            onChange={(value) => setValues((held) => ({ ...held, [name]: value }))}
          />
        ))}
      </div>
    </ConfigProposal>
  );
}

function Limits() {
  const { t, i18n } = useTranslation();
  const locale = i18n.language === 'en' ? 'en' : 'ru';
  const { data, failure } = useOpsLoad(loadLimits);
  if (!data) return <OpsLoadState failure={failure} />;
  return (
    <div className="ops-home" data-testid="ops-config-limits">
      <LimitForm limits={data.limits} />
      <OpsTable
        id="ops-limits-table"
        title={t('ops.config.section_limits')}
        rows={data.limits}
        rowKey={keyOf}
        columns={[
          { title: t('ops.config.limits_level'), cell: (row) => String(row.level) },
          { title: t('ops.config.limits_operation'), cell: (row) => t(`ops.config.limits_operation_${row.operation}`) },
          { title: t('ops.config.limits_per_24h'), cell: (row) => displayMoney(row.per_24h, row.currency, locale) },
          { title: t('ops.config.limits_per_30d'), cell: (row) => displayMoney(row.per_30d, row.currency, locale) },
        ]}
      />
    </div>
  );
}

export default function OpsConfigLimits({ locale, messages, timeZone }: TIslandProps) {
  return (
    <IslandRoot locale={locale} messages={messages} timeZone={timeZone}>
      <Limits />
    </IslandRoot>
  );
}
