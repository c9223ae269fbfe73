import { z } from 'zod';
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { ZArticleParams, ZContentVersion, ZMenuListBody, ZMenuResponse } from '@obmen/shared';
import { getArticle, getContentVersion, getMenus, sendFooterLogo } from './service.ts';
import { notFound, notFoundOf } from '../../errors.ts';
import { CALLS } from '@obmen/shared/calls';
import { schemaOf } from '../../lib/call-schema.ts';

const contentRoutes: FastifyPluginAsyncZod<{ now: () => Date }> = async (app, { now }) => {
  app.get(
    '/api/content/menu',
    { schema: { tags: ['Client'], summary: 'All menus and the footer images', ...schemaOf(CALLS['GET /api/content/menu']) } },
    (request) => getMenus(app.db, request.locale),
  );

  app.post(
    '/api/content/menu',
    { schema: { tags: ['Client'], summary: 'The named menus and the footer images', body: ZMenuListBody, response: { 200: ZMenuResponse } } },
    (request) => getMenus(app.db, request.locale, request.body.list),
  );

  app.get(
    '/api/content/article/:name',
    {
      config: { paramsError: () => notFoundOf('article') },
      schema: {
        tags: ['Client'],
        summary: "An article in the caller's language",
        params: ZArticleParams,
        ...schemaOf(CALLS['GET /api/content/article/{name}']),
      },
    },
    async (request) => ({ article: await getArticle(app.db, request.params.name, request.locale) }),
  );

  app.get(
    '/api/site/logos/:file',
    {
      schema: {
        tags: ['Client'],
        summary: 'An uploaded footer logo (re-encoded; its address changes with each upload, so it is cached for good)',
        params: z.object({ file: z.string().regex(/^[0-9a-f-]{36}\.(png|webp|jpg)$/, 'validation.invalid') }),
        response: {
          200: {
            description: 'The logo, re-encoded',
            content: Object.fromEntries(
              ['image/png', 'image/jpeg', 'image/webp'].map((type) => [type, { schema: z.string().meta({ contentMediaType: type }) }]),
            ),
          },
        },
      },
      config: { paramsError: () => notFound() },
    },
    async (request, reply) => sendFooterLogo(reply, app.db, app.storage, request.params.file),
  );

  /**
   * {version}: an opaque string that changes whenever an article, a menu, a footer image, a site
   * setting or a notification for everyone changes. The BFF polls it (one call a second per
   * BFF instance) to drop its page cache.
   */
  app.get(
    '/api/content/version',
    { schema: { tags: ['Service'], summary: 'The public content version (the BFF polls it)', response: { 200: ZContentVersion } } },
    async (_request, reply) => {
      reply.header('cache-control', 'no-store');
      return { version: await getContentVersion(app.db, now()) };
    },
  );
};

export default contentRoutes;
