import fp from 'fastify-plugin';
import { isDevPath, isLoopbackAddress } from '@obmen/shared';
import { sendError } from '../errors.ts';
import { NOT_FOUND_PAGE, SITE_ROUTE } from './site.ts';

/**
 * Development helpers (the core's /api/dev/*, the site's /dev/* pages) answer loopback clients
 * only. The core sees the BFF as its peer, so the BFF refuses everyone else itself, before the
 * proxy or a page runs: the socket's peer address must be loopback, and behind a trusted proxy
 * the client it forwards too. Others get the same 404 as a path that does not exist.
 */
export function isLocalClient(request: { socket: { remoteAddress?: string | undefined }; ip: string }): boolean {
  return isLoopbackAddress(request.socket.remoteAddress) && isLoopbackAddress(request.ip);
}

export default fp(
  async (app) => {
    app.addHook('onRequest', async (request, reply) => {
      if (!isDevPath(request.url) || isLocalClient(request)) return;
      request.log.warn({ url: request.url, ip: request.ip }, 'development helper refused to a non-loopback client');
      // A page: the site's own 404 page, as for any path without a page; anything else: JSON.
      if (request.routeOptions.url === SITE_ROUTE) request.raw.url = NOT_FOUND_PAGE;
      else return sendError(request, reply, 404, 'not_found', 'error.not_found');
    });
  },
  { name: 'dev-guard', dependencies: ['@fastify/cookie'] },
);
