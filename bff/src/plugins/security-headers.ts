import fp from 'fastify-plugin';
import { CSP_DIRECTIVES } from '@obmen/shared';

/** Pages get their policy (with script and style hashes) from Astro; everything else gets this. */
export const CONTENT_SECURITY_POLICY = [...CSP_DIRECTIVES, "script-src 'self'", "style-src 'self'"].join('; ');

export const SECURITY_HEADERS: Readonly<Record<string, string>> = {
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'strict-origin-when-cross-origin',
  'x-frame-options': 'DENY',
  'cross-origin-opener-policy': 'same-origin',
  'permissions-policy': 'camera=(), microphone=(), geolocation=(), payment=()',
  'content-security-policy': CONTENT_SECURITY_POLICY,
};
const HSTS = 'max-age=31536000; includeSubDomains';

const PAGE_HEADERS = Object.entries(SECURITY_HEADERS).filter(([name]) => name !== 'content-security-policy');

/** For pages, which Astro writes to the raw response with its own hashed CSP. */
export function applySecurityHeaders(res: { setHeader(name: string, value: string): unknown }, https: boolean) {
  for (const [name, value] of PAGE_HEADERS) res.setHeader(name, value);
  if (https) res.setHeader('strict-transport-security', HSTS);
}

const OVER_HTTP: Readonly<Record<string, string>> = SECURITY_HEADERS;
const OVER_HTTPS: Readonly<Record<string, string>> = { ...SECURITY_HEADERS, 'strict-transport-security': HSTS };

/**
 * The headers every answer but a page gets (through Fastify, and the /api proxy's own). A
 * stricter policy the core chose stays: private files carry `default-src 'none'; sandbox` (core
 * storage/files.ts), which the site's policy would loosen to script-capable.
 */
export function securityHeaders(https: boolean, ownPolicy: unknown): Readonly<Record<string, string>> {
  const headers = https ? OVER_HTTPS : OVER_HTTP;
  return ownPolicy === undefined ? headers : { ...headers, 'content-security-policy': String(ownPolicy) };
}

export default fp(
  async (app) => {
    app.addHook('onSend', async (request, reply) => {
      reply.headers(securityHeaders(request.https, reply.getHeader('content-security-policy')));
    });
  },
  { name: 'security-headers' },
);
