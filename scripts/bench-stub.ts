/**
 * A stand-in upstream for `pnpm bench`: Fastify answering GET /api/site with a fixed body of the
 * same shape as the core's, without touching a database. Through it the bench sees what the
 * BFF's proxy path costs on its own (the core on PGlite spends most of its time in the
 * database, which hides the proxy's cost). PORT (4201).
 */
import { createRequire } from 'node:module';
import { pathToFileURL } from 'node:url';

type TServer = {
  get(path: string, handler: () => Promise<unknown>): void;
  listen(options: { host: string; port: number }): Promise<string>;
  close(): Promise<void>;
};

// fastify is a dependency of bff/ and core/, not of the root: resolve it from bff/.
const require = createRequire(new URL('../bff/package.json', import.meta.url));
const fastify = (await import(pathToFileURL(require.resolve('fastify')).href)).default as (options: object) => TServer;

const SITE = { site_settings: { logo_url: '/image/logo.svg', auth_type: 'password', site_blocked: false } };

const server = fastify({ logger: false });
server.get('/api/site', async () => SITE);
server.get('/api/health', async () => ({ status: 'ok' }));
process.once('SIGTERM', () => void server.close().then(() => process.exit(0)));
await server.listen({ host: '127.0.0.1', port: Number(process.env.PORT ?? 4201) });
