import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { randomUUID } from 'node:crypto';
import { Ajv2020 } from 'ajv/dist/2020.js';
import ajvFormats from 'ajv-formats';
import { SESSION_COOKIE } from '@obmen/shared';
import { freshEmail, signUp } from '../../core/test/auth-helpers.ts';
import { operationIdOf } from '../src/openapi.ts';
import { buildBff, startRealCore } from './session-helpers.ts';

type TResponse = { $ref?: string; content?: Record<string, { schema?: unknown }>; headers?: Record<string, unknown> };
type TOperation = { operationId?: string; security?: unknown[]; responses: Record<string, TResponse> };
type TDocument = {
  servers?: Array<{ url: string }>;
  paths: Record<string, Record<string, TOperation>>;
  components: { responses: Record<string, TResponse> };
};
type TAnswer = { statusCode: number; headers: Record<string, unknown>; body: string };

/** A value for each path parameter: one that names something where a fresh database has it, else a number that names nothing (never the caller's own session). */
const PARAMS: Record<string, string> = { src: 'usd', dst: 'btc', currency: 'usd', type: 'passport', name: 'about', token: 'A'.repeat(43) };

/** JSON-pointer escaping of one reference token (RFC 6901). */
const pointerToken = (token: string) => token.replaceAll('~', '~0').replaceAll('/', '~1');

describe('every answer of the app matches what the served document declares for its operation and status', () => {
  let core: Awaited<ReturnType<typeof startRealCore>>;
  let bff: Awaited<ReturnType<typeof buildBff>>;
  let document: TDocument;
  let ajv: Ajv2020;
  let cookie: string;

  beforeAll(async () => {
    core = await startRealCore();
    bff = await buildBff(core.url, { NOT_FOUND_PER_MINUTE: '100000' });
    document = (await bff.app.inject({ url: '/api/openapi.json' })).json();
    // The document is the schema: answers are checked against pointers into it, $refs and all.
    ajv = new Ajv2020({ strict: false, allErrors: true, validateSchema: false });
    // A CommonJS module: its plugin is the default export's `default`, as TypeScript sees it.
    ajvFormats.default(ajv);
    ajv.addSchema(document, 'openapi.json');
    const token = await signUp(core.app, core.db, freshEmail('openapi'), 'a long enough password 1');
    cookie = `${SESSION_COOKIE}=${token}`;
  }, 180_000); // the real core starts on PGlite (migrations and seed)
  afterAll(async () => {
    await bff?.close();
    await core?.close();
  });

  /** What is wrong with this answer of this operation, by the document; nothing when it matches. */
  function mismatches(path: string, method: string, answer: TAnswer): string[] {
    const responses = document.paths[path]![method]!.responses;
    const status = String(answer.statusCode);
    const key = [status, `${status[0]}XX`, 'default'].find((candidate) => responses[candidate]);
    if (!key) return [`status ${status} is not declared`];
    const declared = responses[key]!;
    const response = declared.$ref ? document.components.responses[declared.$ref.split('/').pop()!]! : declared;
    const problems: string[] = [];
    if (response.headers?.['Retry-After'] === undefined && answer.headers['retry-after'] !== undefined && status !== '429') {
      problems.push(`Retry-After is not declared for ${status}`);
    }
    if (answer.body === '') return problems;
    const mediaType = String(answer.headers['content-type'] ?? '')
      .split(';')[0]!
      .trim();
    if (!response.content?.[mediaType]) return [...problems, `${mediaType} is not declared for ${key}`];
    if (mediaType !== 'application/json') return problems;
    const at = declared.$ref ? `${declared.$ref.slice(1)}` : `/paths/${pointerToken(path)}/${method}/responses/${pointerToken(key)}`;
    const validate = ajv.getSchema(`openapi.json#${at}/content/${pointerToken(mediaType)}/schema`);
    if (!validate) return [...problems, `no schema at ${at}`];
    if (!validate(JSON.parse(answer.body)))
      problems.push(`${ajv.errorsText(validate.errors)} ${JSON.stringify(validate.errors?.map((e) => e.params))} ${answer.body.slice(0, 300)}`);
    return problems;
  }

  it('names every operation once, marks each public or locked, and says where it is served', () => {
    const operations = Object.entries(document.paths).flatMap(([path, item]) => Object.entries(item).map(([method, op]) => ({ path, method, op })));
    expect(operations.length).toBeGreaterThan(100);
    const ids = operations.map(({ op }) => op.operationId);
    expect(new Set(ids).size).toBe(operations.length);
    for (const { path, method, op } of operations) {
      expect(op.operationId).toBe(operationIdOf(method, path));
      expect(op.security, `${method} ${path}`).toBeDefined();
    }
    expect(document.paths['/api/site']?.get?.security).toEqual([]);
    expect(document.paths['/api/wallets']?.get?.security).toEqual([{ session: [] }, { apiKey: ['read'] }]);
    expect(document.servers?.[0]?.url).toBe('/');
    expect(operationIdOf('get', '/api/exchange/{src}/{dst}')).toBe('getExchangeBySrcByDst');
    expect(operationIdOf('post', '/api/auth/send_confirmation_instructions')).toBe('postAuthSendConfirmationInstructions');
  });

  it('declares the failures the BFF answers itself', () => {
    const site = document.paths['/api/site']!.get!.responses;
    for (const status of ['413', '502', '503', '504']) expect(site[status]?.$ref, status).toMatch(/^#\/components\/responses\//);
    expect(document.components.responses.Unavailable?.headers).toHaveProperty('Retry-After');
  });

  it('every operation, called anonymously and signed in, answers as declared (fv included)', async () => {
    const problems: string[] = [];
    const seen = { json2xx: 0, operations: new Set<string>() };
    const operations = Object.entries(document.paths)
      .flatMap(([path, item]) => Object.keys(item).map((method) => ({ path, method })))
      // Signing out ends the session the other calls use: last.
      .sort((a, b) => Number(a.path === '/api/auth/logout') - Number(b.path === '/api/auth/logout'));
    const check = async (path: string, method: string, headers: Record<string, string>, query = '') => {
      const url = path.replace(/\{(\w+)\}/g, (_, name: string) => PARAMS[name] ?? '999999') + query;
      const post = method === 'post';
      const answer = await bff.app.inject({
        method: method.toUpperCase() as 'GET' | 'POST',
        url,
        headers: { ...headers, ...(post ? { 'idempotency-key': randomUUID() } : {}) },
        ...(post ? { payload: {} } : {}),
      });
      for (const problem of mismatches(path, method, answer)) problems.push(`${method.toUpperCase()} ${url} → ${answer.statusCode}: ${problem}`);
      seen.operations.add(`${method} ${path}`);
      if (answer.statusCode < 300 && String(answer.headers['content-type']).startsWith('application/json')) {
        expect(answer.json().fv, `${method} ${url}`).toBe('fv-session-test');
        seen.json2xx++;
      }
    };
    for (const { path, method } of operations) {
      await check(path, method, {});
      await check(path, method, { cookie });
      const csv = document.paths[path]![method]!.responses['200']?.content?.['text/csv'];
      if (csv) await check(path, method, { cookie }, '?format=csv');
    }
    expect(problems).toEqual([]);
    expect(seen.operations.size).toBe(operations.length);
    // Not only refusals: most reads answer 200 to a signed-in caller.
    expect(seen.json2xx).toBeGreaterThan(40);
  }, 120_000);
});
