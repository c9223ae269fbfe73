import { useCallback, useEffect, useState } from 'react';
import { useTranslation } from 'react-i18next';
import { api, ApiError } from '../lib/api.ts';
import { CALLS } from '@obmen/shared/calls';
import { IslandRoot, type TIslandProps } from './IslandRoot.tsx';
import { codeStepOf, SecondFactorStep, type TCodeStep } from './SecondFactorStep.tsx';

/** `landing`: where the signed-in user goes (a confirmed sign-up: their account, to deposit). */
type TProps = TIslandProps & { link: TMailedLink; landing: string };

/** A mailed link: a sign-in link or a sign-up confirmation, and its token. */
export type TMailedLink = { kind: 'login' | 'confirm'; token: string };

/** Each kind's two calls: the preview (spends nothing) and the spend. */
const LINK_CALLS = {
  login: { preview: CALLS['GET /api/auth/login/{token}'], spend: CALLS['POST /api/auth/login/{token}'] },
  confirm: { preview: CALLS['GET /api/auth/confirm/{token}'], spend: CALLS['POST /api/auth/confirm/{token}'] },
} as const;

/**
 * Spends a mailed token by POST once the page runs, when this browser asked for the link (a GET
 * never signs anyone in, so mail scanners that open links burn nothing). Opened in another
 * browser, the page first asks the core (spending nothing) which account it signs into and
 * shows its masked address with a button: only the button's POST spends it, so a link someone
 * mailed to a victim cannot sign the victim into the sender's account on load.
 */
function LinkSignInBody({ link, landing }: { link: TMailedLink; landing: string }) {
  const { t } = useTranslation();
  const [error, setError] = useState('');
  const [codeStep, setCodeStep] = useState<TCodeStep | null>(null);
  const [askFor, setAskFor] = useState<string | null>(null);
  const [sending, setSending] = useState(false);
  const fail = useCallback((err: unknown) => setError(err instanceof ApiError ? err.message : t('authpage.link_failed')), [t]);
  const spend = useCallback(
    (confirm: boolean) =>
      api(LINK_CALLS[link.kind].spend, { params: { token: link.token }, body: confirm ? { confirm } : {} }).then((answer) => {
        const step = codeStepOf(answer);
        if (step) setCodeStep(step);
        else window.location.assign(landing);
      }, fail),
    [link.kind, link.token, landing, fail],
  );
  useEffect(() => {
    api(LINK_CALLS[link.kind].preview, { params: { token: link.token } }).then(
      (preview) => (preview.same_browser ? spend(false) : setAskFor(preview.email)),
      fail,
    );
  }, [link.kind, link.token, spend, fail]);
  // A spent or expired challenge: its message, with the way to ask for a new link.
  const restart = (message: string) => {
    setCodeStep(null);
    setError(message);
  };
  if (codeStep && !error) return <SecondFactorStep step={codeStep} landing={landing} onRestart={restart} />;
  if (askFor !== null && !error)
    return (
      <div data-testid="link-confirm">
        <p>
          <strong data-testid="link-confirm-question">{t('authpage.link_confirm_question', { email: askFor })}</strong>
        </p>
        <p>{t('authpage.link_confirm_lead')}</p>
        <button
          type="button"
          className="btn btn-primary"
          data-testid="link-confirm-submit"
          disabled={sending}
          onClick={() => {
            setSending(true);
            void spend(true).finally(() => setSending(false));
          }}
        >
          {t('authpage.link_confirm_submit')}
        </button>
      </div>
    );
  if (!error)
    return (
      <p role="status" data-testid="link-signing-in">
        {t('authpage.signing_in')}
      </p>
    );
  return (
    <div>
      <p className="form-error" role="alert" data-testid="form-error">
        {error}
      </p>
      <a className="btn btn-outline" href="/login">
        {t('authpage.request_new_link')}
      </a>
    </div>
  );
}

export default function LinkSignIn({ locale, messages, link, landing }: TProps) {
  return (
    <IslandRoot locale={locale} messages={messages}>
      <LinkSignInBody link={link} landing={landing} />
    </IslandRoot>
  );
}
