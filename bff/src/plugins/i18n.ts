import fp from 'fastify-plugin';
import { DICTIONARIES, isLocale } from '@obmen/shared';
import { sendError } from '../errors.ts';

/** GET /i18n/{code}: the dictionary the islands load; the build version busts the cache. */
export default fp(
  async (app) => {
    const bodies = Object.fromEntries(Object.entries(DICTIONARIES).map(([code, dict]) => [code, JSON.stringify(dict)]));
    app.get<{ Params: { code: string } }>('/i18n/:code', async (request, reply) => {
      const { code } = request.params;
      if (!isLocale(code)) return sendError(request, reply, 404, 'not_found', 'error.not_found');
      return reply.type('application/json; charset=utf-8').header('cache-control', 'public, max-age=300').send(bodies[code]);
    });
  },
  { name: 'i18n', dependencies: ['@fastify/cookie'] },
);
