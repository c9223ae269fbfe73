import fp from 'fastify-plugin';
import multipart from '@fastify/multipart';
import type { TConfig } from '../config.ts';
import { openStorage, type TFileStorage } from '../storage/index.ts';

declare module 'fastify' {
  interface FastifyInstance {
    storage: TFileStorage;
  }
}

/** Private file storage, and multipart parsing for the routes that take uploads (caps per call: storage/upload.ts). */
export default fp<{ config: TConfig; storage?: TFileStorage }>(
  async (app, { config, storage }) => {
    await app.register(multipart);
    app.decorate('storage', storage ?? openStorage(config));
  },
  { name: 'storage' },
);
