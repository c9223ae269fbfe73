import { useEffect, useRef, useState, type FormEvent } from 'react';
import { useTranslation } from 'react-i18next';
import { ZSecondFactorCode, type TTotpSetupResponse } from '@obmen/shared/security';
import { api, ApiError } from '../lib/api.ts';
import { CALLS } from '@obmen/shared/calls';
import { focusFirstInvalid, focusWhenShown } from '../lib/focus.ts';
import { useHydrated } from '../lib/use-hydrated.ts';
import { CodeField } from './SecondFactorStep.tsx';
import { TotpScan } from './TotpScan.tsx';
import { ActionRow, FormError } from './FormParts.tsx';
import { PasskeyProofButton } from './PasskeyParts.tsx';
import { messageText } from '../lib/field-errors.ts';
import { IslandRoot, type TIslandProps, useKeyTranslate } from './IslandRoot.tsx';

type TProps = TIslandProps & { enabled: boolean; recoveryLeft: number };
type TCodes = { message: string; codes: string[] };

function TwoFactorBody({ enabled, recoveryLeft }: { enabled: boolean; recoveryLeft: number }) {
  const { t } = useTranslation();
  const tk = useKeyTranslate();
  const [setup, setSetup] = useState<TTotpSetupResponse | null>(null);
  const [codes, setCodes] = useState<TCodes | null>(null);
  const [code, setCode] = useState('');
  const [error, setError] = useState('');
  const [formError, setFormError] = useState('');
  const [sending, setSending] = useState(false);
  const hydrated = useHydrated();
  const formRef = useRef<HTMLFormElement>(null);
  const stepRef = useRef<HTMLDivElement>(null);
  useEffect(() => focusWhenShown(stepRef.current), [setup, codes]);

  function failed(err: unknown) {
    if (err instanceof ApiError) {
      if (err.fields.code) {
        setError(err.fields.code);
        focusFirstInvalid(formRef.current);
      } else setFormError(err.message);
    } else setFormError(t('error.generic'));
  }

  function checkedCode(): string | null {
    const parsed = ZSecondFactorCode.safeParse(code);
    if (parsed.success) return parsed.data;
    setError(messageText(tk, parsed.error.issues[0]?.message ?? 'validation.invalid'));
    focusFirstInvalid(formRef.current);
    return null;
  }

  async function run<T>(work: () => Promise<T>): Promise<T | null> {
    setFormError('');
    setError('');
    setSending(true);
    try {
      return await work();
    } catch (err) {
      failed(err);
      return null;
    } finally {
      setSending(false);
    }
  }

  async function start() {
    const answer = await run(() => api(CALLS['POST /api/security/totp/setup'], { body: {} }));
    if (answer) setSetup(answer);
  }

  async function confirm(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    const value = checkedCode();
    if (!value) return;
    const answer = await run(() => api(CALLS['POST /api/security/totp/enable'], { body: { code: value } }));
    if (answer) setCodes({ message: answer.message, codes: answer.recovery_codes });
  }

  async function act(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    const submitter = (event.nativeEvent as SubmitEvent).submitter as HTMLButtonElement | null;
    const renew = submitter?.value === 'renew';
    const value = checkedCode();
    if (!value) return;
    if (renew) {
      const answer = await run(() => api(CALLS['POST /api/security/recovery_codes'], { body: { code: value } }));
      if (answer) setCodes({ message: answer.message, codes: answer.recovery_codes });
      return;
    }
    const answer = await run(() => api(CALLS['POST /api/security/totp/disable'], { body: { code: value } }));
    if (answer) window.location.assign('/settings/security?off=1');
  }

  async function offByPasskey(passkey: string) {
    const answer = await run(() => api(CALLS['POST /api/security/totp/disable'], { body: { passkey } }));
    if (answer) window.location.assign('/settings/security?off=1');
  }

  const errorLine = <FormError text={formError} testId="form-error" />;

  if (codes)
    return (
      <div className="tfa-step" ref={stepRef} tabIndex={-1} data-testid="recovery-codes">
        <p className="form-success" role="status">
          {codes.message}
        </p>
        <p>{t('securitypage.codes_lead')}</p>
        <ol className="recovery-codes">
          {codes.codes.map((item) => (
            <li key={item}>
              <code>{item}</code>
            </li>
          ))}
        </ol>
        <div className="settings-actions">
          <a className="btn btn-primary" href="/settings/security" data-testid="codes-done">
            {t('securitypage.codes_done')}
          </a>
        </div>
      </div>
    );

  if (setup)
    return (
      <form className="tfa-step" method="post" noValidate onSubmit={confirm} ref={formRef} data-testid="form-totp-enable">
        <TotpScan qr={setup.qr} secret={setup.secret} uri={setup.otpauth_uri} testIdPrefix="totp" scanRef={stepRef} />
        {errorLine}
        <CodeField id="enable" value={code} error={error} onChange={setCode} inputTestId="enable-code" errorTestId="enable-error" />
        <div className="settings-actions">
          <button className="btn btn-primary" type="submit" disabled={sending} data-testid="totp-confirm">
            {sending ? t('authpage.sending') : t('securitypage.confirm')}
          </button>
        </div>
      </form>
    );

  if (!enabled)
    return (
      <div className="tfa-step">
        <p>{t('securitypage.off_lead')}</p>
        {errorLine}
        <ActionRow sending={sending} hydrated={hydrated} label={t('securitypage.turn_on')} onClick={start} testId="totp-start" />
      </div>
    );

  return (
    <form className="tfa-step" method="post" noValidate onSubmit={act} ref={formRef} data-testid="form-totp-manage">
      <p>{t('securitypage.codes_left', { count: recoveryLeft })}</p>
      <p className="settings-lead">{t('securitypage.manage_lead')}</p>
      {errorLine}
      <CodeField id="manage" value={code} error={error} onChange={setCode} inputTestId="manage-code" errorTestId="manage-error" />
      <div className="settings-actions">
        <button className="btn btn-outline" type="submit" name="action" value="renew" disabled={sending || !hydrated} data-testid="codes-renew">
          {t('securitypage.renew_codes')}
        </button>
        <button className="btn btn-danger" type="submit" name="action" value="off" disabled={sending || !hydrated} data-testid="totp-off">
          {t('securitypage.turn_off')}
        </button>
        <PasskeyProofButton onProof={offByPasskey} onError={setFormError} disabled={sending} label={t('passkey.turn_off')} testId="totp-off-passkey" />
      </div>
    </form>
  );
}

export default function TwoFactor({ locale, messages, enabled, recoveryLeft }: TProps) {
  return (
    <IslandRoot locale={locale} messages={messages}>
      <TwoFactorBody enabled={enabled} recoveryLeft={recoveryLeft} />
    </IslandRoot>
  );
}
