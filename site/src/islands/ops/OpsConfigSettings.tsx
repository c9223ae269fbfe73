import { type FormEvent, useState } from 'react';
import { useTranslation } from 'react-i18next';
import type { TAuthType } from '@obmen/shared';
import { CALLS, type TAnswer } from '@obmen/shared/calls';
import type { TConfigChange } from '@obmen/shared/ops-config';
import { api } from '../../lib/api.ts';
import { FormError, FormSaved } from '../FormParts.tsx';
import { IslandRoot, type TIslandProps } from '../IslandRoot.tsx';
import { ConfigCheck, ConfigText } from './ConfigFields.tsx';
import { OpsLoadState, useOpsLoad } from './OpsLoad.tsx';
import { NO_REASON, ReasonFields, type TReason } from './ReasonFields.tsx';
import { useStepUp } from './StepUp.tsx';
import { OpsSubmit, useOpsAction } from './use-ops-action.tsx';

/*
 * The sensitive settings: the screen shows what holds now and proposes a change (`config.change`,
 * one request per setting); it takes effect when a second operator approves it on /ops/approvals.
 */

/** Proposes each change in turn; the first refusal stops the rest and says why. */
function useProposals() {
  const { stepped, prompt } = useStepUp();
  const propose = async (changes: TConfigChange[], reason: TReason) => {
    for (const params of changes) await stepped(() => api(CALLS['POST /api/ops/requests'], { body: { action: 'config.change', params, ...reason } }));
  };
  return { propose, prompt };
}

const loadSite = async () => (await api(CALLS['GET /api/ops/config/site'])).settings;

function SiteForm() {
  const { t } = useTranslation();
  const { data: settings, failure } = useOpsLoad(loadSite);
  const [authType, setAuthType] = useState<TAuthType | null>(null);
  const [blocked, setBlocked] = useState<boolean | null>(null);
  const [reason, setReason] = useState<TReason>(NO_REASON);
  const { propose, prompt } = useProposals();
  const { sending, error, fields, done, submit } = useOpsAction();
  if (!settings) return <OpsLoadState failure={failure} />;
  const auth = authType ?? settings.auth_type;
  const block = blocked ?? settings.site_blocked;

  const onSubmit = (event: FormEvent<HTMLFormElement>) =>
    submit(event, async () => {
      const changes: TConfigChange[] = [];
      if (auth !== settings.auth_type) changes.push({ setting: 'site.auth_type', value: auth });
      if (block !== settings.site_blocked) changes.push({ setting: 'site.site_blocked', value: block });
      if (!changes.length) return t('ops.config.unchanged');
      await propose(changes, reason);
      return t('ops.request_proposed');
    });

  return (
    <section className="ops-audit" aria-labelledby="ops-config-site-title" data-testid="ops-config-site">
      <h2 id="ops-config-site-title">{t('ops.config.section_site')}</h2>
      <p>{t('ops.config.site_lead')}</p>
      <dl className="ops-config-now" data-testid="ops-config-site-now">
        <dt>{t('ops.config.site_auth_type')}</dt>
        <dd>{t(`ops.config.site_auth_${settings.auth_type}`)}</dd>
        <dt>{t('ops.config.site_blocked')}</dt>
        <dd>{t(settings.site_blocked ? 'ops.config.yes' : 'ops.config.no')}</dd>
      </dl>
      <form className="ops-form" noValidate onSubmit={onSubmit} data-testid="ops-config-site-form">
        <label className="field">
          <span className="field-label">{t('ops.config.site_auth_type')}</span>
          <select name="auth_type" value={auth} onChange={(event) => setAuthType(event.target.value as TAuthType)} data-testid="ops-config-auth-type">
            {(['password', 'email'] as const).map((type) => (
              <option key={type} value={type}>
                {t(`ops.config.site_auth_${type}`)}
              </option>
            ))}
          </select>
        </label>
        <label className="check">
          <input
            type="checkbox"
            name="site_blocked"
            checked={block}
            onChange={(event) => setBlocked(event.target.checked)}
            data-testid="ops-config-site-blocked"
          />
          <span>{t('ops.config.site_blocked')}</span>
        </label>
        <ReasonFields id="ops-config-site" value={reason} error={fields.text} onChange={setReason} />
        <FormError text={error} testId="ops-config-site-error" />
        <FormSaved text={done} testId="ops-config-site-proposed" />
        <OpsSubmit label={t('ops.config.propose')} testId="ops-config-site-submit" sending={sending} hidden={Boolean(prompt)} />
      </form>
      {prompt}
    </section>
  );
}

const loadReferral = async () => ({ terms: (await api(CALLS['GET /api/ops/config/referral'])).terms });
type TTerms = NonNullable<TAnswer<(typeof CALLS)['GET /api/ops/config/referral']>['terms']>;
const TERM_FIELDS = ['share', 'currency', 'hold', 'min', 'same_ip_days'] as const;
type TTermField = (typeof TERM_FIELDS)[number];

const shownTerms = (terms: TTerms | null): Record<TTermField, string> => ({
  share: terms?.share ?? '',
  currency: terms?.currency ?? '',
  hold: terms ? `${terms.hold_seconds}` : '',
  min: terms?.min_payout ?? '',
  same_ip_days: terms ? String(terms.same_ip_days) : '',
});

function ReferralForm() {
  const { t } = useTranslation();
  const { data, failure } = useOpsLoad(loadReferral);
  const [values, setValues] = useState<Partial<Record<TTermField, string>>>({});
  const [enabled, setEnabled] = useState<boolean | null>(null);
  const [reason, setReason] = useState<TReason>(NO_REASON);
  const { propose, prompt } = useProposals();
  const { sending, error, fields, done, submit } = useOpsAction();
  if (!data) return <OpsLoadState failure={failure} />;
  const current = data.terms;
  const now = shownTerms(current);
  const refused = (name: string) => fields[name] ?? fields[`params.value.${name}`];

  const onSubmit = (event: FormEvent<HTMLFormElement>) =>
    submit(event, async () => {
      const changed = Object.fromEntries(
        TERM_FIELDS.filter((name) => values[name] !== undefined && values[name] !== now[name]).map((name) => [name, values[name]]),
      );
      const on = enabled ?? current?.enabled ?? true;
      if (on !== (current?.enabled ?? true)) changed.enabled = String(on);
      if (!Object.keys(changed).length) return t('ops.config.unchanged');
      await propose([{ setting: 'referral.terms', value: changed }], reason);
      return t('ops.request_proposed');
    });

  return (
    <section className="ops-audit" aria-labelledby="ops-config-referral-title" data-testid="ops-config-referral">
      <h2 id="ops-config-referral-title">{t('ops.config.section_referral')}</h2>
      <p>{current ? t('ops.config.referral_lead') : t('ops.config.referral_none')}</p>
      <form className="ops-form" noValidate onSubmit={onSubmit} data-testid="ops-config-referral-form">
        {TERM_FIELDS.map((name) => (
          <ConfigText
            key={name}
            id={`ops-config-referral-${name}`}
            name={name}
            label={t(`ops.config.referral_${name}`)}
            value={values[name] ?? now[name]}
            error={refused(name)}
            onChange={(value) => setValues((held) => ({ ...held, [name]: value }))}
          />
        ))}
        <ConfigCheck
          name="enabled"
          label={t('ops.config.referral_enabled')}
          checked={enabled ?? current?.enabled ?? true}
          testId="ops-config-referral-enabled"
          onChange={setEnabled}
        />
        <ReasonFields id="ops-config-referral" value={reason} error={fields.text} onChange={setReason} />
        <FormError text={error} testId="ops-config-referral-error" />
        <FormSaved text={done} testId="ops-config-referral-proposed" />
        <OpsSubmit label={t('ops.config.propose')} testId="ops-config-referral-submit" sending={sending} hidden={Boolean(prompt)} />
      </form>
      {prompt}
    </section>
  );
}

export default function OpsConfigSettings({ locale, messages, timeZone, section }: TIslandProps & { section: 'site' | 'referral' }) {
  return (
    <IslandRoot locale={locale} messages={messages} timeZone={timeZone}>
      {section === 'site' ? <SiteForm /> : <ReferralForm />}
    </IslandRoot>
  );
}
