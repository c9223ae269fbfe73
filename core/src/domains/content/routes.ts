import type { FastifyPluginAsync } from 'fastify';
import { z } from 'zod';
import { getArticle, getMenus, MENU_NAMES } from './service.ts';
import { parseInput } from '../../validation.ts';

const ZMenuListBody = z.object({ list: z.array(z.enum(MENU_NAMES)).min(1).max(MENU_NAMES.length) });
const ZArticleParams = z.object({ name: z.string().regex(/^[a-z0-9][a-z0-9_-]{0,63}$/) });

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
};

export default contentRoutes;
