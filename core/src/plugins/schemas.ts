import fp from 'fastify-plugin';
import swagger from '@fastify/swagger';
import type { FastifyRequest, FastifySchema, RouteOptions } from 'fastify';
import { jsonSchemaTransform, jsonSchemaTransformObject } from 'fastify-type-provider-zod';
import { z } from 'zod';
import {
  API_SIGNATURE_WINDOW_S,
  IDEMPOTENCY_KEY_PATTERN,
  OPS_COOKIE,
  SESSION_COOKIE,
  ZApiError,
  ZBalance,
  ZNotification,
  ZSiteSettings,
  ZUnreadMsgs,
  ZUser,
  ZWallet,
} from '@obmen/shared';
import { AppError } from '../errors.ts';
import { requireUser } from '../domains/user/current.ts';
import { idempotencyKeyOf } from '../domains/idempotency/service.ts';

/*
 * Route schemas: every core route declares params, querystring, body and response with shared
 * zod schemas. Fastify validates input with them (a failure becomes the localized `validation`
 * error in plugins/errors.ts) and serialises answers with them; @fastify/swagger turns the same
 * schemas into the OpenAPI 3.1 document at /api/openapi.json (the BFF serves it to the world).
 */

declare module 'fastify' {
  interface FastifyContextConfig {
    /** Money-moving POSTs: the Idempotency-Key header is checked before the body, and documented as required. */
    idempotent?: boolean;
    /** A path param that fails its schema names nothing that exists: this error instead of `validation`. */
    paramsError?: () => AppError;
  }
}

/** The groups of spec §7, plus Service for what only the BFF calls. */
export const API_TAGS = [
  ['Auth', 'Accounts, sessions and mailed links.'],
  ['Client', 'Site settings, language, content, notifications, wallets.'],
  ['Exchange', 'Pairs, quotes, one pair, all-to-one, statuses, history.'],
  ['Withdraw', 'Withdrawals.'],
  ['Deposit', 'Deposits.'],
  ['Verification', 'Identity documents.'],
  ['Referral', 'Referral programme.'],
  ['Cards', 'Cards and card orders.'],
  ['Support', 'Support chat.'],
  ['Chat', 'Private chats.'],
  ['Transfer', 'Transfers between users.'],
  ['Purchase', 'Purchases.'],
  ['Logging', 'Front-end error reports (served by the BFF).'],
  ['Service', 'Health and cache polling, for the BFF.'],
  ['Ops', 'The back office: operators sign in with two factors; each call names the permission it needs.'],
] as const;
export type TApiTag = (typeof API_TAGS)[number][0];

/** The document's reusable parts; routes point at them by name. */
const SESSION_SCHEME = 'session';
const OPS_SCHEME = 'operator';
const API_KEY_SCHEME = 'apiKey';
const IDEMPOTENCY_PARAMETER = 'IdempotencyKey';

// Shared shapes that appear in many answers become named components (one definition each).
for (const [schema, id] of [
  [ZUser, 'User'],
  [ZSiteSettings, 'SiteSettings'],
  [ZWallet, 'Wallet'],
  [ZBalance, 'Balance'],
  [ZUnreadMsgs, 'UnreadMsgs'],
  [ZNotification, 'Notification'],
] as const) {
  if (!z.globalRegistry.has(schema)) z.globalRegistry.add(schema, { id });
}
if (!z.globalRegistry.has(ZApiError)) z.globalRegistry.add(ZApiError, { id: 'ApiError', description: 'The error shape: see "Errors" above.' });

const DESCRIPTION = `The calls of the Obmen site, as the browser makes them through the BFF.

**Session.** Signing in sets the \`${SESSION_COOKIE}\` cookie (HttpOnly, SameSite=Lax); calls marked with the lock need it.
Without a valid session they answer 401 \`unauthorized\` with an anonymous \`user\`.

**Keys for bots.** Calls that also list \`apiKey\` with a scope accept a signed request of a key made in /settings/api
(scopes \`read\`, \`exchange\`, \`transfer\`) instead of the session: headers \`X-Obmen-Key\` (the key id),
\`X-Obmen-Timestamp\` (Unix seconds, within ${API_SIGNATURE_WINDOW_S} s of the server's clock), \`X-Obmen-Nonce\` (8 to 64 of
\`A-Za-z0-9_-\`, once per key) and \`X-Obmen-Signature\`: the hex HMAC-SHA256, with the key's secret, of
\`timestamp + "\\n" + nonce + "\\n" + METHOD + "\\n" + path with query + "\\n"\` followed by the raw body. A late, replayed, badly
signed or out-of-scope request answers 401 or 403 (\`api_key_*\`) and changes nothing; /article/api has examples.

**Envelope (spec §7).** Any answer may carry these keys, and the client applies them wherever they appear:
\`user\`, \`site_settings\`, \`wallets\`, \`total_balance\`, \`unread_msgs\`, \`notifications\`, \`fv\` (the front-end build,
added by the BFF to every JSON answer), \`status\` (\`"ok"\`, \`"error"\` or \`"redirect"\` with \`redirect_url\`).

**Errors.** Every failure is \`{status: "error", code, message, fields?}\`: \`code\` is stable for programs, \`message\` and
each \`fields\` entry are already localized (ru or en: the \`i18n_redirected\` cookie, else the account's language).
A bad input changes nothing and answers 400 \`validation\` with one message per bad field. An unknown /api path answers
404 \`route_not_found\`; a known call naming something that does not exist, or belongs to another user, answers 404 with
a code of its own (\`exchange_not_found\`, …).

**Idempotency.** Money-moving POSTs need an \`Idempotency-Key\` header (8 to 128 of \`A-Za-z0-9_-:.\`), one fresh value per
submitted form: the same key again replays the first answer (header \`idempotent-replayed: true\`) and moves nothing.

Forms may be sent as JSON or \`application/x-www-form-urlencoded\`.`;

/** The document's view of a route: tags and summary from its schema, the lock (or none), the error shape. */
function transform(document: Parameters<typeof jsonSchemaTransform>[0] & { route: RouteOptions }) {
  const { schema, route } = document;
  if (!schema || (schema as { hide?: boolean }).hide) return jsonSchemaTransform(document);
  const response = { ...(schema.response as Record<string, unknown>), '4XX': ZApiError };
  const transformed = jsonSchemaTransform({ ...document, schema: { ...schema, response } as FastifySchema });
  // Public calls say so (an empty list), rather than leaving a reader to guess.
  const ops = route.config?.ops;
  const scope = route.config?.apiKey;
  const security =
    ops !== undefined && ops !== null
      ? [{ [OPS_SCHEME]: ops === 'signed_in' ? [] : [ops] }]
      : [route.onRequest].flat().includes(requireUser)
        ? [{ [SESSION_SCHEME]: [] }, ...(scope ? [{ [API_KEY_SCHEME]: [scope] }] : [])]
        : [];
  return { ...transformed, schema: { ...transformed.schema, security } };
}

/** Adds the Idempotency-Key parameter to the operations of idempotent routes. */
function markIdempotent(document: Record<string, unknown>, routes: ReadonlyArray<{ url: string; method: string }>) {
  const paths = document.paths as Record<string, Record<string, { parameters?: unknown[] }>>;
  for (const { url, method } of routes) {
    const operation = paths[toOpenApiPath(url)]?.[method.toLowerCase()];
    if (!operation) continue;
    operation.parameters = [...(operation.parameters ?? []), { $ref: `#/components/parameters/${IDEMPOTENCY_PARAMETER}` }];
  }
  return document;
}

/** "/api/exchange/:src/:dst" → "/api/exchange/{src}/{dst}", as @fastify/swagger writes paths. */
export function toOpenApiPath(url: string): string {
  return url.replace(/:([A-Za-z0-9_]+)/g, '{$1}');
}

/** A message for issues whose schema names none: an i18n key, so every field message is localized. */
const defaultFieldError = (issue: { input?: unknown }) => (issue.input === undefined || issue.input === '' ? 'validation.required' : 'validation.invalid');

/**
 * Input fails its schema: 400 `validation`, one message per bad field (the first issue of
 * each) keyed by its dotted path, `_` for the input as a whole. Messages are i18n keys the
 * error handler localizes. Fastify adds `validationContext` (params, body, querystring…).
 */
function validatorCompiler({ schema }: { schema: unknown }) {
  const zodSchema = schema as z.ZodType;
  return (data: unknown) => {
    const result = zodSchema.safeParse(data, { error: defaultFieldError });
    if (result.success) return { value: result.data };
    const fields: Record<string, string> = {};
    for (const issue of result.error.issues) fields[issue.path.join('.') || '_'] ??= issue.message;
    return { error: new AppError('validation', { fields }) };
  };
}

/**
 * Answers go through the response schema: zod encodes them and fastify sends the JSON. Keys the
 * schema does not declare are dropped; outside production that is an error instead, so a
 * schema that forgets an envelope key fails the tests rather than silently losing data.
 */
function createSerializerCompiler(strict: boolean) {
  return ({ schema, method, url }: { schema: unknown; method: string; url: string }) => {
    const zodSchema = schema as z.ZodType;
    return (data: unknown) => {
      const result = z.safeEncode(zodSchema, data);
      if (!result.success) throw new ResponseSchemaError(method, url, z.prettifyError(result.error));
      if (strict) {
        const dropped = droppedKeys(data, result.data, '');
        if (dropped.length) throw new ResponseSchemaError(method, url, `keys not in the response schema: ${dropped.join(', ')}`);
      }
      return JSON.stringify(result.data);
    };
  };
}

export class ResponseSchemaError extends Error {
  constructor(method: string, url: string, detail: string) {
    super(`${method} ${url}: the answer does not match its schema: ${detail}`);
    this.name = 'ResponseSchemaError';
  }
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (value === null || typeof value !== 'object') return false;
  const proto = Object.getPrototypeOf(value);
  return proto === Object.prototype || proto === null;
}

function droppedKeys(input: unknown, output: unknown, path: string): string[] {
  if (Array.isArray(input) && Array.isArray(output)) {
    return input.flatMap((item, i) => droppedKeys(item, output[i], `${path}[${i}]`));
  }
  if (!isPlainObject(input) || !isPlainObject(output)) return [];
  return Object.entries(input).flatMap(([key, value]) => {
    if (value === undefined) return [];
    const at = path ? `${path}.${key}` : key;
    return key in output ? droppedKeys(value, output[key], at) : [at];
  });
}

async function requireIdempotencyKey(request: FastifyRequest) {
  idempotencyKeyOf(request);
}

/** A call without a body is an empty form: each required field is then reported by name. */
async function emptyBodyIsEmptyForm(request: FastifyRequest) {
  if (request.body === undefined && request.routeOptions.schema?.body) request.body = {};
}

export default fp<{ strict: boolean }>(
  async (app, { strict }) => {
    app.setValidatorCompiler(validatorCompiler);
    app.setSerializerCompiler(createSerializerCompiler(strict));
    app.addHook('preValidation', emptyBodyIsEmptyForm);

    const idempotent: Array<{ url: string; method: string }> = [];
    app.addHook('onRoute', (route) => {
      if (!route.config?.idempotent) return;
      // As before schemas: no session → 401, then a bad key → 400, and only then the body.
      route.preValidation = [...[route.preValidation ?? []].flat(), requireIdempotencyKey];
      for (const method of [route.method].flat()) idempotent.push({ url: route.url, method });
    });

    await app.register(swagger, {
      openapi: {
        openapi: '3.1.0',
        info: { title: 'Obmen API', version: '1', description: DESCRIPTION },
        tags: API_TAGS.map(([name, description]) => ({ name, description })),
        components: {
          securitySchemes: {
            [SESSION_SCHEME]: { type: 'apiKey', in: 'cookie', name: SESSION_COOKIE, description: 'The session cookie set by sign-in.' },
            [API_KEY_SCHEME]: {
              type: 'apiKey',
              in: 'header',
              name: 'X-Obmen-Key',
              description:
                'A key for bots, with X-Obmen-Timestamp, X-Obmen-Nonce and X-Obmen-Signature (see "Keys for bots" above); the scopes listed are the scope the call needs.',
            },
            [OPS_SCHEME]: {
              type: 'apiKey',
              in: 'cookie',
              name: OPS_COOKIE,
              description: "An operator's session cookie (back-office sign-in); the scopes listed are the permission the call needs.",
            },
          },
          parameters: {
            [IDEMPOTENCY_PARAMETER]: {
              name: 'Idempotency-Key',
              in: 'header',
              required: true,
              description: 'One fresh value per submitted form; a repeat replays the first answer.',
              schema: { type: 'string', pattern: IDEMPOTENCY_KEY_PATTERN.source },
            },
          },
        },
      },
      transform: transform as never,
      transformObject: (document) => markIdempotent(jsonSchemaTransformObject(document) as Record<string, unknown>, idempotent),
    });

    // The document itself; the BFF adds its own calls and serves it as /api/openapi.json.
    app.get('/api/openapi.json', { schema: { hide: true } }, () => app.swagger());
  },
  { name: 'schemas' },
);
