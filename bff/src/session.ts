import type { FastifyRequest } from 'fastify';
import type { IncomingHttpHeaders } from 'node:http';
import {
  LINK_BINDING_COOKIE,
  LINK_BINDING_HEADER,
  SESSION_CLEARED,
  SESSION_COOKIE,
  SESSION_STATE_HEADER,
  SESSION_TOKEN_HEADER,
  TOKEN_PATTERN,
  linkBindingCookie,
  sessionCookieOfAnswer,
} from '@obmen/shared';

/**
 * The BFF owns the session cookie; browser JavaScript never sees a token.
 *   browser → core: the remember_token cookie becomes `Authorization: Bearer <token>`.
 *   core → browser: `x-obmen-session-token` becomes the cookie (and is stripped);
 *                   `x-obmen-session: cleared` (dead token, logout) clears it.
 * The link binding (shared/src/auth.ts) travels the same way: the link_binding cookie goes to
 * the core as `x-obmen-link-binding`, and that header from the core becomes the cookie.
 * Both are a few header reads per request: no body is parsed.
 */

/** A cookie that cannot be a token still goes as a Bearer core refuses, so core says "cleared". */
const NOT_A_TOKEN = 'Bearer invalid';

/** For rewriteRequestHeaders, after the client's own Authorization/Cookie were removed. */
export function forwardSession(request: FastifyRequest, headers: IncomingHttpHeaders): void {
  const binding = request.cookies[LINK_BINDING_COOKIE];
  if (binding !== undefined && TOKEN_PATTERN.test(binding)) headers[LINK_BINDING_HEADER] = binding;
  const token = request.cookies[SESSION_COOKIE];
  if (token === undefined) return;
  headers.authorization = TOKEN_PATTERN.test(token) ? `Bearer ${token}` : NOT_A_TOKEN;
}

function appendSetCookie(headers: IncomingHttpHeaders, cookie: string): void {
  const existing = headers['set-cookie'];
  headers['set-cookie'] = existing === undefined ? [cookie] : [...existing, cookie];
}

/** For rewriteHeaders: turns core's session headers into Set-Cookie and strips them. */
export function applySessionHeaders(headers: IncomingHttpHeaders, request: FastifyRequest): void {
  const binding = headers[LINK_BINDING_HEADER];
  if (binding !== undefined) {
    delete headers[LINK_BINDING_HEADER];
    if (typeof binding === 'string' && TOKEN_PATTERN.test(binding)) appendSetCookie(headers, linkBindingCookie(binding, request.https));
  }
  const state = headers[SESSION_STATE_HEADER];
  if (headers[SESSION_TOKEN_HEADER] === undefined && state === undefined) return;
  const cookie = sessionCookieOfAnswer(headers, {
    sentCookie: request.cookies[SESSION_COOKIE] !== undefined,
    dead: state === SESSION_CLEARED,
    secure: request.https,
  });
  delete headers[SESSION_TOKEN_HEADER];
  delete headers[SESSION_STATE_HEADER];
  if (cookie) appendSetCookie(headers, cookie);
}
