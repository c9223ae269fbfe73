/**
 * The Content-Security-Policy apart from script-src and style-src, which Astro fills with the
 * hashes of each page's own scripts and styles. Pages get the whole policy from Astro; other
 * responses (API, static files) get these directives from the BFF.
 */
export const CSP_DIRECTIVES = [
  "default-src 'self'",
  "base-uri 'self'",
  "object-src 'none'",
  "frame-ancestors 'none'",
  "form-action 'self'",
  "img-src 'self' data: blob:",
  "font-src 'self'",
  "connect-src 'self'",
  // The service worker (/sw.js) and the web app manifest, both from the site itself.
  "worker-src 'self'",
  "manifest-src 'self'",
] as const;
