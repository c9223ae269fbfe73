import { useState, type FormEvent } from 'react';
import { useTranslation } from 'react-i18next';
import { CALLS } from '@obmen/shared/calls';
import type { TPaymentSystemGroup } from '@obmen/shared/payments';
import type { TPaymentField } from '@obmen/shared/payment-fields';
import type { TWithdrawBook } from '@obmen/shared/withdraw';
import type { TFactorFields } from '@obmen/shared/passkeys';
import { api, ApiError } from '../lib/api.ts';
import { useHydrated } from '../lib/use-hydrated.ts';
import { ActionRow, FormError, FormSaved } from './FormParts.tsx';
import { PasskeyProofButton } from './PasskeyParts.tsx';
import { IslandRoot, type TIslandProps, useDisplayDateTime } from './IslandRoot.tsx';

type TProps = TIslandProps & { book: TWithdrawBook; groups: TPaymentSystemGroup[]; factor: TFactorFields; confirm: string | null };

/**
 * /withdraw/book: the saved destinations with when each may be used, adding one (the system's
 * own fields, the second factor when 2FA is on: a code or a passkey), removing one,
 * "allow-list only" (turning it off takes the second factor too), and the
 * confirmation of a mailed link (?confirm=), which waits for a click.
 */
function BookBody({ book: initial, groups, factor, confirm }: Omit<TProps, 'locale' | 'messages' | 'timeZone'>) {
  const { t, i18n } = useTranslation();
  const locale = i18n.language === 'en' ? 'en' : 'ru';
  const when = useDisplayDateTime();
  const hydrated = useHydrated();
  const [book, setBook] = useState(initial);
  const [message, setMessage] = useState('');
  const [error, setError] = useState('');
  const [fieldErrors, setFieldErrors] = useState<Record<string, string>>({});
  const [busy, setBusy] = useState(false);
  const [pending, setPending] = useState(confirm);
  // Locked systems too: the book may be filled before the level that opens them.
  const options = groups.flatMap((group) => group.systems.map((system) => ({ group, system, key: `${system.id}|${group.currency}` })));
  const [choice, setChoice] = useState(options[0]?.key ?? '');
  const [values, setValues] = useState<Record<string, string>>({});
  const [code, setCode] = useState('');
  const chosen = options.find((option) => option.key === choice);
  const names: Array<'label' | 'code' | TPaymentField> = ['label', ...(chosen?.system.fields ?? []), ...(factor.code ? (['code'] as const) : [])];

  async function run(call: () => Promise<TWithdrawBook & { message: string }>) {
    setBusy(true);
    setError('');
    setMessage('');
    setFieldErrors({});
    try {
      const answer = await call();
      setBook(answer);
      setMessage(answer.message);
      return true;
    } catch (err) {
      setError(err instanceof ApiError ? err.message : t('error.generic'));
      if (err instanceof ApiError) setFieldErrors(err.fields);
      return false;
    } finally {
      setBusy(false);
    }
  }

  async function add(proof: { code: string } | { passkey: string } | Record<string, never>) {
    if (!chosen) return;
    const body = { ps: chosen.system.id, currency: chosen.group.currency, label: values.label ?? '', ...values, ...proof };
    if (await run(() => api(CALLS['POST /api/withdraw/book'], { body }))) {
      setValues({});
      setCode('');
    }
  }

  function onAdd(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    void add(factor.code ? { code } : {});
  }

  const toggleAllowlist = (proof: { code: string } | { passkey: string } | Record<string, never>) =>
    void run(() => api(CALLS['POST /api/withdraw/book/allowlist'], { body: { on: !book.allowlist.on, ...(book.allowlist.on ? proof : {}) } }));

  const systemName = (ps: string) => options.find((option) => option.system.id === ps)?.system.name[locale] ?? ps;
  return (
    <div className="wb" data-testid="withdraw-book">
      <FormError text={error} testId="form-error" />
      <FormSaved text={message} testId="book-message" />
      {pending && (
        <div className="card settings-card" data-testid="book-confirm">
          <h2>{t('withdraw.book_confirm_title')}</h2>
          <ActionRow
            sending={busy}
            hydrated={hydrated}
            label={t('withdraw.book_confirm')}
            testId="book-confirm-button"
            onClick={() =>
              void run(() => api(CALLS['POST /api/withdraw/book/confirm/{token}'], { params: { token: pending }, body: {} })).then(() => setPending(null))
            }
          />
        </div>
      )}
      <div className="card settings-card" data-testid="book-list">
        <h2>{t('withdraw.book_list_title')}</h2>
        {book.destinations.length === 0 ? (
          <p className="muted">{t('withdraw.book_empty')}</p>
        ) : (
          <ul className="wb-list">
            {book.destinations.map((entry) => (
              <li key={entry.id} className="wb-item" data-testid="book-entry" data-state={entry.state}>
                <span className="wb-label">
                  <strong>{entry.label}</strong> · {entry.currency} · {systemName(entry.ps)}
                </span>
                <span className="wb-shown">{entry.shown}</span>
                <span className="muted">
                  {entry.state === 'usable'
                    ? t('withdraw.book_usable')
                    : entry.state === 'waiting'
                      ? t('withdraw.book_waiting_until', { at: when(entry.usable_from) })
                      : t('withdraw.book_needs_confirm')}
                </span>
                <button
                  type="button"
                  className="btn btn-outline"
                  disabled={busy || !hydrated}
                  aria-label={`${t('withdraw.book_remove')}: ${entry.label}`}
                  onClick={() => void run(() => api(CALLS['POST /api/withdraw/book/{id}/remove'], { params: { id: entry.id }, body: {} }))}
                  data-testid="book-remove"
                >
                  {t('withdraw.book_remove')}
                </button>
              </li>
            ))}
          </ul>
        )}
      </div>
      <div className="card settings-card">
        <h2>{t('withdraw.book_add_title')}</h2>
        <p className="settings-lead">{t('withdraw.book_add_lead')}</p>
        <form className="settings-form" noValidate onSubmit={onAdd} data-testid="book-add">
          <label className="field">
            <span className="field-label">{t('withdraw.book_system')}</span>
            <select value={choice} onChange={(event) => setChoice(event.target.value)} data-testid="book-system">
              {options.map((option) => (
                <option key={option.key} value={option.key}>
                  {option.group.currency} · {option.system.name[locale]}
                </option>
              ))}
            </select>
          </label>
          {names.map((name) => (
            <label className="field" key={name}>
              <span className="field-label">{t(name === 'label' ? 'withdraw.book_label' : `withdraw.${name}`)}</span>
              <input
                name={name}
                autoComplete={name === 'code' ? 'one-time-code' : 'off'}
                value={name === 'code' ? code : (values[name] ?? '')}
                onChange={(event) => (name === 'code' ? setCode(event.target.value) : setValues({ ...values, [name]: event.target.value }))}
                aria-invalid={fieldErrors[name] ? 'true' : undefined}
                aria-describedby={fieldErrors[name] ? `book-${name}-error` : undefined}
                data-testid={`book-${name}`}
              />
              {fieldErrors[name] && (
                <span className="field-error" id={`book-${name}-error`}>
                  {fieldErrors[name]}
                </span>
              )}
            </label>
          ))}
          <ActionRow sending={busy} hydrated={hydrated} label={t('withdraw.book_add')} testId="book-add-submit">
            {factor.passkey && <PasskeyProofButton onProof={(passkey) => add({ passkey })} onError={setError} disabled={busy} testId="book-add-passkey" />}
          </ActionRow>
        </form>
      </div>
      <div className="card settings-card" data-testid="book-allowlist" data-on={String(book.allowlist.on)}>
        <h2>{t('withdraw.book_allowlist_title')}</h2>
        <p className="settings-lead">{t('withdraw.book_allowlist_lead')}</p>
        <p data-testid="book-allowlist-state">
          {book.allowlist.on
            ? book.allowlist.off_at
              ? t('withdraw.book_allowlist_going_off', { at: when(book.allowlist.off_at) })
              : t('withdraw.book_allowlist_on')
            : t('withdraw.book_allowlist_off')}
        </p>
        {book.allowlist.on && !book.allowlist.off_at && factor.code && (
          <label className="field">
            <span className="field-label">{t('withdraw.code')}</span>
            <input name="code" autoComplete="one-time-code" value={code} onChange={(event) => setCode(event.target.value)} data-testid="book-allowlist-code" />
          </label>
        )}
        {!(book.allowlist.on && book.allowlist.off_at) && (
          <ActionRow
            sending={busy}
            hydrated={hydrated}
            label={t(book.allowlist.on ? 'withdraw.book_allowlist_turn_off' : 'withdraw.book_allowlist_turn_on')}
            testId="book-allowlist-toggle"
            onClick={() => toggleAllowlist(factor.code ? { code } : {})}
          >
            {book.allowlist.on && factor.passkey && (
              <PasskeyProofButton onProof={(passkey) => toggleAllowlist({ passkey })} onError={setError} disabled={busy} testId="book-allowlist-passkey" />
            )}
          </ActionRow>
        )}
      </div>
    </div>
  );
}

export default function WithdrawBook({ locale, messages, timeZone, ...props }: TProps) {
  return (
    <IslandRoot locale={locale} messages={messages} timeZone={timeZone}>
      <BookBody {...props} />
    </IslandRoot>
  );
}
