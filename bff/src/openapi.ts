import { z } from 'zod';
import { FRONT_LOG_PATH, ZBffEnvelope, ZFrontLog } from '@obmen/shared';

/*
 * The served API document: the core's, generated from its route schemas, finished with what the
 * BFF in front of it does to every call. It adds `fv` to the JSON answers it passes on, answers
 * some failures itself (a body over its limit, the core gone, slow or overloaded), serves a few
 * calls of its own, and is the server the browser talks to.
 */

type TSchema = { $ref?: string; type?: string; properties?: Record<string, unknown> };
type TResponse = { $ref?: string; content?: Record<string, { schema?: TSchema }> };
type TOperation = { operationId?: string; responses?: Record<string, TResponse> };
type TDocument = {
  paths?: Record<string, Record<string, TOperation>>;
  components?: { schemas?: Record<string, TSchema>; responses?: Record<string, unknown> };
};

const API_ERROR = { $ref: '#/components/schemas/ApiError' };

const errorResponse = (description: string) => ({ description, content: { 'application/json': { schema: API_ERROR } } });

/** The failures any call may get, by status, whoever answers them (the BFF, or the core behind it). */
const FAILURE_RESPONSES = {
  413: {
    name: 'PayloadTooLarge',
    response: errorResponse('The body is over its limit (`payload_too_large`; an upload over every cap: `upload_too_large`)'),
  },
  500: { name: 'Internal', response: errorResponse('A failure that says nothing of internals (`internal`)') },
  502: { name: 'BadGateway', response: errorResponse('The core answered nothing usable (`bad_gateway`)') },
  503: {
    name: 'Unavailable',
    response: {
      ...errorResponse(
        'Not now: the core is unreachable (`upstream_unavailable`), the site sheds load (`overloaded`), the database is unreachable ' +
          '(`database_unavailable`), too many operations at once (`busy`), or the rates are unavailable (`rates_unavailable`). ' +
          'A money-moving call whose outcome is unknown is to be sent again with the same Idempotency-Key.',
      ),
      headers: {
        'Retry-After': {
          description: 'Seconds to wait before trying again (with `overloaded`, `database_unavailable` and `busy`).',
          schema: { type: 'integer', minimum: 0 },
        },
      },
    },
  },
  504: {
    name: 'GatewayTimeout',
    response: errorResponse('The core did not answer in time (`upstream_timeout`); a money-moving call is to be sent again with the same key'),
  },
} as const;

/** The BFF's own calls, in the document's terms (POST /api/lang is the core's, wrapped). */
const BFF_PATHS = {
  [FRONT_LOG_PATH]: {
    post: {
      tags: ['Logging'],
      summary: 'Report a front-end error (spec §8); rate-limited per client, repeats counted',
      security: [],
      requestBody: {
        required: true,
        content: {
          'application/json': { schema: z.toJSONSchema(ZFrontLog, { io: 'input', unrepresentable: 'any' }) },
          'text/plain': { schema: { type: 'string', description: 'The same JSON, as navigator.sendBeacon sends it.' } },
        },
      },
      responses: {
        204: { description: 'Logged' },
        400: errorResponse('Not a report (`validation`)'),
        413: errorResponse('Body too large (`payload_too_large`)'),
        429: errorResponse('Too many reports (`rate_limited`); see Retry-After'),
      },
    },
  },
};

const BFF_ENVELOPE_PROPERTIES = (z.toJSONSchema(ZBffEnvelope) as TSchema).properties ?? {};

function toPascalCase(words: string): string {
  return words
    .split(/[^A-Za-z0-9]+/)
    .filter(Boolean)
    .map((word) => word[0]!.toUpperCase() + word.slice(1))
    .join('');
}

/** "get", "/api/exchange/{src}/{dst}" → "getExchangeBySrcByDst": stable across builds, one per operation. */
export function operationIdOf(method: string, path: string): string {
  const segments = path
    .replace(/^\/api\//, '')
    .split('/')
    .map((segment) => (segment.startsWith('{') ? `By${toPascalCase(segment)}` : toPascalCase(segment)));
  return method.toLowerCase() + segments.join('');
}

/** `fv` is allowed on every JSON object answer (a component answer, the error shape, once). */
function allowFrontendVersion(document: TDocument, schema: TSchema | undefined, patched: Set<TSchema>): void {
  const target = schema?.$ref ? document.components?.schemas?.[schema.$ref.replace('#/components/schemas/', '')] : schema;
  if (target?.type !== 'object' || patched.has(target)) return;
  patched.add(target);
  target.properties = { ...target.properties, ...BFF_ENVELOPE_PROPERTIES };
}

/** Each operation gets its id; two operations that would share one are a mistake in the routes. */
function nameOperations(paths: Record<string, Record<string, TOperation>>): void {
  const seen = new Map<string, string>();
  for (const [path, item] of Object.entries(paths)) {
    for (const [method, operation] of Object.entries(item)) {
      const id = operationIdOf(method, path);
      const twin = seen.get(id);
      if (twin) throw new Error(`operationId ${id} of ${method} ${path} is already ${twin}'s`);
      seen.set(id, `${method} ${path}`);
      operation.operationId = id;
    }
  }
}

const FAILURE_REFS = Object.fromEntries(Object.entries(FAILURE_RESPONSES).map(([status, { name }]) => [status, { $ref: `#/components/responses/${name}` }]));

/** The core's document with the BFF's calls and answers added; the result is what /api/openapi.json serves. */
export function finishDocument(coreText: string): string {
  const document = JSON.parse(coreText) as TDocument;
  const failures = Object.fromEntries(Object.values(FAILURE_RESPONSES).map(({ name, response }) => [name, response]));
  const components = { ...document.components, responses: { ...document.components?.responses, ...failures } };
  const patched = new Set<TSchema>();
  // Every core call goes through the proxy: its JSON answers get `fv`, and it may fail there.
  for (const item of Object.values(document.paths ?? {})) {
    for (const operation of Object.values(item)) {
      for (const answer of Object.values(operation.responses ?? {})) allowFrontendVersion(document, answer.content?.['application/json']?.schema, patched);
      operation.responses = { ...operation.responses, ...FAILURE_REFS };
    }
  }
  const paths = { ...document.paths, ...structuredClone(BFF_PATHS) } as Record<string, Record<string, TOperation>>;
  nameOperations(paths);
  return JSON.stringify({
    ...document,
    servers: [{ url: '/', description: 'This site: its BFF answers /api/* and passes the calls on to the core' }],
    components,
    paths,
  });
}
