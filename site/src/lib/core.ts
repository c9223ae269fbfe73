import { Pool } from 'undici';
import { REQUEST_ID_HEADER, type TLocale } from '@obmen/shared';

/**
 * Server-side calls from pages to the core: one pooled keep-alive client per process
 * (fetch() costs about three times as much per call).
 */
const upstream = process.env.UPSTREAM_URL ?? 'http://127.0.0.1:4000';
const timeoutMs = Number(process.env.UPSTREAM_TIMEOUT_MS ?? 10_000);
const pool = new Pool(upstream, { connections: 32, keepAliveTimeout: 60_000 });

export class CoreError extends Error {
  readonly status: number;
  readonly body: unknown;
  constructor(status: number, body: unknown) {
    super(`core answered ${status}`);
    this.status = status;
    this.body = body;
  }
}

export type TCoreCall = { locale: TLocale; token?: string | undefined; clientIp?: string | undefined; requestId?: string | undefined };

type TCallLocals = { locale: TLocale; sessionToken?: string | undefined; clientIp?: string | undefined; requestId?: string | undefined };

/** A page's call on behalf of its visitor: their session and address, and the page's request id. */
export function visitorCall(locals: TCallLocals): TCoreCall {
  return { locale: locals.locale, token: locals.sessionToken, clientIp: locals.clientIp, requestId: locals.requestId };
}

/** The same without the session: public data, the same for every visitor. */
export function publicCall(locals: TCallLocals): TCoreCall {
  return { locale: locals.locale, clientIp: locals.clientIp, requestId: locals.requestId };
}

/** A GET with the answer's headers too (the session headers live there). */
export async function coreGetWithHeaders<T>(path: string, call: TCoreCall): Promise<{ body: T; headers: Record<string, string | string[] | undefined> }> {
  const headers: Record<string, string> = { accept: 'application/json', 'x-obmen-locale': call.locale };
  if (call.token) headers.authorization = `Bearer ${call.token}`;
  if (call.clientIp) headers['x-forwarded-for'] = call.clientIp;
  if (call.requestId) headers[REQUEST_ID_HEADER] = call.requestId;
  const res = await pool.request({ path, method: 'GET', headers, headersTimeout: timeoutMs, bodyTimeout: timeoutMs });
  const body = (await res.body.json()) as T;
  if (res.statusCode >= 400) throw new CoreError(res.statusCode, body);
  return { body, headers: res.headers };
}

export async function coreGet<T>(path: string, call: TCoreCall): Promise<T> {
  return (await coreGetWithHeaders<T>(path, call)).body;
}
