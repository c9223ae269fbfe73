import { z } from 'zod';

/*
 * Passkeys (WebAuthn). A browser's answer to a ceremony (@simplewebauthn/browser's
 * RegistrationResponseJSON or AuthenticationResponseJSON) travels as one JSON text field, so the
 * same field works in JSON bodies and in the urlencoded money forms; core parses and checks it.
 */

/** How long a challenge handed to the browser can be answered. */
export const PASSKEY_CHALLENGE_TTL_S = 5 * 60;
/** Passkeys one account may hold. */
export const PASSKEYS_MAX = 10;

const blankToUndefined = (value: unknown) => (typeof value === 'string' && value.trim() === '' ? undefined : value);

/** A ceremony's answer as JSON text; empty means "not given". */
export const ZPasskeyAnswerText = z.preprocess(blankToUndefined, z.string().max(16_384, 'validation.invalid').optional());

/** The second factor of a guarded action: a TOTP or recovery code, or a passkey's assertion. */
export const ZSecondFactorFields = {
  code: z.preprocess(blankToUndefined, z.string().trim().max(40, 'validation.invalid').optional()),
  passkey: ZPasskeyAnswerText,
};
export const ZSecondFactorBody = z.object(ZSecondFactorFields);

/**
 * What an answer tells a guarded form of the user's second factor: 2FA is on (`second_factor`:
 * TOTP or a passkey) and a typed code works (`totp`; passkeys alone take only an assertion).
 */
export const ZSecondFactorNeed = { second_factor: z.boolean(), totp: z.boolean() };
export type TSecondFactorNeed = { second_factor: boolean; totp: boolean };

/** Which factor parts a guarded form shows: the code field with TOTP on, "Confirm with a passkey" whenever 2FA is on. */
export type TFactorFields = { code: boolean; passkey: boolean };
export function factorFields(need: TSecondFactorNeed): TFactorFields {
  return { code: need.second_factor && need.totp, passkey: need.second_factor };
}

/** The same from GET /api/security's `second_factor` (`enabled`: the TOTP app; `passkeys`: how many). */
export function factorFieldsOfOverview(factor: { enabled: boolean; passkeys: number }): TFactorFields {
  return factorFields({ second_factor: factor.enabled || factor.passkeys > 0, totp: factor.enabled });
}
export type TSecondFactorBody = z.infer<typeof ZSecondFactorBody>;

const base64url = z
  .string()
  .regex(/^[A-Za-z0-9_-]*$/)
  .max(8192);

/** What core reads of an assertion (navigator.credentials.get through the library). */
export const ZPasskeyAssertion = z.object({
  id: base64url,
  rawId: base64url,
  type: z.literal('public-key'),
  response: z.object({
    clientDataJSON: base64url,
    authenticatorData: base64url,
    signature: base64url,
    userHandle: base64url.optional(),
  }),
  authenticatorAttachment: z.enum(['platform', 'cross-platform']).optional(),
  clientExtensionResults: z.record(z.string(), z.unknown()),
});

/** What core reads of an attestation (navigator.credentials.create through the library). */
export const ZPasskeyAttestation = z.object({
  id: base64url,
  rawId: base64url,
  type: z.literal('public-key'),
  response: z.object({
    clientDataJSON: base64url,
    attestationObject: base64url,
    authenticatorData: base64url.optional(),
    transports: z.array(z.string().max(32)).max(8).optional(),
    publicKeyAlgorithm: z.number().int().optional(),
    publicKey: base64url.optional(),
  }),
  authenticatorAttachment: z.enum(['platform', 'cross-platform']).optional(),
  clientExtensionResults: z.record(z.string(), z.unknown()),
});

/**
 * The options a ceremony starts from (PublicKeyCredentialCreationOptionsJSON or
 * PublicKeyCredentialRequestOptionsJSON), handed to the browser library as they are.
 */
export const ZPasskeyOptionsResponse = z.object({ status: z.literal('ok'), options: z.looseObject({ challenge: z.string() }) });
export type TPasskeyOptionsResponse = z.infer<typeof ZPasskeyOptionsResponse>;

/** A new passkey: the name it is kept under and the browser's attestation (JSON text). */
export const ZPasskeyNewFields = {
  name: z
    .string({ error: 'validation.required' })
    .trim()
    .min(1, 'validation.required')
    .max(60, 'validation.too_long')
    .regex(/^[^\p{Cc}\p{Cf}]*$/u, 'validation.invalid'),
  credential: z.string({ error: 'validation.required' }).min(1, 'validation.required').max(16_384, 'validation.invalid'),
};

/** POST /api/security/passkeys: a name and the new credential, with the second factor when 2FA is on. */
export const ZPasskeyAddBody = z.object({ ...ZPasskeyNewFields, ...ZSecondFactorFields });
export type TPasskeyAddBody = z.infer<typeof ZPasskeyAddBody>;

export const ZPasskeyParams = z.object({ id: z.string().regex(/^[1-9]\d{0,17}$/) });

/** One passkey of the account as /settings/security lists it. */
export const ZPasskeyInfo = z.object({ id: z.string(), name: z.string(), created_at: z.string(), last_used_at: z.string().nullable() });
export type TPasskeyInfo = z.infer<typeof ZPasskeyInfo>;

/** POST /api/auth/passkey: a sign-in with a passkey alone (a discoverable credential). */
export const ZPasskeySignInBody = z.object({ credential: z.string({ error: 'validation.required' }).min(1, 'validation.required').max(16_384) });
export type TPasskeySignInBody = z.infer<typeof ZPasskeySignInBody>;
