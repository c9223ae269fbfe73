import fp from 'fastify-plugin';

/**
 * script-src and style-src come from the page itself: Astro puts a CSP <meta> with the hashes
 * of its hydration scripts into every page. Two policies both apply, so this header must not
 * name script-src (or default-src, which scripts fall back to); it covers what a <meta>
 * cannot (frame-ancestors) and everything else a page loads.
 */
export const CONTENT_SECURITY_POLICY = [
  "base-uri 'self'",
  "object-src 'none'",
  "frame-ancestors 'none'",
  "form-action 'self'",
  "img-src 'self' data: blob:",
  "font-src 'self'",
  "connect-src 'self'",
  "media-src 'self'",
  "worker-src 'self'",
  "manifest-src 'self'",
].join('; ');

export const SECURITY_HEADERS: Readonly<Record<string, string>> = {
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'strict-origin-when-cross-origin',
  'x-frame-options': 'DENY',
  'cross-origin-opener-policy': 'same-origin',
  'permissions-policy': 'camera=(), microphone=(), geolocation=(), payment=()',
  'content-security-policy': CONTENT_SECURITY_POLICY,
};
const HSTS = 'max-age=31536000; includeSubDomains';

/** For responses written outside Fastify's reply (the Astro handler writes to the raw response). */
export function applySecurityHeaders(res: { setHeader(name: string, value: string): unknown }, https: boolean) {
  for (const [name, value] of Object.entries(SECURITY_HEADERS)) res.setHeader(name, value);
  if (https) res.setHeader('strict-transport-security', HSTS);
}

export default fp(
  async (app) => {
    app.addHook('onSend', async (request, reply) => {
      reply.headers(SECURITY_HEADERS);
      if (request.protocol === 'https') reply.header('strict-transport-security', HSTS);
    });
  },
  { name: 'security-headers' },
);
