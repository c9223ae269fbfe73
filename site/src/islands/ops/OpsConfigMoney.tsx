import { type FormEvent, useState } from 'react';
import { useTranslation } from 'react-i18next';
import { CALLS } from '@obmen/shared/calls';
import { displayMoney, displayPercent } from '@obmen/shared/format';
import type { TOpsMoneyRow, TTransferTermsInput } from '@obmen/shared/ops-config';
import { api } from '../../lib/api.ts';
import { IslandRoot, type TIslandProps } from '../IslandRoot.tsx';
import { ConfigCheck, ConfigProposal, ConfigText, useConfigChange } from './ConfigFields.tsx';
import { OpsLoadState, useOpsLoad } from './OpsLoad.tsx';
import { OpsTable } from './OpsTable.tsx';

/*
 * Transfers and withdrawals per currency: the transfer terms (`transfer:set`), from which amount
 * approving a withdrawal needs a second operator (`withdraw:large`) and up to which one is
 * approved without an operator (`withdraw:auto`). Each change is a `config.change` request a
 * second finance operator approves.
 */

const loadMoney = async () => ({ currencies: (await api(CALLS['GET /api/ops/config/money'])).currencies });
const TRANSFER_TERMS = ['min', 'max', 'fee_percent', 'fee_fixed'] as const;
type TTransferTerm = (typeof TRANSFER_TERMS)[number];

function currencyChoice(rows: TOpsMoneyRow[], chosen: string, onChange: (code: string) => void, testId: string, label: string) {
  return { name: 'currency', label, value: chosen, testId, options: rows.map((row) => ({ value: row.currency, label: row.currency })), onChange };
}

/** A currency's transfer terms: only the terms typed differently from today's are proposed. */
function TransferForm({ rows }: { rows: TOpsMoneyRow[] }) {
  const { t } = useTranslation();
  const [chosen, setChosen] = useState(rows[0]?.currency ?? '');
  const [enabled, setEnabled] = useState<boolean | null>(null);
  const change = useConfigChange<TTransferTerm>();
  const { values, setValues, refused, propose, submit } = change;
  const current = rows.find((row) => row.currency === chosen)?.transfer ?? null;
  const shown = (name: TTransferTerm) => values[name] ?? (current ? (current[name] ?? 'none') : '');

  const onSubmit = (event: FormEvent<HTMLFormElement>) =>
    submit(event, async () => {
      const terms: Omit<TTransferTermsInput, 'currency'> = {};
      for (const name of TRANSFER_TERMS) {
        const typed = values[name]?.trim();
        if (typed && typed !== (current ? (current[name] ?? 'none') : '')) terms[name] = typed;
      }
      const on = enabled ?? current?.enabled ?? true;
      if (on !== (current?.enabled ?? true)) terms.enabled = on ? 'true' : 'false';
      if (Object.keys(terms).length === 0) return t('ops.config.unchanged');
      setEnabled(null);
      return propose({ setting: 'transfer.terms', value: { currency: chosen, ...terms } });
    });

  return (
    <ConfigProposal
      id="ops-money-transfer"
      title={t('ops.config.money_transfer_change')}
      lead={t('ops.config.money_transfer_lead')}
      choice={currencyChoice(
        rows,
        chosen,
        (code) => {
          setChosen(code);
          setEnabled(null);
        },
        'ops-money-transfer-currency',
        t('ops.config.money_currency'),
      )}
      change={change}
      onSubmit={onSubmit}
    >
      <div className="ops-config-row">
        {TRANSFER_TERMS.map((name) => (
          <ConfigText
            key={name}
            id={`ops-money-transfer-${name}`}
            name={name}
            label={t(`ops.config.money_transfer_${name}`)}
            value={shown(name)}
            error={refused(name)}
            numeric={name !== 'max'}
            onChange={(value) => setValues((held) => ({ ...held, [name]: value }))}
          />
        ))}
      </div>
      <ConfigCheck
        name="enabled"
        label={t('ops.config.money_transfer_enabled')}
        checked={enabled ?? current?.enabled ?? true}
        testId="ops-money-transfer-enabled"
        onChange={setEnabled}
      />
    </ConfigProposal>
  );
}

/** One withdrawal amount per currency: the four-eyes one or the auto-approval one. */
function WithdrawalAmountForm({ rows, which }: { rows: TOpsMoneyRow[]; which: 'large' | 'auto' }) {
  const { t } = useTranslation();
  const [chosen, setChosen] = useState(rows[0]?.currency ?? '');
  const change = useConfigChange<'amount'>();
  const { values, setValues, refused, propose, submit } = change;
  const current = rows.find((row) => row.currency === chosen)?.[which] ?? '0';
  const id = `ops-money-${which}`;

  const onSubmit = (event: FormEvent<HTMLFormElement>) =>
    submit(event, async () => {
      const amount = (values.amount ?? current).trim();
      if (amount === current) return t('ops.config.unchanged');
      return propose({ setting: which === 'large' ? 'withdraw.large' : 'withdraw.auto', value: { currency: chosen, amount } });
    });

  return (
    <ConfigProposal
      id={id}
      title={t(`ops.config.money_${which}_change`)}
      lead={t(`ops.config.money_${which}_lead`)}
      choice={currencyChoice(rows, chosen, setChosen, `${id}-currency`, t('ops.config.money_currency'))}
      change={change}
      onSubmit={onSubmit}
    >
      <div className="ops-config-row">
        <ConfigText
          id={`${id}-amount`}
          name="amount"
          label={t('ops.config.money_amount', { currency: chosen })}
          value={values.amount ?? current}
          error={refused('amount')}
          numeric
          onChange={(value) => setValues({ amount: value })}
        />
      </div>
    </ConfigProposal>
  );
}

function Money() {
  const { t, i18n } = useTranslation();
  const locale = i18n.language === 'en' ? 'en' : 'ru';
  const { data, failure } = useOpsLoad(loadMoney);
  if (!data) return <OpsLoadState failure={failure} />;
  const money = (amount: string | null, currency: string) => (amount === null ? t('ops.config.money_none') : displayMoney(amount, currency, locale));
  return (
    <div className="ops-home" data-testid="ops-config-money">
      <TransferForm rows={data.currencies} />
      <WithdrawalAmountForm rows={data.currencies} which="large" />
      <WithdrawalAmountForm rows={data.currencies} which="auto" />
      <OpsTable
        id="ops-money-table"
        title={t('ops.config.section_money')}
        rows={data.currencies}
        rowKey={(row) => row.currency}
        columns={[
          { title: t('ops.config.money_currency'), cell: (row) => (row.enabled ? row.currency : `${row.currency} (${t('ops.config.money_currency_off')})`) },
          {
            title: t('ops.config.money_transfer'),
            cell: (row) =>
              row.transfer
                ? t(row.transfer.max === null ? 'ops.config.money_transfer_text_open' : 'ops.config.money_transfer_text', {
                    min: money(row.transfer.min, row.currency),
                    max: money(row.transfer.max, row.currency),
                    fee_percent: displayPercent(row.transfer.fee_percent, locale),
                    fee_fixed: money(row.transfer.fee_fixed, row.currency),
                    state: t(row.transfer.enabled ? 'ops.config.money_on' : 'ops.config.money_off'),
                  })
                : t('ops.config.money_transfer_default'),
          },
          { title: t('ops.config.money_large'), cell: (row) => money(row.large, row.currency) },
          { title: t('ops.config.money_auto'), cell: (row) => money(row.auto, row.currency) },
        ]}
      />
    </div>
  );
}

export default function OpsConfigMoney({ locale, messages, timeZone }: TIslandProps) {
  return (
    <IslandRoot locale={locale} messages={messages} timeZone={timeZone}>
      <Money />
    </IslandRoot>
  );
}
