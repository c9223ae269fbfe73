import fp from 'fastify-plugin';

declare module 'fastify' {
  interface FastifyRequest {
    /**
     * Did the browser come over https? Decided once, in onRequest: a TLS socket, a trusted
     * proxy's X-Forwarded-Proto: https, or an https PUBLIC_URL. Every Set-Cookie (Secure) and
     * HSTS reads this: Fastify's `request.protocol` is gone once a streamed body has been
     * proxied (the socket is detached from the request by then).
     */
    https: boolean;
  }
}

/** `publicHttps`: PUBLIC_URL is https, so every visitor came over https whatever the socket says. */
export default fp<{ publicHttps: boolean }>(
  async (app, { publicHttps }) => {
    app.decorateRequest('https', false);
    app.addHook('onRequest', (request, _reply, done) => {
      request.https = publicHttps || request.protocol === 'https';
      done();
    });
  },
  { name: 'scheme' },
);
