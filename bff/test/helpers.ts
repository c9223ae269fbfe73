import Fastify, { type FastifyInstance, type FastifyServerOptions } from 'fastify';
import { createServer, type IncomingHttpHeaders, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { AddressInfo } from 'node:net';
import app from '../src/app.ts';
import { answerError } from '../src/errors.ts';
import type { TClock } from '../src/clock.ts';
import { loadConfig, type TConfig } from '../src/config.ts';
import { createFrontDoor } from '../src/front-door.ts';
import { genRequestId } from '../src/request-id.ts';
import { anonymousCheck, EMPTY_MENU, localeOf } from './core-answers.ts';

/** The real Astro build: `pnpm build` (scripts/test.sh runs it before vitest). */
export const REAL_SITE_DIST = fileURLToPath(new URL('../../site/dist/', import.meta.url));

export function requireRealSiteBuild(): string {
  if (!existsSync(join(REAL_SITE_DIST, 'server', 'entry.mjs'))) {
    throw new Error(`No site build at ${REAL_SITE_DIST}: run "npx -y pnpm@10.34.8 build" first (scripts/test.sh does)`);
  }
  return REAL_SITE_DIST;
}

/**
 * A stand-in for the Astro build: one hashed asset and an SSR handler that echoes the locals
 * it was given, so the BFF's own behaviour (headers, locals, static files) is tested alone.
 */
export function makeFakeSiteDist(): { dir: string; remove: () => void } {
  const dir = mkdtempSync(join(tmpdir(), 'obmen-bff-site-'));
  mkdirSync(join(dir, 'client', '_astro'), { recursive: true });
  mkdirSync(join(dir, 'server'), { recursive: true });
  writeFileSync(join(dir, 'client', '_astro', 'island.Ab12Cd.js'), 'export const island = 1;\n');
  writeFileSync(join(dir, 'client', 'robots.txt'), 'User-agent: *\n');
  writeFileSync(
    join(dir, 'server', 'entry.mjs'),
    `export async function handler(req, res, next, locals) {
  // Like Astro's node adapter in middleware mode: next() without an error when no page matches.
  if (req.url === '/boom') return next(new Error('render failed'));
  if (req.url !== '/' && req.url !== '/404') return next();
  res.writeHead(req.url === '/' ? 200 : 404, { 'content-type': 'text/html; charset=utf-8' });
  globalThis.lastPageLocals = locals;
  res.end('<!doctype html><html lang="ru"><body data-fv="' + locals.fv + '" data-ip="' + locals.clientIp + '" data-https="' + locals.https + '">page ' + req.url + '</body></html>');
}
`,
  );
  return { dir, remove: () => rmSync(dir, { recursive: true, force: true }) };
}

declare global {
  /** What the stand-in site's handler got as Astro.locals at its last render. */
  var lastPageLocals: Record<string, unknown> | undefined;
}

export type TUpstreamHit = { method: string; url: string; headers: IncomingHttpHeaders; body: string };
export type TUpstreamHandler = (req: IncomingMessage, res: ServerResponse, body: string) => void;

/** A fake core on 127.0.0.1:<random>: tests set `handle` and read `hits`. */
export type TFakeUpstream = {
  url: string;
  hits: TUpstreamHit[];
  handle: TUpstreamHandler;
  close: () => Promise<void>;
};

export function json(res: ServerResponse, status: number, body: string | object, headers: Record<string, string> = {}) {
  res.writeHead(status, { 'content-type': 'application/json; charset=utf-8', ...headers });
  res.end(typeof body === 'string' ? body : JSON.stringify(body));
}

/** The default fake core: health, and the two calls every page render makes (an anonymous visitor). */
export const defaultUpstreamHandler: TUpstreamHandler = (req, res) => {
  const path = (req.url ?? '').split('?')[0];
  if (path === '/api/health') return json(res, 200, { status: 'ok' });
  if (path === '/api/auth/check') return json(res, 200, anonymousCheck(localeOf(req)));
  if (path === '/api/content/menu') return json(res, 200, EMPTY_MENU);
  return json(res, 200, { ok: true });
};

export async function startFakeUpstream(): Promise<TFakeUpstream> {
  const fake: TFakeUpstream = {
    url: '',
    hits: [],
    handle: defaultUpstreamHandler,
    close: async () => {},
  };
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      fake.hits.push({ method: req.method ?? '', url: req.url ?? '', headers: req.headers, body });
      fake.handle(req, res, body);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  fake.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  fake.close = () =>
    new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    });
  return fake;
}

/** An address where nothing listens: a port we bound and released. */
export async function deadUpstreamUrl(): Promise<string> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return `http://127.0.0.1:${port}`;
}

export type TBuildOptions = {
  /** Point the BFF here instead of at the fake upstream (e.g. a dead address). */
  upstreamUrl?: string;
  siteDist?: string;
  frontendVersion?: string;
  env?: Partial<Record<keyof TConfig, string>>;
  /** As server.ts would pass them (e.g. trustProxy). */
  fastifyOptions?: FastifyServerOptions;
  /** The page cache's time (a test moves it instead of sleeping). */
  clock?: TClock;
  /** Root hooks for a test to see which requests pass Fastify (added before the app loads, so it inherits them). */
  observe?: (fastify: FastifyInstance) => void;
};

/**
 * The BFF app registered into a fresh Fastify in front of a fake upstream, ready for `inject`,
 * on the same front door as server.ts (for tests that listen).
 */
export async function build(options: TBuildOptions = {}) {
  const upstream = await startFakeUpstream();
  const fakeSite = options.siteDist ? undefined : makeFakeSiteDist();
  const siteDist = options.siteDist ?? fakeSite!.dir;
  const config = loadConfig({
    NODE_ENV: 'test',
    LOG_LEVEL: 'silent',
    UPSTREAM_URL: options.upstreamUrl ?? upstream.url,
    UPSTREAM_TIMEOUT_MS: '500',
    SITE_DIST: siteDist,
    ...options.env,
  });
  const frontDoor = createFrontDoor();
  const fastify: FastifyInstance = Fastify({
    logger: false,
    forceCloseConnections: true,
    serverFactory: frontDoor.serverFactory,
    frameworkErrors: answerError,
    genReqId: genRequestId,
    ...options.fastifyOptions,
  });
  options.observe?.(fastify);
  await fastify.register(app, { config, frontDoor, clock: options.clock, frontendVersion: options.frontendVersion });
  await fastify.ready();
  return {
    app: fastify,
    upstream,
    config,
    siteDist,
    async close() {
      await fastify.close();
      await upstream.close();
      fakeSite?.remove();
    },
  };
}
