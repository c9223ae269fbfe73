import type { IncomingHttpHeaders } from 'node:http';
import {
  LINK_BINDING_COOKIE,
  LINK_BINDING_HEADER,
  OPS_API_PREFIX,
  OPS_COOKIE,
  OPS_SESSION_STATE_HEADER,
  OPS_TOKEN_HEADER,
  SESSION_CLEARED,
  SESSION_COOKIE,
  SESSION_STATE_HEADER,
  SESSION_TOKEN_HEADER,
  TOKEN_PATTERN,
  clearedOpsCookie,
  linkBindingCookie,
  opsCookie,
  sessionCookieOfAnswer,
} from '@obmen/shared';

/**
 * The BFF owns the session cookie; browser JavaScript never sees a token.
 *   browser → core: the remember_token cookie becomes `Authorization: Bearer <token>`.
 *   core → browser: `x-obmen-session-token` becomes the cookie (and is stripped);
 *                   `x-obmen-session: cleared` (dead token, logout) clears it.
 * The link binding (shared/src/auth.ts) travels the same way: the link_binding cookie goes to
 * the core as `x-obmen-link-binding`, and that header from the core becomes the cookie.
 * The back office's session (shared/src/ops.ts) is kept apart: on /api/ops/* only the ops_token
 * cookie goes, as `x-obmen-ops-token`, and never the customer's session or binding, so a
 * customer's cookie can neither open nor be confused with an operator's; other paths never
 * carry the ops token.
 * All of it is a few header reads per request: no body is parsed.
 */

/** A cookie that cannot be a token still goes as a Bearer core refuses, so core says "cleared". */
const NOT_A_TOKEN = 'Bearer invalid';

/** What the session rules read of a request: Fastify's request, or the /api proxy's own (proxy.ts). */
export type TSessionRequest = { url: string; cookies: Readonly<Record<string, string | undefined>>; https: boolean };

function isOpsRequest(request: TSessionRequest): boolean {
  return request.url.startsWith(OPS_API_PREFIX);
}

/** For the headers to the core, after the client's own Authorization/Cookie were removed. */
export function forwardSession(request: TSessionRequest, headers: IncomingHttpHeaders): void {
  if (isOpsRequest(request)) {
    const opsToken = request.cookies[OPS_COOKIE];
    // A malformed cookie is sent anyway: the core answers "cleared" and the cookie goes.
    if (opsToken !== undefined && opsToken !== '') headers[OPS_TOKEN_HEADER] = TOKEN_PATTERN.test(opsToken) ? opsToken : 'invalid';
    return;
  }
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

/** For the core's answer headers: turns its session headers into Set-Cookie and strips them. */
export function applySessionHeaders(headers: IncomingHttpHeaders, request: TSessionRequest): void {
  const binding = headers[LINK_BINDING_HEADER];
  if (binding !== undefined) {
    delete headers[LINK_BINDING_HEADER];
    if (typeof binding === 'string' && TOKEN_PATTERN.test(binding)) appendSetCookie(headers, linkBindingCookie(binding, request.https));
  }
  applyOpsHeaders(headers, request);
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

/** The ops session's pair of headers: read on /api/ops answers only, stripped from every answer. */
function applyOpsHeaders(headers: IncomingHttpHeaders, request: TSessionRequest): void {
  const token = headers[OPS_TOKEN_HEADER];
  const state = headers[OPS_SESSION_STATE_HEADER];
  if (token === undefined && state === undefined) return;
  delete headers[OPS_TOKEN_HEADER];
  delete headers[OPS_SESSION_STATE_HEADER];
  if (!isOpsRequest(request)) return;
  const secure = request.https;
  if (typeof token === 'string' && TOKEN_PATTERN.test(token)) appendSetCookie(headers, opsCookie(token, secure));
  else if (state === SESSION_CLEARED && request.cookies[OPS_COOKIE] !== undefined) appendSetCookie(headers, clearedOpsCookie(secure));
}
