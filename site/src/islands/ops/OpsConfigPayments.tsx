import { type FormEvent, useState } from 'react';
import { useTranslation } from 'react-i18next';
import { CALLS } from '@obmen/shared/calls';
import type { TOpsPaymentSystemRow } from '@obmen/shared/ops-config';
import { api } from '../../lib/api.ts';
import { FormError } from '../FormParts.tsx';
import { IslandRoot, type TIslandProps } from '../IslandRoot.tsx';
import { ConfigProposal, ConfigText, useConfigChange } from './ConfigFields.tsx';
import { OpsLoadState, useOpsLoad } from './OpsLoad.tsx';
import { OpsTable } from './OpsTable.tsx';
import { useStepUp } from './StepUp.tsx';
import { OpsSubmit, useOpsAction } from './use-ops-action.tsx';

/*
 * Payment systems per currency. On and off is one operator's (audited, nobody's money moves);
 * fees, limits, confirmations and the level the system needs are a `config.change` request a second
 * finance operator approves.
 */

const loadSystems = async () => ({ systems: (await api(CALLS['GET /api/ops/config/payments'])).systems });
const TERMS = ['fee_percent', 'fee_fixed', 'min', 'max', 'confirmations', 'level'] as const;
type TTerm = (typeof TERMS)[number];
const keyOf = (row: Pick<TOpsPaymentSystemRow, 'direction' | 'id' | 'currency'>) => `${row.direction}:${row.id}:${row.currency}`;
const termsOf = (row: TOpsPaymentSystemRow): Record<TTerm, string> => ({
  fee_percent: row.fee_percent,
  fee_fixed: row.fee_fixed,
  min: row.min,
  max: row.max,
  confirmations: String(row.confirmations),
  level: String(row.level),
});

function Toggle({ row, onDone }: { row: TOpsPaymentSystemRow; onDone: (systems: TOpsPaymentSystemRow[]) => void }) {
  const { t } = useTranslation();
  const { stepped, prompt } = useStepUp();
  const { sending, error, submit } = useOpsAction();
  const onSubmit = (event: FormEvent<HTMLFormElement>) =>
    submit(event, async () => {
      const body = { direction: row.direction as 'deposit', id: row.id, currency: row.currency, enabled: !row.currency_enabled };
      onDone((await stepped(() => api(CALLS['POST /api/ops/config/payments/enabled'], { body }))).systems);
      return undefined;
    });
  return (
    <form noValidate onSubmit={onSubmit}>
      <FormError text={error} />
      <OpsSubmit
        label={t(row.currency_enabled ? 'ops.config.payments_disable' : 'ops.config.payments_enable')}
        testId={`ops-payments-toggle-${keyOf(row)}`}
        sending={sending}
        hidden={Boolean(prompt)}
        outline
      />
      {prompt}
    </form>
  );
}

function PriceForm({ systems }: { systems: TOpsPaymentSystemRow[] }) {
  const { t } = useTranslation();
  const [chosen, setChosen] = useState(systems[0] ? keyOf(systems[0]) : '');
  const change = useConfigChange<TTerm>();
  const { values, setValues, refused, propose, submit } = change;
  const row = systems.find((system) => keyOf(system) === chosen);
  const now = row ? termsOf(row) : null;

  const onSubmit = (event: FormEvent<HTMLFormElement>) =>
    submit(event, async () => {
      if (!row || !now) return undefined;
      const changed = Object.fromEntries(
        TERMS.filter((name) => values[name] !== undefined && values[name]!.trim() !== now[name]).map((name) => [name, values[name]!.trim()]),
      );
      if (!Object.keys(changed).length) return t('ops.config.unchanged');
      const value = { direction: row.direction as 'deposit', id: row.id, currency: row.currency, ...changed };
      return propose({ setting: 'payments.price', value });
    });

  return (
    <ConfigProposal
      id="ops-payments-price"
      title={t('ops.config.payments_price')}
      lead={t('ops.config.payments_price_lead')}
      choice={{
        name: 'system',
        label: t('ops.config.payments_system'),
        value: chosen,
        testId: 'ops-payments-system',
        options: systems.map((system) => ({
          value: keyOf(system),
          label: `${t(`ops.config.payments_direction_${system.direction as 'deposit'}`)}: ${system.id}, ${system.currency}`,
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
            id={`ops-payments-${name}`}
            name={name}
            label={t(`ops.config.payments_${name}`)}
            value={values[name] ?? now?.[name] ?? ''}
            error={refused(name)}
            onChange={(value) => setValues((held) => ({ ...held, [name]: value }))}
          />
        ))}
      </div>
    </ConfigProposal>
  );
}

function Payments() {
  const { t } = useTranslation();
  const { data, failure } = useOpsLoad(loadSystems);
  const [systems, setSystems] = useState<TOpsPaymentSystemRow[] | null>(null);
  if (!data) return <OpsLoadState failure={failure} />;
  const rows = systems ?? data.systems;
  return (
    <div className="ops-home" data-testid="ops-config-payments">
      <PriceForm systems={rows} />
      <OpsTable
        id="ops-payments"
        title={t('ops.config.section_payments')}
        rows={rows}
        rowKey={keyOf}
        columns={[
          { title: t('ops.config.payments_system'), cell: (row) => `${t(`ops.config.payments_direction_${row.direction as 'deposit'}`)}: ${row.id}` },
          { title: t('ops.config.payments_currency'), cell: (row) => row.currency },
          { title: t('ops.config.payments_fee_percent'), cell: (row) => `${row.fee_percent} % + ${row.fee_fixed}` },
          { title: t('ops.config.rates_limits'), cell: (row) => `${row.min} – ${row.max}` },
          { title: t('ops.config.payments_confirmations'), cell: (row) => row.confirmations },
          { title: t('ops.config.payments_level'), cell: (row) => row.level },
          {
            title: t('ops.config.payments_state'),
            cell: (row) =>
              t(row.enabled ? 'ops.config.payments_on' : row.system_enabled ? 'ops.config.payments_currency_off' : 'ops.config.payments_system_off'),
          },
          { title: t('ops.config.notify_col_action'), cell: (row) => <Toggle row={row} onDone={setSystems} /> },
        ]}
      />
    </div>
  );
}

export default function OpsConfigPayments({ locale, messages, timeZone }: TIslandProps) {
  return (
    <IslandRoot locale={locale} messages={messages} timeZone={timeZone}>
      <Payments />
    </IslandRoot>
  );
}
