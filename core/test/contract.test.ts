import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RouteOptions } from 'fastify';
import { z } from 'zod';
import { CALLS } from '@obmen/shared/calls';
import { toOpenApiPath } from '../src/plugins/schemas.ts';
import { build } from './helpers.ts';

type TDocument = { paths: Record<string, Record<string, unknown>> };
type TRouteSchema = { body?: unknown; response?: Record<number, unknown> };

/** A route's JSON answer: the schema itself, or the JSON one of a route that also answers CSV. */
function jsonAnswerOf(route: RouteOptions): unknown {
  const answer = (route.schema as TRouteSchema | undefined)?.response?.[200];
  const content = (answer as { content?: Record<string, { schema: unknown }> } | undefined)?.content;
  return content ? content['application/json']?.schema : answer;
}

/** How a schema reads as JSON Schema (the served document is made of the same). */
function jsonSchemaOf(schema: unknown, io: 'input' | 'output'): unknown {
  return schema instanceof z.ZodType ? z.toJSONSchema(schema, { io, unrepresentable: 'any' }) : schema;
}

/*
 * The site's calls (shared/src/calls.ts) against the core: every declared call is a route the
 * core serves with that method and path, answering what the declaration says, so the two
 * cannot drift apart.
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

  it('every declared answer is the JSON Schema of the route answer', () => {
    const drifted: string[] = [];
    for (const [key, call] of Object.entries(CALLS)) {
      const route = routeOf(call.method, call.path);
      const served = route && jsonAnswerOf(route);
      // The development helpers declare no answer schema (they are outside the document).
      if (!served) continue;
      if (JSON.stringify(jsonSchemaOf(call.answer, 'output')) !== JSON.stringify(jsonSchemaOf(served, 'output'))) drifted.push(key);
    }
    expect(drifted).toEqual([]);
  });

  it('every declared body is the route body, where the route declares one', () => {
    const drifted: string[] = [];
    for (const [key, call] of Object.entries(CALLS)) {
      const served = (routeOf(call.method, call.path)?.schema as TRouteSchema | undefined)?.body;
      // A multipart route declares its body as anything (files are read from the stream).
      if (!('body' in call) || !(served instanceof z.ZodType) || served instanceof z.ZodUnknown) continue;
      if (JSON.stringify(jsonSchemaOf(call.body, 'input')) !== JSON.stringify(jsonSchemaOf(served, 'input'))) drifted.push(key);
    }
    expect(drifted).toEqual([]);
  });

  it('a drifted declaration is caught: a key the route does not send', () => {
    const route = routeOf('GET', '/api/wallets');
    const drifted = CALLS['GET /api/wallets'].answer.extend({ extra: z.string() });
    expect(route).toBeDefined();
    expect(JSON.stringify(jsonSchemaOf(drifted, 'output'))).not.toBe(JSON.stringify(jsonSchemaOf(route && jsonAnswerOf(route), 'output')));
  });
});
