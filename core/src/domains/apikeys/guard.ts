import { createHmac, timingSafeEqual } from 'node:crypto';
import { PassThrough, type Readable } from 'node:stream';
import fp from 'fastify-plugin';
import type { FastifyRequest } from 'fastify';
import {
  API_KEY_HEADER,
  API_KEY_ID_PATTERN,
  API_NONCE_HEADER,
  API_NONCE_PATTERN,
  API_SIGNATURE_HEADER,
  API_SIGNATURE_PATTERN,
  API_SIGNATURE_WINDOW_S,
  API_TIMESTAMP_HEADER,
  apiSigningText,
  isLocale,
  type TApiKeyScope,
} from '@obmen/shared';
import { AppError } from '../../errors.ts';
import { isAddressIn, parseCidrList } from '../../lib/cidr.ts';
import { consumeRateLimit } from '../../rate-limit.ts';
import { USER_COLUMNS, type TAuthUser } from '../user/public.ts';
import type { TDocumentCipher } from '../verification/cipher.ts';
import { LOCALE_HEADER } from '../../plugins/locale.ts';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** The scope a key needs to call this route; a route without it refuses signed requests. */
    apiKey?: TApiKeyScope;
  }
  interface FastifyRequest {
    /** The key of a signed request, between its checks on arrival and its signature's. */
    apiKey: TPendingKey | null;
  }
}

type TPendingKey = { id: string; secret: string; timestamp: string; nonce: string; signature: Buffer };
type TKeyRow = TAuthUser & { key_id: string; secret_sealed: Buffer; scopes: TApiKeyScope[]; ips: string[]; expires_at: Date | null };

const header = (request: FastifyRequest, name: string): string | undefined => {
  const value = request.headers[name];
  return typeof value === 'string' ? value : undefined;
};

/**
 * Signed requests of bots' keys. On arrival (before the route's own hooks): the headers' shape,
 * the timestamp within the window, a live key of an open account, the route's scope, the key's
 * IP allow-list and its rate limit. Then, before the body is parsed, the signature over the raw
 * bytes and the nonce, spent once. Whatever fails, the route never runs: nothing moves.
 */
export default fp<{ cipher: TDocumentCipher; now: () => Date }>(
  async (app, { cipher, now }) => {
    app.decorateRequest('apiKey', null);

    app.addHook('onRequest', async (request) => {
      const keyId = header(request, API_KEY_HEADER);
      if (keyId === undefined) return;
      // A path no route serves stays the ordinary 404.
      if (request.routeOptions.url === undefined) return;
      const timestamp = header(request, API_TIMESTAMP_HEADER) ?? '';
      const nonce = header(request, API_NONCE_HEADER) ?? '';
      const signature = header(request, API_SIGNATURE_HEADER) ?? '';
      if (!API_KEY_ID_PATTERN.test(keyId) || !API_NONCE_PATTERN.test(nonce) || !API_SIGNATURE_PATTERN.test(signature) || !/^\d{1,12}$/.test(timestamp))
        throw new AppError('api_key_invalid');
      if (Math.abs(now().getTime() / 1000 - Number(timestamp)) > API_SIGNATURE_WINDOW_S)
        throw new AppError('api_key_stale', { vars: { seconds: API_SIGNATURE_WINDOW_S } });
      const [key] = await app.db.query<TKeyRow>(
        `SELECT k.id::text AS key_id, k.secret_sealed, k.scopes, k.ips, k.expires_at, ${USER_COLUMNS}
           FROM api_keys k JOIN users u ON u.id = k.user_id
          WHERE k.public_id = $1 AND k.revoked_at IS NULL AND u.closed_at IS NULL AND u.sign_in_blocked_at IS NULL`,
        [keyId],
      );
      if (!key || (key.expires_at && key.expires_at <= now())) throw new AppError('api_key_invalid');
      const scope = request.routeOptions.config?.apiKey;
      if (!scope || !key.scopes.includes(scope)) throw new AppError('api_key_scope');
      const allowed = key.ips.length ? parseCidrList(key.ips.join(',')) : null;
      if (allowed && !isAddressIn(allowed, request.ip)) throw new AppError('api_key_ip');
      await consumeRateLimit(app.db, 'api_key', key.key_id);
      const { key_id, secret_sealed, scopes: _scopes, ips: _ips, expires_at: _expires, ...user } = key;
      request.apiKey = { id: key_id, secret: await cipher.decrypt(secret_sealed), timestamp, nonce, signature: Buffer.from(signature, 'hex') };
      // A key's transfers do not ask the second factor: it was given when the key was made, and
      // a key with the transfer scope only answers from its allow-listed addresses.
      request.user = { ...user, second_factor: false };
      request.sessionId = null;
      if (!isLocale(request.headers[LOCALE_HEADER])) request.locale = user.locale;
    });

    app.addHook('preParsing', async (request, _reply, payload) => {
      const pending = request.apiKey;
      if (!pending) return payload;
      const body = await readAll(payload, request.routeOptions.bodyLimit ?? Number.POSITIVE_INFINITY);
      const expected = createHmac('sha256', pending.secret)
        .update(apiSigningText({ timestamp: pending.timestamp, nonce: pending.nonce, method: request.method, path: request.url }))
        .update(body)
        .digest();
      if (!timingSafeEqual(expected, pending.signature)) throw new AppError('api_key_signature');
      const [spent] = await app.db.query(
        `WITH nonce AS (INSERT INTO api_key_nonces (key_id, nonce, used_at) VALUES ($1, $2, $3) ON CONFLICT DO NOTHING RETURNING key_id)
         UPDATE api_keys SET last_used_at = $3, last_used_ip = $4 FROM nonce WHERE api_keys.id = nonce.key_id RETURNING 1`,
        [pending.id, pending.nonce, now(), request.ip],
      );
      if (!spent) throw new AppError('api_key_replayed');
      const replay = new PassThrough();
      replay.end(body);
      return replay;
    });
  },
  { name: 'api-keys', dependencies: ['db', 'locale', 'errors', 'session'] },
);

/** The raw body, up to the route's limit (413 beyond, as the parser would answer). */
async function readAll(payload: Readable, limit: number): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of payload) {
    size += (chunk as Buffer).length;
    if (size > limit) throw new AppError('upload_too_large');
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks);
}
