import { z } from 'zod';
import { ZSecondFactorFields, ZSecondFactorNeed } from './passkeys.ts';

/*
 * Keys for bots (/settings/api): a key id and a secret shown once; every request signed with
 * the secret (HMAC-SHA256) over its timestamp, a nonce, the method, the path with its query and
 * the raw body. The canonical text is built here, so the server, the docs and clients agree.
 */

/** What a key may do. Never withdrawals or settings: those stay with a person in the browser. */
export const API_KEY_SCOPES = ['read', 'exchange', 'transfer'] as const;
export const ZApiKeyScope = z.enum(API_KEY_SCOPES);
export type TApiKeyScope = z.infer<typeof ZApiKeyScope>;

export const API_KEY_HEADER = 'x-obmen-key';
export const API_TIMESTAMP_HEADER = 'x-obmen-timestamp';
export const API_NONCE_HEADER = 'x-obmen-nonce';
export const API_SIGNATURE_HEADER = 'x-obmen-signature';
/** A request's timestamp (Unix seconds) may be this far from the server's clock, either way. */
export const API_SIGNATURE_WINDOW_S = 30;
/** Active keys per account. */
export const API_KEYS_MAX = 10;
/** Signed requests per key per minute. */
export const API_KEY_REQUESTS_PER_MINUTE = 600;

export const API_KEY_ID_PATTERN = /^ok_[a-z2-7]{20}$/;
export const API_NONCE_PATTERN = /^[A-Za-z0-9_-]{8,64}$/;
export const API_SIGNATURE_PATTERN = /^[0-9a-f]{64}$/;

/** The text a request's signature covers (the raw body follows it byte for byte). */
export function apiSigningText(parts: { timestamp: string; nonce: string; method: string; path: string }): string {
  return `${parts.timestamp}\n${parts.nonce}\n${parts.method.toUpperCase()}\n${parts.path}\n`;
}

/** One IPv4/IPv6 address or network, as "203.0.113.7" or "203.0.113.0/24". */
const ZNetwork = z
  .string()
  .trim()
  .regex(/^[0-9A-Fa-f.:]{2,39}(\/\d{1,3})?$/, 'apikeys.ips_invalid');

export const ZApiKeyCreateBody = z.object({
  label: z
    .string({ error: 'validation.required' })
    .trim()
    .min(1, 'validation.required')
    .max(60, 'validation.too_long')
    .regex(/^[^\p{Cc}\p{Cf}]*$/u, 'validation.invalid'),
  scopes: z.array(ZApiKeyScope, { error: 'apikeys.scopes_required' }).min(1, 'apikeys.scopes_required').max(API_KEY_SCOPES.length),
  ips: z.array(ZNetwork).max(20, 'validation.too_long').default([]),
  /** The last day the key works (UTC), or none. */
  expires_on: z.preprocess((value) => (value === '' ? undefined : value), z.iso.date('validation.invalid').optional()),
  ...ZSecondFactorFields,
});
export type TApiKeyCreateBody = z.infer<typeof ZApiKeyCreateBody>;

export const ZApiKey = z.object({
  id: z.string(),
  label: z.string(),
  scopes: z.array(ZApiKeyScope),
  ips: z.array(z.string()),
  created_at: z.string(),
  expires_at: z.string().nullable(),
  last_used_at: z.string().nullable(),
  last_used_ip: z.string().nullable(),
});
export type TApiKey = z.infer<typeof ZApiKey>;

/** GET /api/security/api_keys: the active keys, and whether the account may create one (2FA on). */
export const ZApiKeysResponse = z.object({ status: z.literal('ok'), keys: z.array(ZApiKey), ...ZSecondFactorNeed });
export type TApiKeysResponse = z.infer<typeof ZApiKeysResponse>;

/** POST /api/security/api_keys: the new key with its secret, shown this once. */
export const ZApiKeyCreated = ZApiKeysResponse.extend({ message: z.string(), created: ZApiKey.extend({ secret: z.string() }) });
export type TApiKeyCreated = z.infer<typeof ZApiKeyCreated>;

export const ZApiKeyRevoked = ZApiKeysResponse.extend({ message: z.string() });

export const ZApiKeyParams = z.object({ id: z.string().regex(API_KEY_ID_PATTERN) });
