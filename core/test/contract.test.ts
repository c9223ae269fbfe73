import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RouteOptions } from 'fastify';
import { z } from 'zod';
import { CALLS } from '@obmen/shared/calls';
import { toOpenApiPath } from '../src/plugins/schemas.ts';
import { build } from './helpers.ts';

type TDocument = { paths: Record<string, Record<string, unknown>> };
type TRouteSchema = { body?: unknown; querystring?: unknown; response?: Record<number, unknown> };

/** A route's JSON answer: the schema itself, or the JSON one of a route that also answers CSV. */
function jsonAnswerOf(route: RouteOptions): unknown {
  const answer = (route.schema as TRouteSchema | undefined)?.response?.[200];
  const content = (answer as { content?: Record<string, { schema: unknown }> } | undefined)?.content;
  return content ? content['application/json']?.schema : answer;
}

/*
 * The site's calls (shared/src/calls.ts) against the core: every declared call is a route the
 * core serves with that method and path, and the route's schemas are the declaration's own
 * (the same objects, not copies that look alike), so the two cannot drift apart.
 */
describe('the declared calls and the core', () => {
  let ctx: Awaited<ReturnType<typeof build>>;
  const routes: RouteOptions[] = [];
  let document: TDocument;

  beforeAll(async () => {
    ctx = await build('pglite', {}, { onRoute: (route) => void routes.push(route) });
    document = (await ctx.app.inject({ url: '/api/openapi.json' })).json();
  });
  afterAll(() => ctx.close());

  const routeOf = (method: string, path: string) => routes.find((route) => [route.method].flat().includes(method) && toOpenApiPath(route.url) === path);

  it('every declared call is a route of the core, and in the served document unless development-only', () => {
    const missing: string[] = [];
    for (const [key, call] of Object.entries(CALLS)) {
      if (!routeOf(call.method, call.path)) missing.push(`${key}: no such route`);
      else if (!call.path.startsWith('/api/dev/') && !document.paths[call.path]?.[call.method.toLowerCase()]) missing.push(`${key}: not in the document`);
    }
    expect(missing).toEqual([]);
  });

  it('every declared answer is the route’s own answer schema', () => {
    const apart: string[] = [];
    for (const [key, call] of Object.entries(CALLS)) {
      const route = routeOf(call.method, call.path);
      if (route && jsonAnswerOf(route) !== call.answer) apart.push(key);
    }
    expect(apart).toEqual([]);
  });

  it('every declared body and query is the route’s own schema, where the route reads one', () => {
    const apart: string[] = [];
    for (const [key, call] of Object.entries(CALLS)) {
      const schema = routeOf(call.method, call.path)?.schema as TRouteSchema | undefined;
      // A multipart route declares its body as anything (the files are read from the stream).
      if ('body' in call && schema?.body && !(schema.body instanceof z.ZodUnknown) && schema.body !== call.body) apart.push(`${key} body`);
      if ('query' in call && schema?.querystring !== call.query) apart.push(`${key} query`);
    }
    expect(apart).toEqual([]);
  });
});
