import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connect } from 'node:net';
import { DICTIONARIES, REQUEST_ID_HEADER, ROUTE_NOT_FOUND_HEADER } from '@obmen/shared';
import { CONTENT_SECURITY_POLICY } from '../src/plugins/security-headers.ts';
import { build, defaultUpstreamHandler, json } from './helpers.ts';
import { rawRequest } from '../../core/test/raw-http.ts';

const MB = 1024 * 1024;

/** Edge cases of the /api proxy over real sockets (inject's fake socket hides some of them). */
describe('BFF /api proxy edge cases (real sockets)', () => {
  let ctx: Awaited<ReturnType<typeof build>>;
  let origin: string;
  beforeAll(async () => {
    ctx = await build({ env: { UPSTREAM_TIMEOUT_MS: '5000' } });
    origin = await ctx.app.listen({ host: '127.0.0.1', port: 0 });
  });
  afterAll(() => ctx.close());

  it('forwards a request sent with Expect: 100-continue, body and all', async () => {
    ctx.upstream.hits.length = 0;
    const body = JSON.stringify({ email: 'expect@example.test', pad: 'x'.repeat(4096) });
    const res = await rawRequest(origin, '/api/auth/login', {
      method: 'POST',
      headers: { expect: '100-continue', 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(body)) },
      body,
    });
    expect(res.status).toBe(200);
    expect(ctx.upstream.hits).toHaveLength(1);
    expect(ctx.upstream.hits[0]!.body).toBe(body);
    expect(ctx.upstream.hits[0]!.headers.expect).toBeUndefined();
  });

  it('answers a 50 MB JSON body 413 in the error shape, localized, and never sends it on', async () => {
    ctx.upstream.hits.length = 0;
    const res = await rawRequest(origin, '/api/transfer', {
      method: 'POST',
      headers: { 'content-type': 'application/json', cookie: 'i18n_redirected=en' },
      body: Buffer.alloc(50 * MB, 0x20),
    }).catch((err: Error) => ({ status: 0, body: String(err), headers: {} }));
    expect(res.status).toBe(413);
    expect(JSON.parse(res.body)).toEqual({ status: 'error', code: 'payload_too_large', message: DICTIONARIES.en['error.payload_too_large'] });
    expect(ctx.upstream.hits).toEqual([]);
  });

  it('answers an upload over every cap 413 naming the cap, as the core would, in ru and en', async () => {
    ctx.upstream.hits.length = 0;
    for (const [locale, message] of [
      ['en', 'The upload is too large: at most 60 MB in all.'],
      ['ru', 'Слишком большая загрузка: не больше 60 МБ всего.'],
    ] as const) {
      const res = await rawRequest(origin, '/api/verification/passport/upload', {
        method: 'POST',
        headers: { 'content-type': 'multipart/form-data; boundary=x', cookie: `i18n_redirected=${locale}` },
        body: Buffer.alloc(61 * MB, 0x20),
      }).catch((err: Error) => ({ status: 0, body: String(err), headers: {} }));
      expect(res.status).toBe(413);
      expect(JSON.parse(res.body)).toEqual({ status: 'error', code: 'upload_too_large', message });
    }
    expect(ctx.upstream.hits).toEqual([]);
  });

  it('answers a 2 MB form sent chunked (no length to check first) 413, not 502', async () => {
    ctx.upstream.hits.length = 0;
    const port = Number(new URL(origin).port);
    const answer = await new Promise<string>((resolve, reject) => {
      const socket = connect(port, '127.0.0.1');
      let text = '';
      socket.setEncoding('utf8');
      socket.on('data', (chunk: string) => (text += chunk));
      socket.on('close', () => resolve(text));
      socket.on('error', (err) => (text ? resolve(text) : reject(err)));
      socket.write('POST /api/transfer HTTP/1.1\r\nHost: obmen.test\r\nContent-Type: application/x-www-form-urlencoded\r\nTransfer-Encoding: chunked\r\n\r\n');
      const chunk = `amount=${'1'.repeat(64 * 1024)}&`;
      for (let sent = 0; sent < 2 * MB; sent += chunk.length) socket.write(`${chunk.length.toString(16)}\r\n${chunk}\r\n`);
      socket.end('0\r\n\r\n');
    });
    expect(answer).toMatch(/^HTTP\/1\.1 413 /);
    const body = answer.slice(answer.indexOf('\r\n\r\n') + 4);
    expect(JSON.parse(body)).toEqual({ status: 'error', code: 'payload_too_large', message: DICTIONARIES.ru['error.payload_too_large'] });
  });

  it('never lets client-sent proxy headers reach the core', async () => {
    ctx.upstream.hits.length = 0;
    const res = await rawRequest(origin, '/api/auth/check', {
      headers: {
        'x-forwarded-proto': 'https',
        'x-forwarded-host': 'evil.example',
        'x-forwarded-port': '443',
        'x-forwarded-prefix': '/admin',
        forwarded: 'for=127.0.0.1;proto=https;host=evil.example',
        'x-original-url': '/api/dev/mailbox',
        'x-rewrite-url': '/api/dev/mailbox',
        'x-real-ip': '127.0.0.1',
      },
    });
    expect(res.status).toBe(200);
    const sent = ctx.upstream.hits[0]!.headers;
    for (const name of [
      'x-forwarded-proto',
      'x-forwarded-host',
      'x-forwarded-port',
      'x-forwarded-prefix',
      'forwarded',
      'x-original-url',
      'x-rewrite-url',
      'x-real-ip',
    ]) {
      expect(sent[name], name).toBeUndefined();
    }
    expect(sent['x-forwarded-for']).toBe('127.0.0.1');
  });

  it('lets an upload (multipart) through up to the core’s upload limit', async () => {
    ctx.upstream.hits.length = 0;
    ctx.upstream.handle = (_req, res, body) => json(res, 200, { length: body.length });
    try {
      const boundary = 'xBoundary42';
      const body = `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="a.bin"\r\nContent-Type: application/octet-stream\r\n\r\n${'z'.repeat(3 * MB)}\r\n--${boundary}--\r\n`;
      const res = await rawRequest(origin, '/api/verification/files', {
        method: 'POST',
        headers: { 'content-type': `multipart/form-data; boundary=${boundary}` },
        body,
      });
      expect(res.status).toBe(200);
      expect(JSON.parse(res.body).length).toBe(Buffer.byteLength(body));
    } finally {
      ctx.upstream.handle = defaultUpstreamHandler;
    }
  });

  it('still proxies an ordinary body within the limit', async () => {
    ctx.upstream.hits.length = 0;
    ctx.upstream.handle = (_req, res, body) => json(res, 200, { length: body.length });
    try {
      const body = JSON.stringify({ pad: 'y'.repeat(MB - 100) });
      const res = await rawRequest(origin, '/api/transfer', { method: 'POST', headers: { 'content-type': 'application/json' }, body });
      expect(res.status).toBe(200);
      expect(JSON.parse(res.body).length).toBe(Buffer.byteLength(body));
    } finally {
      ctx.upstream.handle = defaultUpstreamHandler;
    }
  });
});

/** A private file's answer (identity document, chat file): the core's own policy must reach the browser. */
describe('BFF private file answers (real sockets)', () => {
  let ctx: Awaited<ReturnType<typeof build>>;
  let origin: string;
  const FILE_POLICY = "default-src 'none'; sandbox";
  beforeAll(async () => {
    ctx = await build();
    origin = await ctx.app.listen({ host: '127.0.0.1', port: 0 });
  });
  afterAll(() => ctx.close());

  it("keeps the core's `default-src 'none'; sandbox` policy, and gives its own to answers without one", async () => {
    ctx.upstream.handle = (_req, res) => {
      res.writeHead(200, { 'content-type': 'image/png', 'content-security-policy': FILE_POLICY, 'cache-control': 'private, no-store' });
      res.end(Buffer.from([0x89, 0x50, 0x4e, 0x47]));
    };
    try {
      const file = await rawRequest(origin, '/api/verification/files/1');
      expect(file.status).toBe(200);
      expect(file.headers['content-security-policy']).toBe(FILE_POLICY);
      expect(file.headers['x-content-type-options']).toBe('nosniff');
    } finally {
      ctx.upstream.handle = defaultUpstreamHandler;
    }
    const plain = await rawRequest(origin, '/api/anything');
    expect(plain.headers['content-security-policy']).toBe(CONTENT_SECURITY_POLICY);
  });
});

/** NOT_FOUND_PER_MINUTE covers missing API paths too (docs/ops.md): the core's route misses count. */
describe('BFF missing /api paths are limited per client (real sockets)', () => {
  let ctx: Awaited<ReturnType<typeof build>>;
  let origin: string;
  const LIMIT = 5;
  beforeAll(async () => {
    ctx = await build({ env: { NOT_FOUND_PER_MINUTE: String(LIMIT) } });
    origin = await ctx.app.listen({ host: '127.0.0.1', port: 0 });
    ctx.upstream.handle = (req, res) => {
      if ((req.url ?? '').startsWith('/api/scan/'))
        return json(res, 404, { status: 'error', code: 'route_not_found', message: 'no such call' }, { [ROUTE_NOT_FOUND_HEADER]: '1' });
      if ((req.url ?? '').startsWith('/api/withdraw/')) return json(res, 404, { status: 'error', code: 'withdrawal_not_found', message: 'none' });
      return json(res, 200, { ok: true });
    };
  });
  afterAll(() => ctx.close());

  it('answers a scan of made-up /api paths 429 + Retry-After after the limit; a missing entity is not a miss', async () => {
    for (let i = 0; i < LIMIT + 3; i++) expect((await rawRequest(origin, `/api/withdraw/${i}`)).status).toBe(404);
    const answers = [];
    for (let i = 0; i < LIMIT + 3; i++) answers.push(await rawRequest(origin, `/api/scan/${i}`, { headers: { cookie: 'i18n_redirected=en' } }));
    expect(answers.slice(0, LIMIT).map((answer) => answer.status)).toEqual(Array(LIMIT).fill(404));
    for (const answer of answers.slice(0, LIMIT)) expect(answer.headers[ROUTE_NOT_FOUND_HEADER]).toBeUndefined();
    const refused = answers[LIMIT]!;
    expect(refused.status).toBe(429);
    expect(Number(refused.headers['retry-after'])).toBeGreaterThan(0);
    expect(JSON.parse(refused.body)).toEqual({ status: 'error', code: 'rate_limited', message: DICTIONARIES.en['error.rate_limited'] });
    expect(answers.slice(LIMIT).map((answer) => answer.status)).toEqual([429, 429, 429]);
    // The BFF's own misses share the one window.
    expect((await rawRequest(origin, '/no-such-page-here')).status).toBe(429);
  });
});

/** Plain /api calls are proxied at the front door, before Fastify; everything else through Fastify, to the same proxy. */
describe('BFF /api proxy: the front door and the Fastify route', () => {
  let ctx: Awaited<ReturnType<typeof build>>;
  let origin: string;
  /** The URLs Fastify's hooks saw. */
  const throughFastify: string[] = [];
  beforeAll(async () => {
    ctx = await build({
      frontendVersion: 'fv-door',
      observe: (fastify) =>
        fastify.addHook('onRequest', (request, _reply, done) => {
          throughFastify.push(request.url);
          done();
        }),
    });
    origin = await ctx.app.listen({ host: '127.0.0.1', port: 0 });
    ctx.upstream.handle = (_req, res) => json(res, 200, { ok: true });
  });
  afterAll(() => ctx.close());

  it('answers a plain call on a socket before Fastify, and the same call through Fastify alike', async () => {
    throughFastify.length = 0;
    const door = await rawRequest(origin, '/api/exchange/list', { headers: { cookie: 'i18n_redirected=en', [REQUEST_ID_HEADER]: 'door-1' } });
    expect(throughFastify).toEqual([]);
    const route = await ctx.app.inject({ url: '/api/exchange/list', headers: { cookie: 'i18n_redirected=en', [REQUEST_ID_HEADER]: 'door-2' } });
    expect(throughFastify).toEqual(['/api/exchange/list']);
    expect(JSON.parse(door.body)).toEqual({ fv: 'fv-door', ok: true });
    expect(route.body).toBe(door.body);
    expect(door.headers[REQUEST_ID_HEADER]).toBe('door-1');
    expect(route.headers[REQUEST_ID_HEADER]).toBe('door-2');
    for (const name of ['content-type', 'content-security-policy', 'x-frame-options', 'x-content-type-options'])
      expect(route.headers[name], name).toBe(door.headers[name]);
    const sent = ctx.upstream.hits.slice(-2).map((hit) => hit.headers);
    expect(sent.map((headers) => headers['x-obmen-locale'])).toEqual(['en', 'en']);
    expect(sent.map((headers) => headers[REQUEST_ID_HEADER])).toEqual(['door-1', 'door-2']);
  });

  it("leaves to Fastify the BFF's own /api paths, a cross-site write and a development helper", async () => {
    throughFastify.length = 0;
    const hitsBefore = ctx.upstream.hits.length;
    expect((await rawRequest(origin, '/api/openapi.json')).status).toBe(200);
    const crossSite = await rawRequest(origin, '/api/transfer', {
      method: 'POST',
      headers: { origin: 'https://evil.example', 'content-type': 'application/json' },
      body: '{}',
    });
    expect(crossSite.status).toBe(403);
    expect(JSON.parse(crossSite.body).code).toBe('csrf');
    await rawRequest(origin, '/api/dev/mailbox');
    expect(throughFastify).toEqual(['/api/openapi.json', '/api/transfer', '/api/dev/mailbox']);
    // The cross-site write never reached the core.
    expect(ctx.upstream.hits.slice(hitsBefore).map((hit) => hit.url)).not.toContain('/api/transfer');
  });
});
