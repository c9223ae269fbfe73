import { createHash, randomBytes } from 'node:crypto';
import { TOKEN_PATTERN } from '@obmen/shared';

/** 256 random bits as 43 base64url characters: session tokens and mailed one-time links. */
export function newToken(): string {
  return randomBytes(32).toString('base64url');
}

/** What the database keeps: sha256 of the token. Lookups are by hash, so no timing leak either. */
export function hashToken(token: string): Buffer {
  return createHash('sha256').update(token, 'utf8').digest();
}

export function isTokenShaped(token: unknown): token is string {
  return typeof token === 'string' && TOKEN_PATTERN.test(token);
}
