import type { Dispatcher } from 'undici';
import { REQUEST_ID_HEADER, type TLocale } from '@obmen/shared';

/**
 * Server-side calls from pages to the core, through the BFF's one pooled client
 * (Astro.locals.core; fetch() costs about three times as much per call). Every call carries the
 * visitor's address (the core's per-IP limits are per visitor, not per BFF) and the page
 * request's id, and is bounded by
 * UPSTREAM_TIMEOUT_MS from the moment it is made, waiting for a free connection included.
 */
export class CoreError extends Error {
  readonly status: number;
  readonly body: unknown;
  constructor(status: number, body: unknown) {
    super(`core answered ${status}`);
    this.status = status;
    this.body = body;
  }
}

/** What pages read of the BFF's validated configuration (Astro.locals.config). */
export type TPageConfig = { NODE_ENV: 'development' | 'production' | 'test'; UPSTREAM_TIMEOUT_MS: number };

/** What a call needs of the page's locals (the middleware calls before `locale` is set). */
export type TCoreLocals = { core: Dispatcher; config: TPageConfig; clientIp: string; locale?: TLocale; requestId?: string | undefined };

/** Who the call is for: the visitor's session token, when it acts as them; the locale when not the page's. */
export type TCoreCall = { token?: string | undefined; locale?: TLocale };

/** A GET with the answer's headers too (the session headers live there). */
export async function coreGetWithHeaders<T>(
  locals: TCoreLocals,
  path: string,
  call: TCoreCall = {},
): Promise<{ body: T; headers: Record<string, string | string[] | undefined> }> {
  return coreRequest<T>(locals, 'GET', path, call);
}

/** A POST of a JSON body, for the calls that only read or open a view (a payment's check, a deposit address). */
export async function corePost<T>(locals: TCoreLocals, path: string, body: object, call: TCoreCall = {}): Promise<T> {
  return (await coreRequest<T>(locals, 'POST', path, call, body)).body;
}

async function coreRequest<T>(
  locals: TCoreLocals,
  method: 'GET' | 'POST',
  path: string,
  call: TCoreCall,
  json?: object,
): Promise<{ body: T; headers: Record<string, string | string[] | undefined> }> {
  const locale = call.locale ?? locals.locale;
  const headers: Record<string, string> = { accept: 'application/json', 'x-forwarded-for': locals.clientIp };
  if (locale) headers['x-obmen-locale'] = locale;
  if (call.token) headers.authorization = `Bearer ${call.token}`;
  if (json) headers['content-type'] = 'application/json';
  // The core logs the call under the page request's id (its reqId): one request, one id.
  if (locals.requestId) headers[REQUEST_ID_HEADER] = locals.requestId;
  const res = await locals.core.request({
    path,
    method,
    headers,
    body: json ? JSON.stringify(json) : null,
    signal: AbortSignal.timeout(locals.config.UPSTREAM_TIMEOUT_MS),
  });
  const body = (await res.body.json()) as T;
  if (res.statusCode >= 400) throw new CoreError(res.statusCode, body);
  return { body, headers: res.headers };
}

export async function coreGet<T>(locals: TCoreLocals, path: string, call: TCoreCall = {}): Promise<T> {
  return (await coreGetWithHeaders<T>(locals, path, call)).body;
}
