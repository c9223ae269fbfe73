import type { FastifyPluginAsync } from 'fastify';
import formbody from '@fastify/formbody';
import type { TConfig } from './config.ts';
import type { Db } from './db/index.ts';
import dbPlugin from './plugins/db.ts';
import localePlugin from './plugins/locale.ts';
import errorsPlugin from './plugins/errors.ts';
import siteRoutes from './domains/site/routes.ts';
import contentRoutes from './domains/content/routes.ts';
import authRoutes from './domains/auth/routes.ts';
import { seedDemoData } from './seed/demo.ts';

export type TAppOptions = { config: TConfig; db?: Db };

/** The core as a plugin: server.ts listens, tests inject. */
const app: FastifyPluginAsync<TAppOptions> = async (fastify, { config, db }) => {
  await fastify.register(localePlugin);
  await fastify.register(errorsPlugin);
  await fastify.register(dbPlugin, { config, db });
  await fastify.register(formbody);
  if (config.SEED) {
    const seeded = await seedDemoData(fastify.db, { demoAccount: config.NODE_ENV !== 'production' });
    if (seeded) fastify.log.info('demo data seeded');
  }
  await fastify.register(siteRoutes);
  await fastify.register(contentRoutes);
  await fastify.register(authRoutes);
};

export default app;
