import { type FormEvent, useState } from 'react';
import { useTranslation } from 'react-i18next';
import { CALLS } from '@obmen/shared/calls';
import type { TPasskeyInfo } from '@obmen/shared/passkeys';
import { api, ApiError } from '../../lib/api.ts';
import { newPasskeyCredential, passkeysSupported } from '../../lib/passkey.ts';
import { useHydrated } from '../../lib/use-hydrated.ts';
import { FieldNote, FormError, FormSaved } from '../FormParts.tsx';
import { passkeyFailureText } from '../PasskeyParts.tsx';
import { IslandRoot, type TIslandProps, useDisplayDateTime, useKeyTranslate } from '../IslandRoot.tsx';
import { OpsTable } from './OpsTable.tsx';
import { OpsLoadState, useOpsLoad } from './OpsLoad.tsx';
import { useStepUp } from './StepUp.tsx';

/*
 * /ops/security: the signed-in operator's own passkeys, which sign them in in place of the TOTP
 * code. Adding and removing one asks for a fresh second factor (step-up) and is on the audit chain.
 */

const loadPasskeys = async () => (await api(CALLS['GET /api/ops/passkeys'])).passkeys;

function Passkeys() {
  const { t } = useTranslation();
  const tk = useKeyTranslate();
  const when = useDisplayDateTime();
  const hydrated = useHydrated();
  const { stepped, prompt } = useStepUp();
  const { data: loaded, failure } = useOpsLoad(loadPasskeys);
  const [changed, setChanged] = useState<TPasskeyInfo[] | null>(null);
  const [name, setName] = useState('');
  const [nameError, setNameError] = useState('');
  const [error, setError] = useState('');
  const [done, setDone] = useState('');
  const [busy, setBusy] = useState(false);
  const passkeys = changed ?? loaded;

  async function run(work: () => Promise<TPasskeyInfo[]>, saying: string) {
    setBusy(true);
    setError('');
    setNameError('');
    setDone('');
    try {
      setChanged(await work());
      setDone(saying);
    } catch (err) {
      if (err instanceof ApiError && err.fields.name) setNameError(err.fields.name);
      else setError(passkeyFailureText(err, tk));
    } finally {
      setBusy(false);
    }
  }

  function onAdd(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    if (!name.trim()) {
      setNameError(t('validation.required'));
      return;
    }
    void run(async () => {
      const credential = await newPasskeyCredential(await stepped(() => api(CALLS['POST /api/ops/passkeys/options'], { body: {} })));
      const answer = await api(CALLS['POST /api/ops/passkeys'], { body: { name: name.trim(), credential } });
      setName('');
      return answer.passkeys;
    }, t('ops.passkey_added'));
  }

  const remove = (row: TPasskeyInfo) =>
    void run(
      async () => (await stepped(() => api(CALLS['POST /api/ops/passkeys/{id}/remove'], { params: { id: row.id } }))).passkeys,
      t('ops.passkey_removed'),
    );

  if (!passkeys) return <OpsLoadState failure={failure} />;
  const supported = hydrated && passkeysSupported();
  return (
    <div className="ops-home" data-testid="ops-passkeys">
      <p className="settings-lead">{t('ops.passkeys_lead')}</p>
      <FormError text={error} testId="ops-passkey-error" />
      <FormSaved text={done} testId="ops-passkey-done" />
      <OpsTable
        id="ops-passkey-list"
        title={t('passkey.title')}
        rows={passkeys}
        rowKey={(row) => row.id}
        columns={[
          { title: t('ops.col_name'), cell: (row) => row.name },
          { title: t('ops.col_added'), cell: (row) => when(row.created_at) },
          { title: t('ops.col_last_used'), cell: (row) => (row.last_used_at ? when(row.last_used_at) : t('passkey.never_used')) },
          {
            title: t('ops.col_actions'),
            cell: (row) => (
              <button
                type="button"
                className="btn btn-ghost btn-sm"
                onClick={() => remove(row)}
                disabled={busy || !hydrated}
                aria-label={t('passkey.remove_named', { name: row.name })}
                data-testid="ops-passkey-remove"
              >
                {t('passkey.remove')}
              </button>
            ),
          },
        ]}
      />
      <form className="ops-form" noValidate onSubmit={onAdd} data-testid="ops-passkey-add-form">
        <label className="field">
          <span className="field-label">{t('passkey.name')}</span>
          <input
            name="name"
            value={name}
            maxLength={60}
            autoComplete="off"
            placeholder={t('passkey.name_placeholder')}
            onChange={(event) => setName(event.target.value)}
            aria-invalid={nameError ? 'true' : undefined}
            aria-describedby="ops-passkey-name-note"
            data-testid="ops-passkey-name"
          />
          <FieldNote error={nameError} errorId="ops-passkey-name-note" hint={t('passkey.name_hint')} hintId="ops-passkey-name-note" />
        </label>
        {hydrated && !supported && <p className="settings-lead">{t('passkey.unsupported')}</p>}
        {!prompt && (
          <div className="settings-actions">
            <button className="btn btn-primary" type="submit" disabled={busy || !supported} data-testid="ops-passkey-add">
              {busy ? t('passkey.asking') : t('passkey.add')}
            </button>
          </div>
        )}
      </form>
      {prompt}
    </div>
  );
}

export default function OpsPasskeys({ locale, messages, timeZone }: TIslandProps) {
  return (
    <IslandRoot locale={locale} messages={messages} timeZone={timeZone}>
      <Passkeys />
    </IslandRoot>
  );
}
