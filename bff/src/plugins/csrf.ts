import fp from 'fastify-plugin';
import type { FastifyRequest } from 'fastify';
import { sendError } from '../errors.ts';
import { redactUrl } from '@obmen/shared';

const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

/**
 * Is this state-changing request from a page of another site? Browsers send Origin on every
 * cross-origin POST/PUT/PATCH/DELETE (fetch and forms alike); where Origin is missing, modern
 * browsers still send Sec-Fetch-Site. With neither header the caller is no browser (curl, a
 * server), and no browser can be made to omit both, so it passes.
 *
 * "same-site" (another subdomain) counts as foreign too: only our own origin may change state.
 */
export function isForeignRequest(request: FastifyRequest, allowedOrigins: ReadonlySet<string>): boolean {
  const origin = request.headers.origin;
  if (origin !== undefined) {
    if (allowedOrigins.has(origin)) return false;
    return origin !== `${request.protocol}://${request.host}`;
  }
  const site = request.headers['sec-fetch-site'];
  return site !== undefined && site !== 'same-origin' && site !== 'none';
}

/**
 * CSRF defence for everything the session cookie authenticates: a cross-site POST, PUT, PATCH
 * or DELETE gets 403 JSON in onRequest, before any body is read or anything is proxied. GETs
 * change nothing by design; SameSite=Lax keeps the cookie off cross-site subresource requests.
 * `allowedOrigins`: extra exact origins (e.g. the public URL when a proxy rewrites Host).
 */
export default fp<{ allowedOrigins?: readonly string[] }>(
  async (app, { allowedOrigins = [] }) => {
    const allowed = new Set(allowedOrigins.map((url) => new URL(url).origin));
    app.addHook('onRequest', async (request, reply) => {
      if (SAFE_METHODS.has(request.method)) return;
      if (!isForeignRequest(request, allowed)) return;
      request.log.warn({ origin: request.headers.origin, site: request.headers['sec-fetch-site'], url: redactUrl(request.url) }, 'cross-site request refused');
      return sendError(request, reply, 403, 'csrf', 'error.csrf');
    });
  },
  { name: 'csrf', dependencies: ['@fastify/cookie'] },
);
