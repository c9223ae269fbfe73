import type { FastifyPluginAsync } from 'fastify';
import { z } from 'zod';
import { ARTICLE_NAME, getArticle, getContentVersion, getMenus, MENU_NAMES } from './service.ts';
import { parseInput } from '../../validation.ts';

const ZMenuListBody = z.object({ list: z.array(z.enum(MENU_NAMES)).min(1).max(MENU_NAMES.length) });
const ZArticleParams = z.object({ name: z.string().regex(ARTICLE_NAME) });

const contentRoutes: FastifyPluginAsync = async (app) => {
  app.get('/api/content/menu', (request) => getMenus(app.db, request.locale));

  app.post('/api/content/menu', (request) => {
    const { list } = parseInput(ZMenuListBody, request.body);
    return getMenus(app.db, request.locale, list);
  });

  app.get('/api/content/article/:name', async (request) => {
    const { name } = parseInput(ZArticleParams, request.params);
    return { article: await getArticle(app.db, name, request.locale) };
  });

  /**
   * {version}: an opaque string that changes whenever an article, a menu, a footer image, a site
   * setting or a notification for everyone changes. The BFF polls it (one call a second per
   * BFF instance) to drop its page cache.
   */
  app.get('/api/content/version', async (_request, reply) => {
    reply.header('cache-control', 'no-store');
    return { version: await getContentVersion(app.db) };
  });
};

export default contentRoutes;
