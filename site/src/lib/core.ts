import type { Dispatcher } from 'undici';
import { REQUEST_ID_HEADER, type TLocale } from '@obmen/shared';
import { buildPath, checkAnswer, type TAnswer, type TAnyCall, type TCallInput, type TLooseInput } from '@obmen/shared/calls';

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

/** A call's arguments: the input it needs (nothing for a bare GET) and who it is for. */
export type TCoreArgs<C extends TAnyCall> = object extends TCallInput<C> ? [input?: TCallInput<C> & TCoreCall] : [input: TCallInput<C> & TCoreCall];

type THeaders = Record<string, string | string[] | undefined>;

/**
 * A declared call (shared/src/calls.ts) to the core; the answer typed by the call's schema and,
 * outside production, checked against it.
 */
export async function callCore<C extends TAnyCall>(locals: TCoreLocals, call: C, ...args: TCoreArgs<C>): Promise<TAnswer<C>> {
  return (await callCoreWithHeaders(locals, call, ...args)).body;
}

/** The same, with the answer's headers too (the session headers live there). */
export async function callCoreWithHeaders<C extends TAnyCall>(
  locals: TCoreLocals,
  call: C,
  ...[input]: TCoreArgs<C>
): Promise<{ body: TAnswer<C>; headers: THeaders }> {
  const given: TLooseInput & TCoreCall = input ?? {};
  const locale = given.locale ?? locals.locale;
  const headers: Record<string, string> = { accept: 'application/json', 'x-forwarded-for': locals.clientIp };
  if (locale) headers['x-obmen-locale'] = locale;
  if (given.token) headers.authorization = `Bearer ${given.token}`;
  if (given.body !== undefined) headers['content-type'] = 'application/json';
  // The core logs the call under the page request's id (its reqId): one request, one id.
  if (locals.requestId) headers[REQUEST_ID_HEADER] = locals.requestId;
  const res = await locals.core.request({
    path: buildPath(call, given),
    method: call.method,
    headers,
    body: given.body !== undefined ? JSON.stringify(given.body) : null,
    signal: AbortSignal.timeout(locals.config.UPSTREAM_TIMEOUT_MS),
  });
  const body: unknown = await res.body.json();
  if (res.statusCode >= 400) throw new CoreError(res.statusCode, body);
  checkAnswer(call, body, locals.config.NODE_ENV !== 'production');
  return { body, headers: res.headers };
}
