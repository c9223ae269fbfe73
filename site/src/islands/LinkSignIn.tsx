import { useEffect, useState } from 'react';
import { useTranslation } from 'react-i18next';
import { api, ApiError } from '../lib/api.ts';
import { IslandRoot, type TIslandProps } from './IslandRoot.tsx';
import { SecondFactorStep, type TSecondFactorAnswer } from './SecondFactorStep.tsx';

/** `landing`: where the signed-in user goes (a confirmed sign-up: their account, to deposit). */
type TProps = TIslandProps & { path: string; landing: string };

/**
 * Spends a mailed token by POST once the page runs: a GET never signs anyone in, so mail
 * scanners that open links burn nothing.
 */
function LinkSignInBody({ path, landing }: { path: string; landing: string }) {
  const { t } = useTranslation();
  const [error, setError] = useState('');
  const [codeStep, setCodeStep] = useState<{ challenge: string; lead: string } | null>(null);
  useEffect(() => {
    api<TSecondFactorAnswer>(path, { method: 'POST', json: {} }).then(
      (answer) =>
        answer.second_factor ? setCodeStep({ challenge: answer.second_factor.challenge, lead: answer.message ?? '' }) : window.location.assign(landing),
      (err: unknown) => setError(err instanceof ApiError ? err.message : t('authpage.link_failed')),
    );
  }, [path, landing, t]);
  if (codeStep && !error)
    return (
      <SecondFactorStep
        challenge={codeStep.challenge}
        lead={codeStep.lead}
        landing={landing}
        onRestart={(message) => {
          setCodeStep(null);
          setError(message);
        }}
      />
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

export default function LinkSignIn({ locale, messages, path, landing }: TProps) {
  return (
    <IslandRoot locale={locale} messages={messages}>
      <LinkSignInBody path={path} landing={landing} />
    </IslandRoot>
  );
}
