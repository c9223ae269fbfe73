import { type FormEvent, useEffect, useState } from 'react';
import { useTranslation } from 'react-i18next';
import { OPS_ROLES, type TOpsRole } from '@obmen/shared/ops';
import { CALLS } from '@obmen/shared/calls';
import type { TAnswer } from '@obmen/shared/calls';
import { api } from '../../lib/api.ts';
import { FormError, FormSaved } from '../FormParts.tsx';
import { IslandRoot, type TIslandProps, useDisplayDateTime } from '../IslandRoot.tsx';
import { OpsTable } from './OpsTable.tsx';
import { NO_REASON, ReasonFields, type TReason } from './ReasonFields.tsx';
import { useStepUp } from './StepUp.tsx';
import { OpsLoadState, useOpsLoad } from './OpsLoad.tsx';
import { OpsSubmit, useOpsAction } from './use-ops-action.tsx';

/*
 * The operators and their roles. A change of roles is a proposal: it takes effect when a second
 * operator with operators.manage approves it on the approvals page.
 */

const loadOperators = async () => (await api(CALLS['GET /api/ops/operators'])).operators;

type TOperatorRow = TAnswer<(typeof CALLS)['GET /api/ops/operators']>['operators'][number];

function RolesForm({ operators, onProposed }: { operators: TOperatorRow[]; onProposed: () => void }) {
  const { t } = useTranslation();
  const { stepped, prompt } = useStepUp();
  const [email, setEmail] = useState(operators[0]?.email ?? '');
  const [roles, setRoles] = useState<TOpsRole[]>([]);
  const [reason, setReason] = useState<TReason>({ ...NO_REASON, reason: 'duty_changed' });
  const { sending, error, fields, done, submit } = useOpsAction();

  useEffect(() => setRoles((operators.find((row) => row.email === email)?.roles ?? []) as TOpsRole[]), [email, operators]);

  const onSubmit = (event: FormEvent<HTMLFormElement>) =>
    submit(event, async () => {
      await stepped(() => api(CALLS['POST /api/ops/requests'], { body: { action: 'operators.set_roles', params: { email, roles }, ...reason } }));
      onProposed();
      return t('ops.request_proposed');
    });

  const toggle = (role: TOpsRole) => setRoles((held) => (held.includes(role) ? held.filter((r) => r !== role) : [...held, role]));
  return (
    <section className="ops-audit" aria-labelledby="ops-roles-title">
      <h2 id="ops-roles-title">{t('ops.roles_change_title')}</h2>
      <form className="ops-form" noValidate onSubmit={onSubmit} data-testid="ops-roles-form">
        <label className="field">
          <span className="field-label">{t('ops.operator')}</span>
          <select name="email" value={email} onChange={(event) => setEmail(event.target.value)} data-testid="ops-roles-operator">
            {operators.map((row) => (
              <option key={row.email} value={row.email}>
                {row.email}
              </option>
            ))}
          </select>
        </label>
        <fieldset className="ops-checks">
          <legend className="field-label">{t('ops.roles')}</legend>
          {OPS_ROLES.map((role) => (
            <label key={role} className="check">
              <input type="checkbox" name="roles" value={role} checked={roles.includes(role)} onChange={() => toggle(role)} data-testid={`ops-role-${role}`} />
              <span>{role}</span>
            </label>
          ))}
        </fieldset>
        <ReasonFields id="ops-roles" value={reason} error={fields.text} onChange={setReason} />
        <FormError text={error} testId="ops-roles-error" />
        <FormSaved text={done} testId="ops-roles-proposed" />
        <OpsSubmit label={t('ops.roles_propose')} testId="ops-roles-submit" sending={sending} hidden={Boolean(prompt)} />
      </form>
      {prompt}
    </section>
  );
}

function Operators() {
  const { t } = useTranslation();
  const when = useDisplayDateTime();
  const { data: operators, failure, reload } = useOpsLoad(loadOperators);

  if (!operators) return <OpsLoadState failure={failure} />;
  return (
    <div className="ops-home" data-testid="ops-operators">
      <OpsTable
        id="ops-operator-list"
        title={t('ops.operators_title')}
        rows={operators}
        rowKey={(row) => row.email}
        columns={[
          { title: t('ops.operator'), cell: (row) => row.email },
          { title: t('ops.roles'), cell: (row) => row.roles.join(', ') || '—' },
          {
            title: t('ops.col_state'),
            cell: (row) => t(row.disabled ? 'ops.operator_disabled' : row.enrolled ? 'ops.operator_active' : 'ops.operator_invited'),
          },
          { title: t('ops.customer_since'), cell: (row) => when(row.created_at) },
        ]}
      />
      <RolesForm operators={operators} onProposed={() => void reload()} />
    </div>
  );
}

export default function OpsOperators({ locale, messages, timeZone }: TIslandProps) {
  return (
    <IslandRoot locale={locale} messages={messages} timeZone={timeZone}>
      <Operators />
    </IslandRoot>
  );
}
