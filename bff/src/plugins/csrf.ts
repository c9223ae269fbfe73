import fp from 'fastify-plugin';
import { sendError } from '../errors.ts';
import { redactUrl } from '@obmen/shared';

const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

/** What the check reads of a request: Fastify's, or the raw one at the front door (api-proxy.ts). */
type TOriginSource = { headers: { origin?: string | undefined; 'sec-fetch-site'?: string | string[] | undefined }; protocol: string; host: string };

/**
 * Is this state-changing request from a page of another site? Browsers send Origin on every
 * cross-origin POST/PUT/PATCH/DELETE (fetch and forms alike); where Origin is missing, modern
 * browsers still send Sec-Fetch-Site. With neither header the caller is no browser (curl, a
 * server), and no browser can be made to omit both, so it passes.
 *
 * "same-site" (another subdomain) counts as foreign too: only our own origin may change state.
 */
function isForeignRequest(request: TOriginSource, allowedOrigins: ReadonlySet<string>): boolean {
  const origin = request.headers.origin;
  if (origin !== undefined) {
    if (allowedOrigins.has(origin)) return false;
    return origin !== `${request.protocol}://${request.host}`;
  }
  const site = request.headers['sec-fetch-site'];
  return site !== undefined && site !== 'same-origin' && site !== 'none';
}

/**
 * The one CSRF rule, for the hook below and the /api proxy's front door (api-proxy.ts, which
 * leaves a refused request to this hook): true when a state-changing request comes from a page
 * of another site. `allowedOrigins`: extra exact origins (e.g. the public URL).
 */
export function crossSiteRule(allowedOrigins: readonly string[]): (method: string, request: TOriginSource) => boolean {
  const allowed = new Set(allowedOrigins.map((url) => new URL(url).origin));
  return (method, request) => !SAFE_METHODS.has(method) && isForeignRequest(request, allowed);
}

/**
 * CSRF defence for everything the session cookie authenticates: a cross-site POST, PUT, PATCH
 * or DELETE gets 403 JSON in onRequest, before any body is read or anything is proxied. GETs
 * change nothing by design; SameSite=Lax keeps the cookie off cross-site subresource requests.
 * `allowedOrigins`: extra exact origins (e.g. the public URL when a proxy rewrites Host).
 */
export default fp<{ allowedOrigins?: readonly string[] }>(
  async (app, { allowedOrigins = [] }) => {
    const isCrossSite = crossSiteRule(allowedOrigins);
    app.addHook('onRequest', async (request, reply) => {
      if (!isCrossSite(request.method, request)) return;
      request.log.warn({ origin: request.headers.origin, site: request.headers['sec-fetch-site'], url: redactUrl(request.url) }, 'cross-site request refused');
      return sendError(request, reply, 403, 'csrf', 'error.csrf');
    });
  },
  { name: 'csrf', dependencies: ['@fastify/cookie'] },
);
