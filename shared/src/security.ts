import { z } from 'zod';
import { ZEmail, ZAuthState, TOKEN_PATTERN } from './auth.ts';
import { ZPasskeyAnswerText, ZPasskeyInfo } from './passkeys.ts';

/*
 * Account security (/settings/security, /settings/bind-email): the second factor, sessions,
 * the sign-in log, the second step of a password sign-in and the e-mail change.
 */

/** The second step of a password sign-in lasts this long, and takes this many codes at most. */
export const SIGN_IN_CHALLENGE_TTL_S = 5 * 60;
export const SIGN_IN_CHALLENGE_TRIES = 5;
/** An e-mail change link (to the new address) works this long; the "it was not me" link a week. */
export const EMAIL_CHANGE_TTL_S = 24 * 60 * 60;
export const EMAIL_CHANGE_REPORT_TTL_S = 7 * 24 * 60 * 60;

/** Where the e-mail change links land: the page POSTs the token. */
export const EMAIL_CHANGE_PATHS = { confirm: '/settings/bind-email?confirm=', report: '/settings/bind-email?report=' } as const;

/** A code typed by the user: six digits or a recovery code (spaces and dashes allowed). */
export const ZSecondFactorCode = z
  .string({ error: (issue) => (issue.input === undefined ? 'validation.required' : 'validation.invalid') })
  .trim()
  .min(1, 'validation.required')
  .max(32, 'validation.invalid');

export const ZCodeBody = z.object({ code: ZSecondFactorCode });
export type TCodeBody = z.infer<typeof ZCodeBody>;

/** POST /api/auth/login_second_factor/options: the pending sign-in a passkey's challenge is made for. */
export const ZSignInChallengeBody = z.object({ challenge: z.string().regex(TOKEN_PATTERN, 'security.challenge_invalid') });
export type TSignInChallengeBody = z.infer<typeof ZSignInChallengeBody>;

/** POST /api/auth/login_second_factor: a TOTP or recovery code, or a passkey's assertion (JSON text). */
export const ZSecondFactorLoginBody = ZSignInChallengeBody.extend({ code: ZSecondFactorCode.optional(), passkey: ZPasskeyAnswerText });
export type TSecondFactorLoginBody = z.infer<typeof ZSecondFactorLoginBody>;

/**
 * What a password sign-in answers when 2FA is on: nobody is signed in yet. `totp`: the step takes
 * a typed code; without it (passkeys alone) only a passkey's assertion.
 */
export const ZSecondFactorChallenge = z.object({ challenge: z.string(), expires_in: z.number().int(), totp: z.boolean() });

/** POST /api/auth/login_by_password: signed in, or (2FA on) anonymous with `second_factor`. */
export const ZPasswordSignInResponse = ZAuthState.extend({ second_factor: ZSecondFactorChallenge.optional() });
export type TPasswordSignInResponse = z.infer<typeof ZPasswordSignInResponse>;

export const ZSessionInfo = z.object({
  id: z.string(),
  device: z.string().nullable(),
  ip: z.string().nullable(),
  created_at: z.string(),
  last_seen_at: z.string(),
  current: z.boolean(),
});
export type TSessionInfo = z.infer<typeof ZSessionInfo>;

export const ZSignInRecord = z.object({
  at: z.string(),
  ip: z.string().nullable(),
  device: z.string().nullable(),
  method: z.enum(['password', 'link', 'second_factor', 'passkey']),
  success: z.boolean(),
  failure: z.enum(['password', 'code', 'expired']).nullable(),
});
export type TSignInRecord = z.infer<typeof ZSignInRecord>;

/**
 * GET /api/security. `second_factor.enabled` is the TOTP app; `passkeys` counts the passkeys,
 * which are a second factor too: with either, guarded actions ask for it.
 */
export const ZSecurityResponse = z.object({
  status: z.literal('ok'),
  second_factor: z.object({ enabled: z.boolean(), enabled_at: z.string().nullable(), recovery_codes_left: z.number().int(), passkeys: z.number().int() }),
  passkeys: z.array(ZPasskeyInfo),
  sessions: z.array(ZSessionInfo),
  sign_ins: z.array(ZSignInRecord),
  withdrawals_blocked_until: z.string().nullable(),
});
export type TSecurityResponse = z.infer<typeof ZSecurityResponse>;

/** POST /api/security/totp/setup: the secret to scan; the QR code as one SVG path of unit squares. */
export const ZTotpSetupResponse = z.object({
  status: z.literal('ok'),
  secret: z.string(),
  otpauth_uri: z.string(),
  qr: z.object({ size: z.number().int(), path: z.string() }),
});
export type TTotpSetupResponse = z.infer<typeof ZTotpSetupResponse>;

/** POST /api/security/totp/enable: the ten recovery codes, shown this once. */
export const ZTotpEnableResponse = z.object({ status: z.literal('ok'), message: z.string(), recovery_codes: z.array(z.string()) });

export const ZSecurityMessage = z.object({ status: z.literal('ok'), message: z.string() });

/**
 * POST /api/auth/sign_in/report/{token} ("this wasn't me" from a new-sign-in mail): every session
 * ended, withdrawals held; `reset_url` opens a password reset (null where sign-in is by e-mail link).
 */
export const ZSignInReport = z.object({ status: z.literal('ok'), message: z.string(), reset_url: z.string().nullable() });
export type TSignInReport = z.infer<typeof ZSignInReport>;

export const ZSessionParams = z.object({ id: z.string().regex(/^[1-9]\d{0,17}$/) });

/** POST /api/security/sessions/revoke_others */
export const ZRevokeOthersResponse = ZSecurityMessage.extend({ revoked: z.number().int() });

// ---- e-mail change ---------------------------------------------------------------------------

/** POST /api/user/email */
export const ZEmailChangeBody = z.object({ email: ZEmail });
export type TEmailChangeBody = z.infer<typeof ZEmailChangeBody>;

/** GET /api/user/email: the address, and the change waiting for its link, if any. */
export const ZEmailStateResponse = z.object({
  status: z.literal('ok'),
  email: z.string(),
  email_confirmed: z.boolean(),
  pending: z.object({ email: z.string(), expires_at: z.string() }).nullable(),
});
export type TEmailStateResponse = z.infer<typeof ZEmailStateResponse>;
