import type { FastifyReply, FastifyRequest } from 'fastify';
import type { OutgoingHttpHeaders, ServerResponse } from 'node:http';
import { DEFAULT_LOCALE, LOCALE_COOKIE, isLocale, translate, type TApiError, type TI18nKey, type TLocale } from '@obmen/shared';
import type { BFF_FAILURES } from '@obmen/shared/calls';

const LOCALE_IN_COOKIE = new RegExp(`(?:^|;)\\s*${LOCALE_COOKIE}=([^;\\s]*)`);

/** What the caller's language is read from: Fastify's request, or the /api proxy's own (proxy.ts). */
type TLocaleSource = { cookies?: Readonly<Record<string, string | undefined>>; headers: { cookie?: string | undefined } };

/** The caller's language; also before the cookie plugin ran (a URL the router refused). */
export function requestLocale(request: TLocaleSource): TLocale {
  const fromCookie = request.cookies?.[LOCALE_COOKIE] ?? LOCALE_IN_COOKIE.exec(request.headers.cookie ?? '')?.[1];
  return isLocale(fromCookie) ? fromCookie : DEFAULT_LOCALE;
}

/** The shared error shape, localized for the caller; `vars` fill the message's placeholders. */
export function errorBody(request: TLocaleSource, code: string, key: TI18nKey, vars?: Record<string, string | number>): TApiError {
  return { status: 'error', code, message: translate(requestLocale(request), key, vars) };
}

export type TFailureStatus = keyof typeof BFF_FAILURES;

/**
 * The code an answer of this status may carry: with 413, 502, 503 and 504 only the ones the
 * clients are told of (BFF_FAILURES, shared/src/calls.ts), so the BFF cannot make up another.
 */
export type TErrorCode<S extends number> = S extends TFailureStatus ? (typeof BFF_FAILURES)[S][number] : string;

export function sendError<S extends number>(
  request: FastifyRequest,
  reply: FastifyReply,
  status: S,
  code: TErrorCode<S>,
  key: TI18nKey,
  vars?: Record<string, string | number>,
) {
  return reply
    .code(status)
    .type('application/json; charset=utf-8')
    .send(errorBody(request, code, key, vars));
}

/**
 * The same answer as sendError, written to the raw response: for what answers before Fastify
 * (the /api proxy at the front door) or past it (a hijacked reply). `headers` go along (the
 * security headers, Retry-After).
 */
export function writeError<S extends number>(
  request: TLocaleSource,
  res: ServerResponse,
  status: S,
  code: TErrorCode<S>,
  key: TI18nKey,
  vars: Record<string, string | number> | undefined,
  headers: OutgoingHttpHeaders,
): void {
  const body = JSON.stringify(errorBody(request, code, key, vars));
  res.writeHead(status, { ...headers, 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(body) });
  res.end(body);
}

type TOwnError<S extends number> = { code: TErrorCode<S>; key: TI18nKey };

/** What the BFF says for a failure it answers itself, by status: code and message key. */
const OWN_ERRORS: { [S in 400 | 404 | 413 | 415 | 429 | 503]: TOwnError<S> } & Partial<Record<number, TOwnError<number>>> = {
  400: { code: 'bad_request', key: 'error.bad_request' },
  404: { code: 'not_found', key: 'error.not_found' },
  413: { code: 'payload_too_large', key: 'error.payload_too_large' },
  415: { code: 'bad_request', key: 'error.bad_request' },
  429: { code: 'rate_limited', key: 'error.rate_limited' },
  503: { code: 'overloaded', key: 'error.overloaded' },
};

/**
 * Every error the BFF answers itself, in the project's shape (setErrorHandler, and Fastify's
 * frameworkErrors for a URL the router cannot read): 4xx by status, anything else a 500 that
 * says nothing of internals.
 */
export function answerError(error: { statusCode?: number }, request: FastifyRequest, reply: FastifyReply) {
  const status = error.statusCode !== undefined && error.statusCode >= 400 && error.statusCode < 600 ? error.statusCode : 500;
  const known = OWN_ERRORS[status] ?? (status < 500 ? OWN_ERRORS[400]! : { code: 'internal', key: 'error.internal' });
  if (status >= 500 && status !== 503) request.log.error({ err: error }, 'request failed');
  return sendError(request, reply, status, known.code, known.key);
}
