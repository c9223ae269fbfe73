import { useRef, useState, type FormEvent } from 'react';
import { useTranslation } from 'react-i18next';
import { ZPasskeyAddBody } from '@obmen/shared/passkeys';
import { api, ApiError } from '../lib/api.ts';
import { CALLS } from '@obmen/shared/calls';
import { addPasskey, passkeySecondFactor, passkeysSupported } from '../lib/passkey.ts';
import { focusFirstInvalid } from '../lib/focus.ts';
import { useHydrated } from '../lib/use-hydrated.ts';
import { messageText } from '../lib/field-errors.ts';
import { CodeField } from './SecondFactorStep.tsx';
import { FieldNote, FormError } from './FormParts.tsx';
import { passkeyFailureText } from './PasskeyParts.tsx';
import { IslandRoot, type TIslandProps, useKeyTranslate } from './IslandRoot.tsx';

/** A passkey as the page shows it (dates already formatted by the page). */
export type TPasskeyRow = { id: string; name: string; created: string; createdIso: string; lastUsed: string | null; lastUsedIso: string | null };

type TProps = TIslandProps & { passkeys: TPasskeyRow[]; secondFactor: boolean };

/**
 * /settings/security: the account's passkeys (name, added, last used) with Remove, and Add (a
 * name; with the TOTP app on, a code too; with passkeys alone, one of them confirms first). Both
 * reload the page, whose hold note and list then show the change.
 */
function PasskeysBody({ passkeys, secondFactor }: { passkeys: TPasskeyRow[]; secondFactor: boolean }) {
  const { t } = useTranslation();
  const tk = useKeyTranslate();
  const hydrated = useHydrated();
  const [name, setName] = useState('');
  const [code, setCode] = useState('');
  const [errors, setErrors] = useState<Record<string, string>>({});
  const [formError, setFormError] = useState('');
  const [busy, setBusy] = useState<string | null>(null);
  const formRef = useRef<HTMLFormElement>(null);
  // The second factor each change needs: the code typed, or (passkeys only) one of the passkeys.
  const proof = async (): Promise<{ code?: string; passkey?: string }> =>
    secondFactor ? { code: code.trim() } : passkeys.length > 0 ? { passkey: await passkeySecondFactor() } : {};

  async function run(key: string, work: () => Promise<void>) {
    setFormError('');
    setErrors({});
    setBusy(key);
    try {
      await work();
    } catch (err) {
      if (err instanceof ApiError && Object.keys(err.fields).some((field) => field === 'name' || field === 'code')) {
        setErrors(err.fields);
        focusFirstInvalid(formRef.current);
      } else setFormError(passkeyFailureText(err, tk));
    } finally {
      setBusy(null);
    }
  }

  function onAdd(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    const parsed = ZPasskeyAddBody.pick({ name: true }).safeParse({ name });
    const found: Record<string, string> = {};
    if (!parsed.success) found.name = messageText(tk, parsed.error.issues[0]?.message ?? 'validation.invalid');
    if (secondFactor && !code.trim()) found.code = t('validation.required');
    if (Object.keys(found).length) {
      setErrors(found);
      focusFirstInvalid(formRef.current);
      return;
    }
    void run('add', async () => {
      await addPasskey(name.trim(), await proof());
      window.location.assign('/settings/security?passkey=added');
    });
  }

  const remove = (row: TPasskeyRow) => {
    if (secondFactor && !code.trim()) {
      setErrors({ code: t('passkey.code_to_remove') });
      focusFirstInvalid(formRef.current);
      return;
    }
    void run(row.id, async () => {
      await api(CALLS['POST /api/security/passkeys/{id}/remove'], { params: { id: row.id }, body: await proof() });
      window.location.assign('/settings/security?passkey=removed');
    });
  };

  const supported = hydrated && passkeysSupported();
  return (
    <div className="passkey-block">
      {passkeys.length === 0 ? (
        <p className="settings-lead">{t('passkey.none_yet')}</p>
      ) : (
        <ul className="security-list" data-testid="passkeys">
          {passkeys.map((row) => (
            <li key={row.id} className="security-item" data-testid="passkey">
              <div className="security-item-main">
                <strong>{row.name}</strong>
                <span className="security-meta">
                  {t('passkey.added_at')} <time dateTime={row.createdIso}>{row.created}</time> ·{' '}
                  {row.lastUsed && row.lastUsedIso ? (
                    <>
                      {t('passkey.used_at')} <time dateTime={row.lastUsedIso}>{row.lastUsed}</time>
                    </>
                  ) : (
                    t('passkey.never_used')
                  )}
                </span>
              </div>
              <button
                className="btn btn-ghost btn-sm"
                type="button"
                onClick={() => remove(row)}
                disabled={busy !== null || !hydrated}
                aria-label={t('passkey.remove_named', { name: row.name })}
                data-testid="passkey-remove"
              >
                {t('passkey.remove')}
              </button>
            </li>
          ))}
        </ul>
      )}
      <form className="tfa-step" method="post" noValidate onSubmit={onAdd} ref={formRef} data-testid="form-passkey-add">
        <FormError text={formError} testId="passkey-error" />
        <label className="field">
          <span className="field-label">{t('passkey.name')}</span>
          <input
            name="name"
            value={name}
            maxLength={60}
            autoComplete="off"
            placeholder={t('passkey.name_placeholder')}
            onChange={(event) => setName(event.target.value)}
            aria-invalid={errors.name ? 'true' : undefined}
            aria-describedby="passkey-name-note"
            data-testid="passkey-name"
          />
          <FieldNote error={errors.name} errorId="passkey-name-note" testId="error-passkey-name" hint={t('passkey.name_hint')} hintId="passkey-name-note" />
        </label>
        {secondFactor && (
          <CodeField id="passkey-code" value={code} error={errors.code ?? ''} onChange={setCode} hint={t('passkey.code_hint')} inputTestId="passkey-code" />
        )}
        {hydrated && !supported && <p className="settings-lead">{t('passkey.unsupported')}</p>}
        <div className="settings-actions">
          <button className="btn btn-primary" type="submit" disabled={busy !== null || !supported} data-testid="passkey-add">
            {busy === 'add' ? t('passkey.asking') : t('passkey.add')}
          </button>
        </div>
      </form>
    </div>
  );
}

export default function Passkeys({ locale, messages, ...props }: TProps) {
  return (
    <IslandRoot locale={locale} messages={messages}>
      <PasskeysBody {...props} />
    </IslandRoot>
  );
}
