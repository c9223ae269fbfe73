import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import Fastify, { type RouteOptions } from 'fastify';
import SwaggerParser from '@apidevtools/swagger-parser';
import { z } from 'zod';
import { ROUTE_NOT_FOUND_HEADER, translate } from '@obmen/shared';
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { ENGINES, build } from '../helpers.ts';
import { call, expectRefusal } from '../auth-helpers.ts';
import schemasPlugin, { API_TAGS, toOpenApiPath } from '../../src/plugins/schemas.ts';
import errorsPlugin from '../../src/plugins/errors.ts';
import localePlugin from '../../src/plugins/locale.ts';

type TOperation = { tags?: string[]; summary?: string; security?: unknown[]; parameters?: Array<{ $ref?: string; in?: string }>; requestBody?: unknown };
type TDocument = { openapi: string; paths: Record<string, Record<string, TOperation>>; components: Record<string, Record<string, unknown>> };

/** Not in the public document: the document itself, and the development-only helpers (loopback only, never in production). */
// /metrics is where Prometheus scrapes (loopback or an operator with queues.view): the one path outside /api, not in the document.
const METRICS = '/metrics';
const isHidden = (url: string) => url === '/api/openapi.json' || url === METRICS || url.startsWith('/api/dev/') || url.startsWith('/api/internal/');

describe.each(ENGINES)('route schemas and the OpenAPI document on %s', (engine) => {
  let ctx: Awaited<ReturnType<typeof build>>;
  const routes: RouteOptions[] = [];
  let document: TDocument;

  beforeAll(async () => {
    ctx = await build(engine, {}, { onRoute: (route) => void routes.push(route) });
    document = (await ctx.app.inject({ url: '/api/openapi.json' })).json();
  });
  afterAll(() => ctx.close());

  const apiRoutes = () =>
    routes.flatMap((route) =>
      [route.method]
        .flat()
        .filter((m) => m !== 'HEAD')
        .map((method) => ({ method, route })),
    );

  it('every core route declares its schemas, and every public one is in the document', () => {
    expect(apiRoutes().length).toBeGreaterThan(30);
    const problems: string[] = [];
    for (const { method, route } of apiRoutes()) {
      const name = `${method} ${route.url}`;
      if (!route.url.startsWith('/api/') && route.url !== METRICS) problems.push(`${name}: outside /api`);
      if (isHidden(route.url)) continue;
      const schema = route.schema as { response?: Record<string, unknown>; params?: unknown; body?: unknown } | undefined;
      if (!schema?.response?.[200] && !schema?.response?.[204]) problems.push(`${name}: no response schema`);
      if (route.url.includes(':') && !schema?.params) problems.push(`${name}: no params schema`);
      const operation = document.paths[toOpenApiPath(route.url)]?.[method.toLowerCase()];
      if (!operation) problems.push(`${name}: missing from the document`);
      else if (!operation.summary || !operation.tags?.length) problems.push(`${name}: no summary or tag`);
    }
    expect(problems).toEqual([]);
  });

  it('the document is valid OpenAPI 3.1', async () => {
    expect(document.openapi).toBe('3.1.0');
    await expect(SwaggerParser.validate(structuredClone(document) as never)).resolves.toBeTruthy();
  });

  it('groups the calls as spec §7 does, marks the session calls and the idempotent ones', () => {
    const known = new Set<string>(API_TAGS.map(([name]) => name));
    const operations = Object.entries(document.paths).flatMap(([path, item]) => Object.entries(item).map(([method, op]) => ({ path, method, op })));
    expect(operations.flatMap(({ op }) => op.tags ?? []).filter((tag) => !known.has(tag))).toEqual([]);
    const byName = (method: string, path: string) => document.paths[path]?.[method];
    expect(byName('get', '/api/wallets')?.security).toEqual([{ session: [] }, { apiKey: ['read'] }]);
    expect(byName('post', '/api/transfer')?.security).toEqual([{ session: [] }, { apiKey: ['transfer'] }]);
    expect(byName('post', '/api/withdraw/check')?.security).toEqual([{ session: [] }]);
    expect((document as unknown as { components: { securitySchemes: Record<string, unknown> } }).components.securitySchemes.apiKey).toMatchObject({
      type: 'apiKey',
      in: 'header',
      name: 'X-Obmen-Key',
    });
    expect(byName('get', '/api/site')?.security).toEqual([]);
    const idempotencyKey = { $ref: '#/components/parameters/IdempotencyKey' };
    expect(byName('post', '/api/transfer')?.parameters).toContainEqual(idempotencyKey);
    expect(byName('post', '/api/exchange/{src}/{dst}')?.parameters).toContainEqual(idempotencyKey);
    expect(byName('post', '/api/transfer/check')?.parameters ?? []).not.toContainEqual(idempotencyKey);
    expect(document.components.securitySchemes).toMatchObject({ session: { type: 'apiKey', in: 'cookie', name: 'remember_token' } });
    expect(document.components.schemas).toHaveProperty('ApiError');
    // Every operation documents the error shape.
    for (const { op } of operations) expect(JSON.stringify((op as { responses?: unknown }).responses)).toContain('ApiError');
  });

  it('a bad input is the localized validation error, field by field, in ru and en', async () => {
    for (const locale of ['ru', 'en'] as const) {
      const res = await call(ctx.app, '/api/lang', { payload: { lang: 'de' }, locale });
      expectRefusal(res, 400, {
        code: 'validation',
        message: translate(locale, 'error.validation'),
        fields: { lang: translate(locale, 'validation.invalid') },
      });
      // A schema's own message (an i18n key) wins over the default one.
      const email = await call(ctx.app, '/api/auth/login', { payload: { email: 'not an email' }, locale });
      expect(email.json().fields).toEqual({ email: translate(locale, 'validation.email_invalid') });
      const missing = await call(ctx.app, '/api/auth/login', { payload: {}, locale });
      expect(missing.json().fields).toEqual({ email: translate(locale, 'validation.required') });
    }
  });

  it('a form body (urlencoded) and a missing body are validated like JSON', async () => {
    const form = await call(ctx.app, '/api/lang', { payload: 'lang=en', headers: { 'content-type': 'application/x-www-form-urlencoded' } });
    expect(form.json()).toEqual({ status: 'ok', locale: 'en' });
    const none = await ctx.app.inject({ method: 'POST', url: '/api/lang', headers: { 'x-obmen-locale': 'en' } });
    expect(none.statusCode).toBe(400);
    expect(Object.keys(none.json().fields)).toEqual(['lang']);
  });

  it('a call that needs a session answers 401 before it reads its input', async () => {
    const res = await call(ctx.app, '/api/transfer/check', { payload: { account_id: 'x' }, locale: 'en' });
    expect(res.statusCode).toBe(401);
    expect(res.json()).toMatchObject({ status: 'error', code: 'unauthorized', user: { is_authenticated: false } });
  });

  it('an unknown /api route answers 404 route_not_found in ru and en, marked as a route miss for the BFF', async () => {
    const ru = await call(ctx.app, '/api/no/such/call');
    expect(ru.statusCode).toBe(404);
    expect(ru.headers[ROUTE_NOT_FOUND_HEADER]).toBe('1');
    expect(ru.json()).toEqual({ status: 'error', code: 'route_not_found', message: 'Такого запроса к API нет' });
    const en = await call(ctx.app, '/api/no/such/call', { method: 'POST', payload: {}, locale: 'en' });
    expect(en.json()).toEqual({ status: 'error', code: 'route_not_found', message: 'There is no such API call' });
  });
});

describe('response serialisation', () => {
  /** A tiny app with one route whose answer carries a key its schema does not declare. */
  async function appWith(strict: boolean) {
    const app = Fastify({ logger: false });
    await app.register(localePlugin);
    await app.register(errorsPlugin);
    await app.register(schemasPlugin, { strict });
    const routes: FastifyPluginAsyncZod = async (scoped) => {
      scoped.get(
        '/api/x',
        { schema: { response: { 200: z.object({ status: z.literal('ok'), nested: z.object({ a: z.number() }) }) } } },
        () => ({ status: 'ok', nested: { a: 1, b: 2 }, wallets: [] }) as never,
      );
    };
    await app.register(routes);
    return app;
  }

  it('outside production, a key the schema does not declare fails the answer instead of vanishing', async () => {
    const app = await appWith(true);
    const res = await app.inject({ url: '/api/x' });
    expect(res.statusCode).toBe(500);
    expect(res.json()).toMatchObject({ status: 'error', code: 'internal' });
    await app.close();
  });

  it('in production the undeclared keys are dropped and the rest is sent', async () => {
    const app = await appWith(false);
    const res = await app.inject({ url: '/api/x' });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ status: 'ok', nested: { a: 1 } });
    await app.close();
  });
});
