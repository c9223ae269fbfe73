import { createHmac, randomBytes } from 'node:crypto';
import type { FastifyInstance, LightMyRequestResponse } from 'fastify';
import { API_KEY_HEADER, API_NONCE_HEADER, API_SIGNATURE_HEADER, API_TIMESTAMP_HEADER, apiSigningText } from '@obmen/shared';

/** A bot's request as /article/api tells one to sign it; what a test changes is named. */
export type TSignedCall = {
  key: { id: string; secret: string };
  method?: 'GET' | 'POST';
  path: string;
  /** Sent as JSON. */
  body?: object;
  nowMs: number;
  nonce?: string;
  /** The client address as the BFF reports it. */
  ip?: string;
  headers?: Record<string, string>;
  /** Sign these bytes but send `body` (a body altered in flight). */
  signedBody?: string;
};

export function signedHeaders(call: TSignedCall & { method: string; bodyText: string }): Record<string, string> {
  const timestamp = String(Math.floor(call.nowMs / 1000));
  const nonce = call.nonce ?? randomBytes(12).toString('base64url');
  const signature = createHmac('sha256', call.key.secret)
    .update(apiSigningText({ timestamp, nonce, method: call.method, path: call.path }))
    .update(call.signedBody ?? call.bodyText)
    .digest('hex');
  return { [API_KEY_HEADER]: call.key.id, [API_TIMESTAMP_HEADER]: timestamp, [API_NONCE_HEADER]: nonce, [API_SIGNATURE_HEADER]: signature };
}

export function signedCall(app: FastifyInstance, call: TSignedCall): Promise<LightMyRequestResponse> {
  const method = call.method ?? (call.body === undefined ? 'GET' : 'POST');
  const bodyText = call.body === undefined ? '' : JSON.stringify(call.body);
  return app.inject({
    method,
    url: call.path,
    headers: {
      'x-forwarded-for': call.ip ?? '198.51.100.20',
      ...(call.body === undefined ? {} : { 'content-type': 'application/json' }),
      ...signedHeaders({ ...call, method, bodyText }),
      ...call.headers,
    },
    ...(call.body === undefined ? {} : { payload: bodyText }),
  });
}
