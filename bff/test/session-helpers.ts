import { afterAll, beforeAll, beforeEach, expect } from 'vitest';
import Fastify, { type FastifyInstance, type FastifyServerOptions } from 'fastify';
import type { AddressInfo } from 'node:net';
import app from '../src/app.ts';
import { answerError } from '../src/errors.ts';
import { loadConfig, type TConfig } from '../src/config.ts';
import { LINK_BINDING_COOKIE } from '@obmen/shared';
import { makeFakeSiteDist, startFakeUpstream, type TFakeUpstream } from './helpers.ts';
import { genRequestId } from '../src/request-id.ts';
import { build as buildCore } from '../../core/test/helpers.ts';
import { multipart } from '../../core/test/storage/upload-fixtures.ts';

/** The BFF in front of `upstreamUrl`, with Fastify options as server.ts would pass them. */
export async function buildBff(upstreamUrl: string, env: Partial<Record<keyof TConfig, string>> = {}, options: FastifyServerOptions = {}) {
  const site = makeFakeSiteDist();
  const config = loadConfig({
    NODE_ENV: 'test',
    LOG_LEVEL: 'silent',
    UPSTREAM_URL: upstreamUrl,
    // A password sign-in spends one scrypt (~0.5 s) in core.
    UPSTREAM_TIMEOUT_MS: '20000',
    // The real core runs in this process (on PGlite): its work delays this event loop too, and
    // beside other test files a second of delay would shed the BFF's requests (503 overloaded).
    SHED_EVENT_LOOP_DELAY_MS: '0',
    SITE_DIST: site.dir,
    ...env,
  });
  const fastify: FastifyInstance = Fastify({
    ...(options.loggerInstance ? {} : { logger: false }),
    forceCloseConnections: true,
    frameworkErrors: answerError,
    genReqId: genRequestId,
    ...options,
  });
  await fastify.register(app, { config, frontendVersion: 'fv-session-test' });
  await fastify.ready();
  return {
    app: fastify,
    async close() {
      await fastify.close();
      site.remove();
    },
  };
}

/**
 * A fake core and the BFF in front of it for the enclosing describe: started before its tests,
 * closed after them, the core's recorded hits cleared before each test.
 */
export function fakeCoreAndBff(...bffArgs: Parameters<typeof buildBff> extends [string, ...infer R] ? R : never) {
  const fake = {} as { upstream: TFakeUpstream; bff: Awaited<ReturnType<typeof buildBff>> };
  beforeAll(async () => {
    fake.upstream = await startFakeUpstream();
    fake.bff = await buildBff(fake.upstream.url, ...bffArgs);
  });
  afterAll(async () => {
    await fake.bff.close();
    await fake.upstream.close();
  });
  beforeEach(() => {
    fake.upstream.hits.length = 0;
  });
  return fake;
}

/** The real core on a fresh in-memory PGlite, listening on 127.0.0.1:<random>. */
export async function startRealCore(overrides: Parameters<typeof buildCore>[1] = {}, options: Parameters<typeof buildCore>[2] = {}) {
  const core = await buildCore('pglite', overrides, options);
  await core.app.listen({ host: '127.0.0.1', port: 0 });
  const { port } = core.app.server.address() as AddressInfo;
  return { ...core, url: `http://127.0.0.1:${port}` };
}

export type TCookie = { name: string; value: string; attributes: Record<string, string | true> };

/** The `Cookie` header of the browser that asked for a mailed link: the BFF's link_binding cookie from that answer. */
export function linkBindingOf(linkRequest: { headers: Record<string, unknown> }): string {
  const cookie = parseSetCookies(linkRequest.headers['set-cookie'] as string | string[] | undefined).find((c) => c.name === LINK_BINDING_COOKIE);
  if (!cookie) throw new Error('no link_binding cookie in the answer');
  return `${LINK_BINDING_COOKIE}=${cookie.value}`;
}

export function parseSetCookies(header: string | string[] | undefined): TCookie[] {
  const list = header === undefined ? [] : Array.isArray(header) ? header : [header];
  return list.map((line) => {
    const [pair = '', ...rest] = line.split(/;\s*/);
    const eq = pair.indexOf('=');
    const attributes: Record<string, string | true> = {};
    for (const part of rest) {
      const at = part.indexOf('=');
      if (at === -1) attributes[part.toLowerCase()] = true;
      else attributes[part.slice(0, at).toLowerCase()] = part.slice(at + 1);
    }
    return { name: pair.slice(0, eq), value: pair.slice(eq + 1), attributes };
  });
}

/**
 * Opens a passport draft with `headers` (a browser's) and uploads `files` to it through the BFF,
 * each as the side it names; `uploadHeaders` for the upload when they differ. The upload's answer, unchecked.
 */
export async function uploadToNewPassport(
  bff: FastifyInstance,
  headers: Record<string, string>,
  files: { side: string; filename: string; content: Buffer }[],
  uploadHeaders = headers,
) {
  const draft = await bff.inject({ url: '/api/verification/passport/new', headers });
  expect(draft.statusCode, draft.body).toBe(200);
  const id = draft.json().verification.current.id as string;
  const form = multipart([
    { name: 'id', value: id },
    ...files.flatMap(({ side, filename, content }, at) => [
      { name: `side${at}`, value: side },
      { name: `file${at}`, filename, content },
    ]),
  ]);
  const upload = await bff.inject({
    method: 'POST',
    url: '/api/verification/passport/upload',
    payload: form.payload,
    headers: { ...uploadHeaders, ...form.headers },
  });
  return { id, upload };
}
