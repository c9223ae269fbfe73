import fp from 'fastify-plugin';
import { openDb, type Db } from '../db/index.ts';
import { migrate } from '../db/migrate.ts';
import type { TConfig } from '../config.ts';

declare module 'fastify' {
  interface FastifyInstance {
    db: Db;
  }
}

export default fp<{ config: TConfig; db?: Db }>(
  async (app, { config, db: given }) => {
    const db = given ?? (await openDb(config, app.log));
    const applied = await migrate(db);
    if (applied.length) app.log.info({ applied }, 'migrations applied');
    app.decorate('db', db);
    // A db handed in by a test belongs to the test; only close what this plugin opened.
    if (!given) app.addHook('onClose', () => db.close());
  },
  { name: 'db' },
);
