import { useState, type FormEvent } from 'react';
import { useTranslation } from 'react-i18next';
import type { TInviteCode } from '@obmen/shared/referral';
import { api, ApiError } from '../lib/api.ts';
import { CALLS } from '@obmen/shared/calls';
import { useHydrated } from '../lib/use-hydrated.ts';
import { IslandRoot, type TIslandProps } from './IslandRoot.tsx';
import { FormError } from './FormParts.tsx';

/** The user's invite codes: the main one and up to 5 labelled ones (add, retire). */
function ReferralCodesBody({ codes: initial }: { codes: TInviteCode[] }) {
  const { t } = useTranslation();
  const [codes, setCodes] = useState(initial);
  const [label, setLabel] = useState('');
  const [error, setError] = useState('');
  const [done, setDone] = useState('');
  const [sending, setSending] = useState(false);
  const hydrated = useHydrated();

  async function send(body: Record<string, string>) {
    setSending(true);
    setError('');
    setDone('');
    try {
      const answer = await api(CALLS['POST /api/referral/invite'], { body });
      setCodes(answer.codes);
      setDone(answer.message ?? '');
      setLabel('');
    } catch (err) {
      setError(err instanceof ApiError ? (err.fields.label ?? err.message) : t('error.generic'));
    } finally {
      setSending(false);
    }
  }

  function onAdd(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    if (!label.trim()) {
      setError(t('validation.required'));
      return;
    }
    void send({ label: label.trim() });
  }

  return (
    <div className="referral-codes" data-testid="referral-codes">
      <ul className="code-list">
        {codes.map((code) => (
          <li key={code.code} className="code-item" data-testid="referral-code">
            <span className="code-text">
              <strong>{code.label ?? t('referral.code_main')}</strong>
              <code>{code.code}</code>
              <span className="muted">
                {t('referral.referees_title')}: {code.referees}
              </span>
            </span>
            {code.label !== null && (
              <button type="button" className="btn btn-ghost btn-sm" disabled={sending || !hydrated} onClick={() => void send({ retire: code.code })}>
                {t('referral.code_retire')}
              </button>
            )}
          </li>
        ))}
      </ul>
      <form className="code-add" noValidate onSubmit={onAdd}>
        <label className="field">
          <span className="field-label">{t('referral.code_label')}</span>
          <input
            name="label"
            maxLength={40}
            value={label}
            onChange={(event) => setLabel(event.target.value)}
            aria-invalid={error ? 'true' : undefined}
            aria-describedby={error ? 'code-error' : undefined}
          />
        </label>
        <button className="btn btn-primary" type="submit" disabled={sending || !hydrated}>
          {t('referral.code_add')}
        </button>
      </form>
      <FormError text={error} id="code-error" />
      {done && (
        <p className="form-success" role="status">
          {done}
        </p>
      )}
    </div>
  );
}

export default function ReferralCodes({ locale, messages, codes }: TIslandProps & { codes: TInviteCode[] }) {
  return (
    <IslandRoot locale={locale} messages={messages}>
      <ReferralCodesBody codes={codes} />
    </IslandRoot>
  );
}
