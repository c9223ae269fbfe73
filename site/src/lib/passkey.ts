import {
  browserSupportsWebAuthn,
  browserSupportsWebAuthnAutofill,
  startAuthentication,
  startRegistration,
  WebAuthnAbortService,
  type PublicKeyCredentialCreationOptionsJSON,
  type PublicKeyCredentialRequestOptionsJSON,
} from '@simplewebauthn/browser';
import { api } from './api.ts';
import { CALLS } from '@obmen/shared/calls';

/*
 * Passkeys in the browser (@simplewebauthn/browser): the core's options go to the browser's
 * ceremony as they came, and its answer goes back as one JSON text field. A ceremony the
 * person cancels (or the browser refuses) is a PasskeyCancelled; the core's refusals stay ApiErrors.
 */

export class PasskeyCancelled extends Error {}

export const passkeysSupported = (): boolean => typeof window !== 'undefined' && browserSupportsWebAuthn();

function ceremonyFailed(err: unknown): never {
  throw new PasskeyCancelled(err instanceof Error ? err.message : String(err));
}

type TOptions = { options: { challenge: string } };

async function assertion({ options }: TOptions): Promise<string> {
  try {
    return JSON.stringify(await startAuthentication({ optionsJSON: options as unknown as PublicKeyCredentialRequestOptionsJSON }));
  } catch (err) {
    return ceremonyFailed(err);
  }
}

/** An assertion by one of the signed-in user's passkeys, for the `passkey` field of a guarded form. */
export async function passkeySecondFactor(): Promise<string> {
  return assertion(await api(CALLS['POST /api/security/second_factor/options'], { body: {} }));
}

/** An assertion by a passkey of the user a pending sign-in (its challenge) is for: its second step. */
export async function passkeySignInStep(challenge: string): Promise<string> {
  return assertion(await api(CALLS['POST /api/auth/login_second_factor/options'], { body: { challenge } }));
}

/** An assertion by an operator's passkey for the back office's sign-in (the password names the operator). */
export async function opsPasskeySignIn(): Promise<string> {
  return assertion(await api(CALLS['POST /api/ops/passkey/options'], { body: {} }));
}

/** A new credential on this device from a registration's options: the attestation as JSON text. */
export async function newPasskeyCredential({ options }: TOptions): Promise<string> {
  try {
    return JSON.stringify(await startRegistration({ optionsJSON: options as unknown as PublicKeyCredentialCreationOptionsJSON }));
  } catch (err) {
    return ceremonyFailed(err);
  }
}

/**
 * Creates a passkey on this device and keeps it under `name`, with the second factor when 2FA is
 * on (a code, or an assertion by a passkey the account already has).
 */
export async function addPasskey(name: string, proof: { code?: string; passkey?: string }): Promise<string> {
  const credential = await newPasskeyCredential(await api(CALLS['POST /api/security/passkeys/options'], { body: {} }));
  const answer = await api(CALLS['POST /api/security/passkeys'], { body: { name, credential, ...proof } });
  return answer.message;
}

/**
 * Signs in with a passkey alone. `autofill`: the browser offers the passkeys in the e-mail
 * field's suggestions (conditional UI) and the promise waits until one is picked; a button's
 * ceremony cancels such a wait first (the library's abort service).
 */
export async function signInWithPasskey(autofill: boolean): Promise<void> {
  if (autofill && !(await browserSupportsWebAuthnAutofill())) return new Promise(() => {});
  const { options } = await api(CALLS['POST /api/auth/passkey/options'], { body: {} });
  let credential: string;
  try {
    credential = JSON.stringify(
      await startAuthentication({ optionsJSON: options as unknown as PublicKeyCredentialRequestOptionsJSON, useBrowserAutofill: autofill }),
    );
  } catch (err) {
    return ceremonyFailed(err);
  }
  await api(CALLS['POST /api/auth/passkey'], { body: { credential } });
}

export const cancelPasskeyCeremony = () => WebAuthnAbortService.cancelCeremony();
