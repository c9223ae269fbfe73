import { useEffect, useRef, useState, type FormEvent, type ReactNode } from 'react';
import { useTranslation } from 'react-i18next';
import { qrPath } from '@obmen/shared/qr';
import type { TOpsOperator } from '@obmen/shared/ops';
import { CALLS } from '@obmen/shared/calls';
import { api, ApiError } from '../lib/api.ts';
import { focusFirstInvalid, focusWhenShown } from '../lib/focus.ts';
import { useHydrated } from '../lib/use-hydrated.ts';
import { CodeField } from './SecondFactorStep.tsx';
import { FieldNote, FormError } from './FormParts.tsx';
import { PasskeyProofButton } from './PasskeyParts.tsx';
import { opsPasskeySignIn } from '../lib/passkey.ts';
import { TotpScan } from './TotpScan.tsx';
import { IslandRoot, type TIslandProps, useDisplayDateTime } from './IslandRoot.tsx';

/*
 * The back office's door: enrolment from the one-time link, sign-in, and the signed-in operator.
 * Every call goes to /api/ops, where the BFF sends the ops_token cookie and nothing of a
 * customer's session; the pages themselves know nothing of the operator until /api/ops/me answers.
 */

type TMode = 'enrol' | 'login' | 'home';
type TProps = TIslandProps & { mode: TMode };
type TEnrolStart = { email: string; secret: string; otpauth_uri: string };
type TAuditRow = { id: number; at: string; actor: string; action: string; subject: string | null; outcome: string };

const LOGIN_PATH = '/ops/login';
const AUDIT_ROWS_SHOWN = 20;
const AUDIT_COLUMNS = ['at', 'actor', 'action', 'subject', 'outcome'] as const;

function TextField({
  name,
  type,
  label,
  value,
  error,
  autoComplete,
  onChange,
}: {
  name: string;
  type: 'email' | 'password';
  label: string;
  value: string;
  error: string | undefined;
  autoComplete: string;
  onChange: (value: string) => void;
}) {
  const errorId = `ops-${name}-error`;
  return (
    <label className="field">
      <span className="field-label">{label}</span>
      <input
        name={name}
        type={type}
        autoComplete={autoComplete}
        value={value}
        onChange={(event) => onChange(event.target.value)}
        aria-invalid={error ? 'true' : undefined}
        aria-describedby={error ? errorId : undefined}
        data-testid={`ops-${name}`}
        required
      />
      <FieldNote error={error} errorId={errorId} testId={`ops-${name}-error`} />
    </label>
  );
}

/** A form's sending state and its refusals: under the field the core named, or above the form. */
function useOpsForm() {
  const { t } = useTranslation();
  const [fields, setFields] = useState<Record<string, string>>({});
  const [formError, setFormError] = useState('');
  const [sending, setSending] = useState(false);
  const formRef = useRef<HTMLFormElement>(null);
  async function send(work: () => Promise<void>): Promise<void> {
    setFields({});
    setFormError('');
    setSending(true);
    try {
      await work();
    } catch (err) {
      if (err instanceof ApiError && Object.keys(err.fields).length > 0) {
        setFields(err.fields);
        focusFirstInvalid(formRef.current);
      } else setFormError(err instanceof ApiError ? err.message : t('error.generic'));
    } finally {
      setSending(false);
    }
  }
  return { fields, formError, sending, formRef, send, setFormError };
}

/**
 * The end of the enrolment and sign-in forms: the (new) password, a code of the second factor,
 * the submit button (and `children` beside it: the sign-in's passkey).
 */
function PasswordCodeSubmit({
  form,
  kind,
  password,
  setPassword,
  code,
  setCode,
  children,
}: {
  form: ReturnType<typeof useOpsForm>;
  kind: 'enrol' | 'login';
  password: string;
  setPassword: (value: string) => void;
  code: string;
  setCode: (value: string) => void;
  children?: ReactNode;
}) {
  const { t } = useTranslation();
  const hydrated = useHydrated();
  const enrol = kind === 'enrol';
  return (
    <>
      <TextField
        name="password"
        type="password"
        label={t(enrol ? 'ops.new_password' : 'authpage.password')}
        value={password}
        error={form.fields.password}
        autoComplete={enrol ? 'new-password' : 'current-password'}
        onChange={setPassword}
      />
      <CodeField id={`ops-${kind}`} value={code} error={form.fields.code ?? ''} onChange={setCode} inputTestId="ops-code" errorTestId="ops-code-error" />
      <div className="settings-actions">
        <button className="btn btn-primary" type="submit" disabled={form.sending || !hydrated} data-testid={`ops-${kind}-submit`}>
          {form.sending ? t('authpage.sending') : t(enrol ? 'ops.enrol_submit' : 'ops.login_submit')}
        </button>
        {children}
      </div>
    </>
  );
}

function OpsEnrol() {
  const { t } = useTranslation();
  const hydrated = useHydrated();
  const form = useOpsForm();
  const [token, setToken] = useState('');
  const [start, setStart] = useState<TEnrolStart | null>(null);
  const [done, setDone] = useState(false);
  const [password, setPassword] = useState('');
  const [code, setCode] = useState('');
  const doneRef = useRef<HTMLDivElement>(null);
  useEffect(() => {
    if (done) focusWhenShown(doneRef.current);
  }, [done]);

  // biome-ignore lint/correctness/useExhaustiveDependencies: once, on arrival: the link is read and spent from the hash
  useEffect(() => {
    // The token rides in the hash: it never reaches a server log or a Referer.
    const fromHash = decodeURIComponent(window.location.hash.slice(1));
    if (!fromHash) {
      form.setFormError(t('ops.enrol_no_token'));
      return;
    }
    setToken(fromHash);
    void form.send(async () => setStart(await api(CALLS['POST /api/ops/enrol/start'], { body: { token: fromHash } })));
  }, []);

  async function finish(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    await form.send(async () => {
      await api(CALLS['POST /api/ops/enrol/finish'], { body: { token, password, code } });
      setDone(true);
    });
  }

  if (done)
    return (
      <div ref={doneRef} tabIndex={-1} data-testid="ops-enrol-done">
        <p className="form-success" role="status">
          {t('ops.enrol_done')}
        </p>
        <a className="btn btn-primary" href={LOGIN_PATH} data-testid="ops-to-login">
          {t('ops.to_login')}
        </a>
      </div>
    );
  if (!start) return form.formError ? <FormError text={form.formError} /> : <p className="ops-wait">{hydrated ? t('ops.loading') : ''}</p>;
  return (
    <form className="tfa-step" method="post" noValidate onSubmit={finish} ref={form.formRef} data-testid="ops-enrol-form">
      <p>
        {t('ops.enrol_for')} <strong data-testid="ops-enrol-email">{start.email}</strong>
      </p>
      <TotpScan qr={qrPath(start.otpauth_uri)} secret={start.secret} testIdPrefix="ops" />
      <FormError text={form.formError} />
      <PasswordCodeSubmit form={form} kind="enrol" password={password} setPassword={setPassword} code={code} setCode={setCode} />
    </form>
  );
}

function OpsLogin() {
  const { t, i18n } = useTranslation();
  const form = useOpsForm();
  const [email, setEmail] = useState('');
  const [password, setPassword] = useState('');
  const [code, setCode] = useState('');

  // The second factor: the code typed, or an assertion of one of the operator's passkeys.
  async function signIn(factor: { code: string } | { passkey: string }) {
    await form.send(async () => {
      const { operator } = await api(CALLS['POST /api/ops/sign-in'], { body: { email, password, ...factor } });
      // The operator's own language from now on (the site's language cookie), whatever this page was in.
      if (operator.locale !== i18n.language) await api(CALLS['POST /api/lang'], { body: { lang: operator.locale } });
      window.location.assign('/ops');
    });
  }

  const onSubmit = (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    void signIn({ code });
  };

  return (
    <form className="auth-form" method="post" noValidate onSubmit={onSubmit} ref={form.formRef} data-testid="ops-login-form">
      <FormError text={form.formError} />
      <TextField name="email" type="email" label={t('authpage.email')} value={email} error={form.fields.email} autoComplete="username" onChange={setEmail} />
      <PasswordCodeSubmit form={form} kind="login" password={password} setPassword={setPassword} code={code} setCode={setCode}>
        <PasskeyProofButton
          ask={opsPasskeySignIn}
          onProof={(passkey) => signIn({ passkey })}
          onError={form.setFormError}
          disabled={form.sending}
          label={t('ops.login_passkey')}
          testId="ops-login-passkey"
        />
      </PasswordCodeSubmit>
    </form>
  );
}

function OpsHome() {
  const { t, i18n } = useTranslation();
  const displayDateTime = useDisplayDateTime();
  const [operator, setOperator] = useState<TOpsOperator | null>(null);
  const [rows, setRows] = useState<TAuditRow[] | null>(null);
  const [error, setError] = useState('');
  const [sending, setSending] = useState(false);

  // biome-ignore lint/correctness/useExhaustiveDependencies: once, on arrival
  useEffect(() => {
    void (async () => {
      try {
        const me = await api(CALLS['GET /api/ops/me']);
        setOperator(me.operator);
        // Switched with the header's language buttons since signing in: kept as the operator's own.
        const locale = i18n.language === 'en' ? 'en' : 'ru';
        if (me.operator.locale !== locale) await api(CALLS['POST /api/ops/locale'], { body: { locale } });
        if (me.operator.permissions.includes('audit.view')) {
          const audit = await api(CALLS['GET /api/ops/audit'], { query: { order: 'desc' } });
          setRows(audit.rows.slice(0, AUDIT_ROWS_SHOWN));
        }
      } catch (err) {
        // The core hides /api/ops from anyone without an ops session: 404 means "sign in".
        if (err instanceof ApiError && err.status === 404) window.location.replace(LOGIN_PATH);
        else setError(err instanceof ApiError ? err.message : t('error.generic'));
      }
    })();
  }, []);

  async function signOut() {
    setSending(true);
    try {
      await api(CALLS['POST /api/ops/sign-out']);
    } catch {
      // A session that is gone already is as signed out as can be.
    }
    window.location.assign(LOGIN_PATH);
  }

  if (!operator) return error ? <FormError text={error} /> : <p className="ops-wait">{t('ops.loading')}</p>;
  return (
    <div className="ops-home" data-testid="ops-home">
      <dl className="kyc-dl">
        <dt>{t('ops.operator')}</dt>
        <dd data-testid="ops-email">{operator.email}</dd>
        <dt>{t('ops.roles')}</dt>
        <dd data-testid="ops-roles">{operator.roles.join(', ')}</dd>
        <dt>{t('ops.permissions')}</dt>
        <dd>
          <ul className="ops-permissions" data-testid="ops-permissions">
            {operator.permissions.map((permission) => (
              <li key={permission}>
                <code>{permission}</code>
              </li>
            ))}
          </ul>
        </dd>
      </dl>
      <div className="settings-actions">
        <a className="btn btn-outline" href="/ops/security" data-testid="ops-to-security">
          {t('ops.security_link')}
        </a>
        <button className="btn btn-outline" type="button" onClick={signOut} disabled={sending} data-testid="ops-sign-out">
          {t('ops.sign_out')}
        </button>
      </div>
      {rows && (
        <section className="ops-audit" aria-labelledby="ops-audit-title">
          <h2 id="ops-audit-title">{t('ops.audit_title')}</h2>
          {rows.length === 0 ? (
            <p>{t('ops.audit_empty')}</p>
          ) : (
            <section
              className="ops-table-wrap"
              aria-labelledby="ops-audit-title"
              // biome-ignore lint/a11y/noNoninteractiveTabindex: a scrolling region must be reachable by keyboard (axe scrollable-region-focusable)
              tabIndex={0}
            >
              <table className="ops-table" data-testid="ops-audit">
                <thead>
                  <tr>
                    {AUDIT_COLUMNS.map((column) => (
                      <th scope="col" key={column}>
                        {t(`ops.audit_${column}`)}
                      </th>
                    ))}
                  </tr>
                </thead>
                <tbody>
                  {rows.map((row) => (
                    <tr key={row.id}>
                      <td>{displayDateTime(row.at)}</td>
                      <td>{row.actor}</td>
                      <td>
                        <code>{row.action}</code>
                      </td>
                      <td>{row.subject ?? '—'}</td>
                      <td>{row.outcome}</td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </section>
          )}
        </section>
      )}
    </div>
  );
}

export default function OpsDoor({ locale, messages, timeZone, mode }: TProps) {
  return (
    <IslandRoot locale={locale} messages={messages} timeZone={timeZone}>
      {mode === 'enrol' ? <OpsEnrol /> : mode === 'login' ? <OpsLogin /> : <OpsHome />}
    </IslandRoot>
  );
}
