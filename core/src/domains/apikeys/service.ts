import { randomBytes } from 'node:crypto';
import { isIPv6 } from 'node:net';
import {
  API_KEYS_MAX,
  translate,
  type TApiKey,
  type TApiKeyCreateBody,
  type TApiKeyCreated,
  type TApiKeyScope,
  type TApiKeysResponse,
  type TLocale,
} from '@obmen/shared';
import type { Db, Queryable } from '../../db/index.ts';
import { AppError, notFoundOf } from '../../errors.ts';
import { parseCidrList } from '../../lib/cidr.ts';
import { queueMail } from '../../mail/outbox.ts';
import { base32Encode } from '../security/totp.ts';
import { secondFactorEnabled, secondFactorNeed, verifySecondFactor } from '../security/second-factor.ts';
import type { TDocumentCipher } from '../verification/cipher.ts';

/*
 * Keys for bots: made in /settings/api with the second factor, listed with their last use,
 * revoked at will. What a signed request may reach is each route's `config.apiKey` (guard.ts).
 */

export type TApiKeyDeps = { db: Db; cipher: TDocumentCipher; mailer: { kick: () => void }; now: () => Date };
type TKeyOwner = { id: string; email: string; account_id: number; locale: TLocale };

const KEY_COLUMNS = `public_id AS id, label, scopes, ips, created_at, expires_at, last_used_at, last_used_ip`;
type TKeyRow = Omit<TApiKey, 'created_at' | 'expires_at' | 'last_used_at'> & { created_at: Date; expires_at: Date | null; last_used_at: Date | null };

const toApiKey = (row: TKeyRow): TApiKey => ({
  ...row,
  created_at: row.created_at.toISOString(),
  expires_at: row.expires_at?.toISOString() ?? null,
  last_used_at: row.last_used_at?.toISOString() ?? null,
});

/** The live keys of the account (revoked and expired ones are not shown), newest first. */
export async function listApiKeys(db: Queryable, userId: string, now: Date): Promise<TApiKeysResponse> {
  const [rows, need] = await Promise.all([
    db.query<TKeyRow>(
      `SELECT ${KEY_COLUMNS} FROM api_keys WHERE user_id = $1 AND revoked_at IS NULL AND (expires_at IS NULL OR expires_at > $2) ORDER BY id DESC`,
      [userId, now],
    ),
    secondFactorNeed(db, userId),
  ]);
  return { status: 'ok', keys: rows.map(toApiKey), ...need };
}

/** "ok_" and 100 random bits in lower-case base32: what a client sends to name its key. */
const newKeyId = () => `ok_${base32Encode(randomBytes(13)).toLowerCase().slice(0, 20)}`;

/**
 * A new key, after the second factor. Only an account with 2FA on may have keys: a key acts
 * without a person, so it is made by someone who proved more than a password. The `transfer`
 * scope also needs an IP allow-list: its requests send money to other users without asking
 * the second factor again. The secret is shown in this answer and never again.
 */
export async function createApiKey(deps: TApiKeyDeps, user: TKeyOwner, body: TApiKeyCreateBody, locale: TLocale): Promise<TApiKeyCreated> {
  const now = deps.now();
  // A bare address is a network of one.
  const ips = [...new Set(body.ips.map((ip) => (ip.includes('/') ? ip : `${ip}/${isIPv6(ip) ? 128 : 32}`)))];
  if (ips.length && !parseCidrList(ips.join(','))) throw new AppError('validation', { fields: { ips: 'apikeys.ips_invalid' } });
  if (body.scopes.includes('transfer') && !ips.length) throw new AppError('api_key_transfer_needs_ips');
  const expiresAt = body.expires_on ? new Date(`${body.expires_on}T00:00:00Z`) : null;
  if (expiresAt) {
    expiresAt.setUTCDate(expiresAt.getUTCDate() + 1);
    if (expiresAt <= now) throw new AppError('validation', { fields: { expires_on: 'apikeys.expiry_past' } });
  }
  if (!(await secondFactorEnabled(deps.db, user.id))) throw new AppError('api_key_needs_second_factor');
  await verifySecondFactor(deps.db, user.id, body, now.getTime());
  const secret = randomBytes(32).toString('base64url');
  const sealed = await deps.cipher.encrypt(secret);
  const scopes = [...new Set(body.scopes)].sort((a, b) => SCOPE_ORDER[a] - SCOPE_ORDER[b]);
  const created = await deps.db.transaction(async (tx) => {
    // One at a time per account, so two requests cannot both take the last free place.
    await tx.query('SELECT 1 FROM users WHERE id = $1 FOR UPDATE', [user.id]);
    const [{ live }] = (await tx.query<{ live: number }>(
      'SELECT count(*)::int AS live FROM api_keys WHERE user_id = $1 AND revoked_at IS NULL AND (expires_at IS NULL OR expires_at > $2)',
      [user.id, now],
    )) as [{ live: number }];
    if (live >= API_KEYS_MAX) throw new AppError('api_keys_full', { vars: { count: API_KEYS_MAX } });
    const [row] = (await tx.query<TKeyRow>(
      `INSERT INTO api_keys (public_id, user_id, label, secret_sealed, scopes, ips, created_at, expires_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8) RETURNING ${KEY_COLUMNS}`,
      [newKeyId(), user.id, body.label, sealed, scopes, ips, now, expiresAt],
    )) as [TKeyRow];
    await queueMail(tx, {
      kind: 'api_key_created',
      to: user.email,
      locale: user.locale,
      vars: { account_id: user.account_id, label: body.label, scopes: scopes.join(', ') },
    });
    return row;
  });
  deps.mailer.kick();
  return {
    ...(await listApiKeys(deps.db, user.id, now)),
    message: translate(locale, 'apikeys.created'),
    created: { ...toApiKey(created), secret },
  };
}

const SCOPE_ORDER: Record<TApiKeyScope, number> = { read: 0, exchange: 1, transfer: 2 };

/** Revokes one of the account's keys at once; another account's key answers like a missing one. */
export async function revokeApiKey(db: Db, userId: string, publicId: string, now: Date, locale: TLocale) {
  const [row] = await db.query('UPDATE api_keys SET revoked_at = $3 WHERE public_id = $1 AND user_id = $2 AND revoked_at IS NULL RETURNING id', [
    publicId,
    userId,
    now,
  ]);
  if (!row) throw notFoundOf('api_key');
  return { ...(await listApiKeys(db, userId, now)), message: translate(locale, 'apikeys.revoked') };
}

/** Nonces past the signature window cannot be replayed any more (their timestamps are refused). */
export async function purgeApiKeyNonces(db: Queryable, now: Date): Promise<number> {
  const rows = await db.query('DELETE FROM api_key_nonces WHERE used_at < $1 RETURNING 1', [new Date(now.getTime() - 10 * 60_000)]);
  return rows.length;
}
