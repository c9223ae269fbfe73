import { useState, type FormEvent } from 'react';
import { useTranslation } from 'react-i18next';
import { factorFields } from '@obmen/shared/passkeys';
import { API_KEY_SCOPES, type TApiKeyCreated, type TApiKeysResponse, type TApiKeyScope } from '@obmen/shared/api-keys';
import { CALLS } from '@obmen/shared/calls';
import { api, ApiError } from '../lib/api.ts';
import { useHydrated } from '../lib/use-hydrated.ts';
import { ActionRow, FieldNote, FormError, FormSaved } from './FormParts.tsx';
import { IslandRoot, type TIslandProps, useDisplayDateTime } from './IslandRoot.tsx';
import { PasskeyProofButton } from './PasskeyParts.tsx';

type TProps = TIslandProps & { state: TApiKeysResponse };
type TFields = 'label' | 'scopes' | 'ips' | 'expires_on' | 'code';

/**
 * /settings/api: the account's keys for bots (scopes, allow-list, expiry, last use, revoke) and
 * a new one, made with the second factor; its secret is shown once, right here.
 */
function ApiKeysBody({ state }: { state: TApiKeysResponse }) {
  const { t } = useTranslation();
  const when = useDisplayDateTime();
  const hydrated = useHydrated();
  const factor = factorFields(state);
  const [keys, setKeys] = useState(state.keys);
  const [label, setLabel] = useState('');
  const [scopes, setScopes] = useState<TApiKeyScope[]>(['read']);
  const [ips, setIps] = useState('');
  const [expiresOn, setExpiresOn] = useState('');
  const [code, setCode] = useState('');
  const [created, setCreated] = useState<TApiKeyCreated['created'] | null>(null);
  const [message, setMessage] = useState('');
  const [error, setError] = useState('');
  const [fields, setFields] = useState<Partial<Record<TFields, string>>>({});
  const [busy, setBusy] = useState(false);

  async function run<T extends TApiKeysResponse & { message: string }>(call: () => Promise<T>): Promise<T | null> {
    setBusy(true);
    setError('');
    setMessage('');
    setFields({});
    try {
      const answer = await call();
      setKeys(answer.keys);
      setMessage(answer.message);
      return answer;
    } catch (err) {
      setError(err instanceof ApiError ? err.message : t('error.generic'));
      if (err instanceof ApiError) setFields(err.fields);
      return null;
    } finally {
      setBusy(false);
    }
  }

  async function create(proof: { code?: string; passkey?: string }) {
    setCreated(null);
    const list = ips
      .split(/[\s,]+/)
      .map((ip) => ip.trim())
      .filter(Boolean);
    const body = { label, scopes, ips: list, ...(expiresOn ? { expires_on: expiresOn } : {}), ...proof };
    const answer = await run(() => api(CALLS['POST /api/security/api_keys'], { body }));
    if (!answer) return;
    // The box with the secret says it; the same words twice would only be noise.
    setMessage('');
    setCreated(answer.created);
    setLabel('');
    setIps('');
    setExpiresOn('');
    setCode('');
  }

  function onSubmit(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    void create({ code });
  }

  const toggle = (scope: TApiKeyScope, on: boolean) => setScopes(on ? [...scopes, scope] : scopes.filter((item) => item !== scope));
  const described = (name: TFields, hint?: boolean) => (fields[name] ? `apikey-${name}-error` : hint ? `apikey-${name}-hint` : undefined);

  return (
    <div className="api-keys" data-testid="api-keys">
      <FormError text={error} testId="form-error" />
      <FormSaved text={message} testId="api-keys-message" />
      {created && (
        <div className="card settings-card api-key-secret" data-testid="api-key-created">
          <p className="lock-note">{t('apikeys.created')}</p>
          <dl className="api-key-pair">
            <dt>{t('apikeys.key_id')}</dt>
            <dd>
              <code data-testid="api-key-id">{created.id}</code>
            </dd>
            <dt>{t('apikeys.secret')}</dt>
            <dd>
              <code data-testid="api-key-secret">{created.secret}</code>
            </dd>
          </dl>
        </div>
      )}
      <div className="card settings-card" data-testid="api-key-list">
        <h2>{t('apikeys.list_title')}</h2>
        {keys.length === 0 ? (
          <p className="muted">{t('apikeys.none')}</p>
        ) : (
          <ul className="api-key-items">
            {keys.map((key) => (
              <li key={key.id} className="api-key-item" data-testid="api-key">
                <span>
                  <strong>{key.label}</strong> · <code>{key.id}</code>
                </span>
                <span>
                  {t('apikeys.col_scopes')}: {key.scopes.map((scope) => t(`apikeys.scope_${scope}`)).join('; ')}
                </span>
                <span className="muted">
                  {t('apikeys.col_ips')}: {key.ips.length ? key.ips.join(', ') : t('apikeys.any_ip')} · {t('apikeys.col_created')}: {when(key.created_at)} ·{' '}
                  {t('apikeys.col_expires')}: {key.expires_at ? when(key.expires_at) : t('apikeys.no_expiry')}
                </span>
                <span className="muted" data-testid="api-key-last-used">
                  {t('apikeys.col_last_used')}:{' '}
                  {key.last_used_at ? t('apikeys.used_from', { date: when(key.last_used_at), ip: key.last_used_ip ?? '' }) : t('apikeys.never')}
                </span>
                <button
                  type="button"
                  className="btn btn-outline"
                  disabled={busy || !hydrated}
                  aria-label={t('apikeys.revoke_named', { label: key.label })}
                  onClick={() => void run(() => api(CALLS['POST /api/security/api_keys/{id}/revoke'], { params: { id: key.id }, body: {} }))}
                  data-testid="api-key-revoke"
                >
                  {t('apikeys.revoke')}
                </button>
              </li>
            ))}
          </ul>
        )}
      </div>
      {factor.passkey && (
        <div className="card settings-card">
          <h2>{t('apikeys.new_title')}</h2>
          <form className="settings-form" noValidate onSubmit={onSubmit} data-testid="api-key-form">
            <label className="field">
              <span className="field-label">{t('apikeys.label')}</span>
              <input
                name="label"
                autoComplete="off"
                maxLength={60}
                value={label}
                onChange={(event) => setLabel(event.target.value)}
                aria-invalid={fields.label ? 'true' : undefined}
                aria-describedby={described('label', true)}
                data-testid="api-key-label"
              />
              <FieldNote error={fields.label} errorId="apikey-label-error" hint={t('apikeys.label_hint')} hintId="apikey-label-hint" />
            </label>
            <fieldset className="mail-topics" aria-describedby={described('scopes')}>
              <legend className="field-label">{t('apikeys.scopes')}</legend>
              {API_KEY_SCOPES.map((scope) => (
                <label key={scope} className="mail-topic">
                  <input
                    type="checkbox"
                    name="scopes"
                    value={scope}
                    checked={scopes.includes(scope)}
                    onChange={(event) => toggle(scope, event.target.checked)}
                    data-testid={`api-key-scope-${scope}`}
                  />
                  <span className="mail-topic-title">{t(`apikeys.scope_${scope}`)}</span>
                </label>
              ))}
              <FieldNote error={fields.scopes} errorId="apikey-scopes-error" />
            </fieldset>
            <label className="field">
              <span className="field-label">{t('apikeys.ips')}</span>
              <input
                name="ips"
                autoComplete="off"
                value={ips}
                onChange={(event) => setIps(event.target.value)}
                aria-invalid={fields.ips ? 'true' : undefined}
                aria-describedby={described('ips', true)}
                data-testid="api-key-ips"
              />
              <FieldNote error={fields.ips} errorId="apikey-ips-error" hint={t('apikeys.ips_hint')} hintId="apikey-ips-hint" />
            </label>
            <label className="field">
              <span className="field-label">{t('apikeys.expires_on')}</span>
              <input
                name="expires_on"
                type="date"
                value={expiresOn}
                onChange={(event) => setExpiresOn(event.target.value)}
                aria-invalid={fields.expires_on ? 'true' : undefined}
                aria-describedby={described('expires_on', true)}
                data-testid="api-key-expires"
              />
              <FieldNote error={fields.expires_on} errorId="apikey-expires_on-error" hint={t('apikeys.expires_hint')} hintId="apikey-expires_on-hint" />
            </label>
            {factor.code && (
              <label className="field">
                <span className="field-label">{t('apikeys.second_factor')}</span>
                <input
                  name="code"
                  inputMode="numeric"
                  autoComplete="one-time-code"
                  maxLength={40}
                  value={code}
                  onChange={(event) => setCode(event.target.value)}
                  aria-invalid={fields.code ? 'true' : undefined}
                  aria-describedby={described('code')}
                  data-testid="api-key-code"
                />
                <FieldNote error={fields.code} errorId="apikey-code-error" />
              </label>
            )}
            <ActionRow sending={busy} hydrated={hydrated} label={t('apikeys.create')} sendingLabel={t('apikeys.creating')} testId="api-key-create" />
            <PasskeyProofButton onProof={(passkey) => create({ passkey })} onError={setError} disabled={busy} testId="api-key-passkey" />
          </form>
        </div>
      )}
    </div>
  );
}

export default function ApiKeys({ locale, messages, timeZone, state }: TProps) {
  return (
    <IslandRoot locale={locale} messages={messages} timeZone={timeZone}>
      <ApiKeysBody state={state} />
    </IslandRoot>
  );
}
