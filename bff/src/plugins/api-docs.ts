import { createHash } from 'node:crypto';
import type { FastifyPluginAsync } from 'fastify';
import apiReference from '@scalar/fastify-api-reference';
import { CSP_DIRECTIVES } from '@obmen/shared';
import { sendError } from '../errors.ts';
import { finishDocument } from '../openapi.ts';
import { chooseEncoding, precompress, varyOnEncoding, type TEncoding } from '../compression.ts';

/*
 * The API document and its reader. The core generates the OpenAPI 3.1 document from its route
 * schemas; GET /api/openapi.json here finishes it with what the BFF does (openapi.ts) and serves it
 * (never through the proxy, which would splice `fv` into it). GET /api/docs/ is a Scalar
 * reference served from the package's own bundle (no CDN, no web fonts).
 */

export const OPENAPI_PATH = '/api/openapi.json';
export const DOCS_PATH = '/api/docs';
/** The reader's script (Scalar's standalone bundle, about 4.9 MB of JavaScript). */
export const DOCS_BUNDLE_PATH = `${DOCS_PATH}/js/scalar.js`;
/** Its name carries no hash: kept a day, not for ever. */
const BUNDLE_CACHE_CONTROL = 'public, max-age=86400';
/** Brotli 9: 0.4 s once for 4% more bytes than 11, which takes 6.7 s. */
const DOCS_BUNDLE_BROTLI_QUALITY = 9;

/** sha256 sources of a page's inline scripts, for a policy that allows exactly those. */
function inlineScriptHashes(html: string): string[] {
  const hashes = new Set<string>();
  for (const match of html.matchAll(/<script(?![^>]*\ssrc=)[^>]*>([\s\S]*?)<\/script>/g)) {
    hashes.add(
      `'sha256-${createHash('sha256')
        .update(match[1] ?? '')
        .digest('base64')}'`,
    );
  }
  return [...hashes];
}

const apiDocs: FastifyPluginAsync = async (app) => {
  let kept: { coreText: string; merged: string } | null = null;

  app.get(OPENAPI_PATH, async (request, reply) => {
    let coreText: string;
    let statusCode: number;
    try {
      const answer = await app.core.request({ path: OPENAPI_PATH, method: 'GET' });
      statusCode = answer.statusCode;
      coreText = await answer.body.text();
    } catch (err) {
      request.log.warn({ code: (err as { code?: string }).code }, 'core unreachable for the API document');
      return sendError(request, reply, 503, 'upstream_unavailable', 'error.upstream_unavailable');
    }
    if (statusCode !== 200) return sendError(request, reply, 502, 'bad_gateway', 'error.bad_gateway');
    if (kept?.coreText !== coreText) kept = { coreText, merged: finishDocument(coreText) };
    return reply.type('application/json; charset=utf-8').header('cache-control', 'no-cache').send(kept.merged);
  });

  // The reader page runs its own inline bootstrap and styles its widgets inline: it gets a
  // policy of its own (this encapsulated hook runs after the global security headers).
  app.addHook('onSend', async (request, reply, payload) => {
    if (typeof payload !== 'string' || !String(reply.getHeader('content-type')).startsWith('text/html')) return payload;
    const scripts = ["'self'", ...inlineScriptHashes(payload)].join(' ');
    reply.header('content-security-policy', [...CSP_DIRECTIVES, `script-src ${scripts}`, "style-src 'self' 'unsafe-inline'"].join('; '));
    return payload;
  });

  // The bundle is the same for every request: compressed once (about 1.2 MB as brotli), on first demand.
  let bundleCopies: Promise<Partial<Record<TEncoding, Buffer>>> | null = null;
  app.addHook('onSend', async (request, reply, payload) => {
    if (request.routeOptions.url !== DOCS_BUNDLE_PATH || typeof payload !== 'string') return payload;
    bundleCopies ??= precompress(Buffer.from(payload), DOCS_BUNDLE_BROTLI_QUALITY);
    reply.header('cache-control', BUNDLE_CACHE_CONTROL).header('vary', varyOnEncoding(reply.getHeader('vary')));
    const encoding = chooseEncoding(request.headers['accept-encoding']);
    const copy = encoding && (await bundleCopies)[encoding];
    if (!copy) return payload;
    reply.header('content-encoding', encoding);
    return copy;
  });

  await app.register(apiReference, {
    routePrefix: DOCS_PATH,
    logLevel: 'warn',
    configuration: {
      url: OPENAPI_PATH,
      pageTitle: 'Obmen API',
      withDefaultFonts: false,
      hideClientButton: true,
      // Scalar's own promotions ("Ask AI", "Deploy", "Generate MCP") would call its services
      // from our reference page: none of them belongs in it.
      showDeveloperTools: 'never',
      agent: { disabled: true },
      mcp: { disabled: true },
    },
  });
};

export default apiDocs;
