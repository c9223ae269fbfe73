import { useState } from 'react';
import { useTranslation } from 'react-i18next';
import { ApiError } from '../lib/api.ts';
import { PasskeyCancelled, passkeySecondFactor, passkeysSupported } from '../lib/passkey.ts';
import { useHydrated } from '../lib/use-hydrated.ts';

/** What a failed passkey step says: cancelled, no passkey on the account, or the core's refusal. */
export function passkeyFailureText(err: unknown, t: (key: 'passkey.cancelled' | 'passkey.none' | 'error.generic') => string): string {
  if (err instanceof PasskeyCancelled) return t('passkey.cancelled');
  if (err instanceof ApiError) return err.code === 'passkey_not_found' ? t('passkey.none') : err.message;
  return t('error.generic');
}

/**
 * "Confirm with a passkey" beside a code field: asks the browser for an assertion by one of the
 * user's passkeys (or what `ask` asks for: the back office's sign-in) and hands it to `onProof`
 * (which sends the guarded form with it). Shown only where the browser has WebAuthn.
 */
export function PasskeyProofButton({
  onProof,
  onError,
  disabled,
  label,
  testId = 'use-passkey',
  ask = passkeySecondFactor,
}: {
  onProof: (passkey: string) => void | Promise<void>;
  onError: (message: string) => void;
  disabled?: boolean;
  /** What the button does, when more than confirming (e.g. "Turn off with a passkey"). */
  label?: string;
  testId?: string;
  ask?: () => Promise<string>;
}) {
  const { t } = useTranslation();
  const hydrated = useHydrated();
  const [asking, setAsking] = useState(false);
  if (!hydrated || !passkeysSupported()) return null;

  async function confirm() {
    setAsking(true);
    let proof: string;
    try {
      proof = await ask();
    } catch (err) {
      onError(passkeyFailureText(err, t));
      return;
    } finally {
      setAsking(false);
    }
    await onProof(proof);
  }

  return (
    <button type="button" className="btn btn-outline" onClick={confirm} disabled={disabled || asking} data-testid={testId}>
      {asking ? t('passkey.asking') : (label ?? t('passkey.use'))}
    </button>
  );
}
