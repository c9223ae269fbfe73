import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import Fastify, { type FastifyInstance } from 'fastify';
import cookie from '@fastify/cookie';
import pino from 'pino';
import { Writable } from 'node:stream';
import { FRONT_LOG_BODY_LIMIT, FRONT_LOG_LIMITS, FRONT_LOG_PATH, type TFrontLogInput } from '@obmen/shared';
import app from '../src/app.ts';
import { loadConfig } from '../src/config.ts';
import { clientKey } from '@obmen/shared';
import frontLogger, { escapeControl } from '../src/plugins/logger.ts';
import { makeFakeSiteDist, startFakeUpstream, type TFakeUpstream } from './helpers.ts';

type TLine = { level: number; msg: string; front: Record<string, unknown>; window_s?: number };

/** Collects what pino writes, one parsed JSON object per line, and the raw text. */
function captureLog() {
  const raw: string[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _encoding, callback) {
      raw.push(chunk.toString('utf8'));
      callback();
    },
  });
  const lines = () =>
    raw
      .join('')
      .split('\n')
      .filter(Boolean)
      .map((line) => JSON.parse(line) as TLine)
      .filter((line) => line.front !== undefined);
  return { logger: pino({ level: 'warn' }, stream), raw, lines, reset: () => (raw.length = 0) };
}

const report = (over: Partial<TFrontLogInput> = {}): TFrontLogInput => ({
  type: 'window',
  message: 'TypeError: x is undefined',
  stack: 'TypeError: x is undefined\n    at boot (https://obmen.local/_astro/boot.js:1:10)',
  url: 'https://obmen.local/exchanges',
  user_agent: 'Mozilla/5.0 (X11; Linux x86_64) Chrome/140',
  time: '2026-11-21T10:00:00.000Z',
  ...over,
});

describe('BFF POST /api/logger/front (the whole app)', () => {
  let fastify: FastifyInstance;
  let upstream: TFakeUpstream;
  let site: ReturnType<typeof makeFakeSiteDist>;
  const log = captureLog();
  let nextIp = 0;
  const ip = () => `198.51.100.${++nextIp}`;

  beforeAll(async () => {
    upstream = await startFakeUpstream();
    site = makeFakeSiteDist();
    const config = loadConfig({ NODE_ENV: 'test', LOG_LEVEL: 'warn', UPSTREAM_URL: upstream.url, SITE_DIST: site.dir, LOG_REQUESTS: 'false' });
    fastify = Fastify({ loggerInstance: log.logger }) as unknown as FastifyInstance;
    await fastify.register(app, { config, frontendVersion: 'fv-test' });
    await fastify.ready();
  });
  afterAll(async () => {
    await fastify.close();
    await upstream.close();
    site.remove();
  });
  beforeEach(() => {
    log.reset();
    upstream.hits.length = 0;
  });

  const post = (payload: unknown, headers: Record<string, string> = {}, remoteAddress = ip()) =>
    fastify.inject({
      method: 'POST',
      url: FRONT_LOG_PATH,
      remoteAddress,
      headers: { 'content-type': 'application/json', ...headers },
      payload: typeof payload === 'string' ? payload : JSON.stringify(payload),
    });

  it('answers 204 and writes one warn line of a fixed shape; nothing reaches the core', async () => {
    const res = await post(report());
    expect(res.statusCode).toBe(204);
    expect(res.body).toBe('');
    const lines = log.lines();
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatchObject({ level: 40, msg: 'front-end error' });
    expect(lines[0]!.front).toEqual({
      count: 1,
      type: 'window',
      message: 'TypeError: x is undefined',
      stack: 'TypeError: x is undefined\\n    at boot (https://obmen.local/_astro/boot.js:1:10)',
      url: 'https://obmen.local/exchanges',
      user_agent: 'Mozilla/5.0 (X11; Linux x86_64) Chrome/140',
      client_time: '2026-11-21T10:00:00.000Z',
    });
    expect(upstream.hits).toEqual([]);
  });

  it('accepts text/plain bodies holding JSON (navigator.sendBeacon with a string)', async () => {
    const res = await post(JSON.stringify(report({ type: 'unhandledrejection', message: 'beacon' })), { 'content-type': 'text/plain;charset=UTF-8' });
    expect(res.statusCode).toBe(204);
    expect(log.lines()[0]!.front).toMatchObject({ type: 'unhandledrejection', message: 'beacon' });
  });

  it('records every front-end error type the site reports, stack optional', async () => {
    for (const type of ['react', 'window', 'unhandledrejection', 'i18n'] as const) {
      const { stack: _stack, ...noStack } = report({ type, message: `Missing i18n key ${type}` });
      expect((await post(noStack)).statusCode).toBe(204);
    }
    expect(log.lines().map((line) => [line.front.type, line.front.stack])).toEqual([
      ['react', ''],
      ['window', ''],
      ['unhandledrejection', ''],
      ['i18n', ''],
    ]);
  });

  it('refuses a body over the cap with 413 JSON, before logging anything', async () => {
    const res = await post(report({ stack: 'x'.repeat(FRONT_LOG_BODY_LIMIT) }));
    expect(res.statusCode).toBe(413);
    expect(res.headers['content-type']).toMatch(/^application\/json/);
    expect(res.json()).toEqual({ status: 'error', code: 'payload_too_large', message: 'Слишком большой запрос' });
    const plain = await post('y'.repeat(FRONT_LOG_BODY_LIMIT + 1), { 'content-type': 'text/plain', cookie: 'i18n_redirected=en' });
    expect(plain.statusCode).toBe(413);
    expect(plain.json().message).toBe('The request is too large');
    expect(log.lines()).toEqual([]);
    expect(upstream.hits).toEqual([]);
  });

  it('refuses what the shared schema refuses with 400 JSON', async () => {
    const bad: unknown[] = [
      { ...report(), type: 'console' },
      { ...report(), message: '' },
      { ...report(), url: undefined },
      { ...report(), time: 12 },
      'not json at all',
      '[1,2]',
    ];
    for (const payload of bad) {
      const res = await post(payload);
      expect(res.statusCode, JSON.stringify(payload)).toBe(400);
      expect(res.json()).toMatchObject({ status: 'error', code: 'validation' });
    }
    const broken = await post('{"type":', { 'content-type': 'text/plain' });
    expect(broken.statusCode).toBe(400);
    const form = await post('a=1', { 'content-type': 'application/x-www-form-urlencoded' });
    expect(form.statusCode).toBe(415);
    expect(log.lines()).toEqual([]);
  });

  it('cuts over-long fields instead of refusing the report', async () => {
    expect((await post(report({ message: 'm'.repeat(FRONT_LOG_LIMITS.message + 500) }))).statusCode).toBe(204);
    expect(String(log.lines()[0]!.front.message)).toHaveLength(FRONT_LOG_LIMITS.message);
  });

  it('escapes control characters: one report is one line, with no terminal escapes or fake lines', async () => {
    const evil = 'boom\n{"level":30,"msg":"forged"}\r\n\u001b[31mred\u001b[0m\u0007\u2028\u202eevil\u0000';
    expect((await post(report({ message: evil, url: 'https://obmen.local/\u001b]8;;x', user_agent: 'UA\nInjected: yes' }))).statusCode).toBe(204);
    const text = log.raw.join('');
    expect(text.trim().split('\n')).toHaveLength(1);
    expect(text).not.toMatch(/[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u2028\u2029\u202a-\u202e]/);
    const front = log.lines()[0]!.front;
    expect(front.message).toBe('boom\\n{"level":30,"msg":"forged"}\\r\\n\\u001b[31mred\\u001b[0m\\u0007\\u2028\\u202eevil\\u0000');
    expect(front.url).toBe('https://obmen.local/\\u001b]8;;x');
    expect(front.user_agent).toBe('UA\\nInjected: yes');
  });

  it('counts repeats of one error instead of logging each', async () => {
    const from = ip();
    for (let i = 0; i < 5; i++) expect((await post(report({ message: 'same' }), {}, from)).statusCode).toBe(204);
    expect((await post(report({ message: 'same', url: 'https://obmen.local/other' }), {}, from)).statusCode).toBe(204);
    expect(log.lines().map((line) => [line.front.message, line.front.url])).toEqual([
      ['same', 'https://obmen.local/exchanges'],
      ['same', 'https://obmen.local/other'],
    ]);
  });

  it('rate-limits per client address: 429 JSON with Retry-After, others unaffected', async () => {
    const from = ip();
    for (let i = 0; i < 30; i++) expect((await post(report({ message: `n${i}` }), {}, from)).statusCode).toBe(204);
    const limited = await post(report({ message: 'over' }), { cookie: 'i18n_redirected=en' }, from);
    expect(limited.statusCode).toBe(429);
    expect(limited.json()).toEqual({ status: 'error', code: 'rate_limited', message: 'Too many attempts. Please try again later.' });
    expect(Number(limited.headers['retry-after'])).toBeGreaterThan(0);
    expect(Number(limited.headers['retry-after'])).toBeLessThanOrEqual(60);
    // Even an oversized body is refused by the limit first (the body is never read).
    expect((await post('z'.repeat(FRONT_LOG_BODY_LIMIT * 4), {}, from)).statusCode).toBe(429);
    expect((await post(report({ message: 'other client' }))).statusCode).toBe(204);
    expect(log.lines()).toHaveLength(31);
  });

  it('keeps every other method on the path in the BFF too', async () => {
    for (const method of ['GET', 'PUT', 'DELETE'] as const) {
      const res = await fastify.inject({ method, url: FRONT_LOG_PATH });
      expect(res.statusCode).toBe(405);
      expect(res.headers.allow).toBe('POST');
    }
    expect(upstream.hits).toEqual([]);
  });

  it('refuses a cross-site report (CSRF), like every state-changing call', async () => {
    const res = await post(report(), { origin: 'https://evil.example' });
    expect(res.statusCode).toBe(403);
    const same = await post(report({ message: 'same origin' }), { origin: 'http://localhost:80', host: 'localhost:80' });
    expect(same.statusCode).toBe(204);
  });
});

describe('front logger windows (own clock)', () => {
  let fastify: FastifyInstance;
  let clock = 1_000_000;
  const log = captureLog();

  beforeAll(async () => {
    fastify = Fastify({ logger: false });
    await fastify.register(cookie);
    await fastify.register(frontLogger, { logger: log.logger, now: () => clock, perMinute: 3, repeatWindowMs: 60_000 });
    await fastify.ready();
  });
  afterAll(() => fastify.close());
  beforeEach(() => log.reset());

  const post = (payload: TFrontLogInput, remoteAddress = '203.0.113.9') => fastify.inject({ method: 'POST', url: FRONT_LOG_PATH, remoteAddress, payload });

  it('logs the count of repeats when the next occurrence comes after the window', async () => {
    for (let i = 0; i < 3; i++) await post(report({ message: 'again' }), `203.0.113.${50 + i}`);
    clock += 61_000;
    await post(report({ message: 'again' }), '203.0.113.60');
    expect(log.lines().map((line) => [line.msg, line.front.count])).toEqual([
      ['front-end error', 1],
      ['front-end error repeated', 2],
      ['front-end error', 1],
    ]);
    expect(log.lines()[1]).toMatchObject({ window_s: 60, front: { type: 'window', message: 'again', url: 'https://obmen.local/exchanges' } });
  });

  it('opens a new rate window after a minute', async () => {
    for (let i = 0; i < 3; i++) expect((await post(report({ message: `w${i}` }), '192.0.2.1')).statusCode).toBe(204);
    const limited = await post(report(), '192.0.2.1');
    expect(limited.statusCode).toBe(429);
    clock += 20_000;
    expect((await post(report(), '192.0.2.1')).headers['retry-after']).toBe('40');
    clock += 40_000;
    expect((await post(report({ message: 'next minute' }), '192.0.2.1')).statusCode).toBe(204);
  });

  it('counts IPv6 clients per /64', async () => {
    expect(clientKey('2001:db8:1:2:aaaa::1')).toBe('2001:db8:1:2::/64');
    expect(clientKey('2001:db8:1:2:bbbb:cccc:dddd:eeee')).toBe('2001:db8:1:2::/64');
    expect(clientKey('2001:db8::1')).toBe('2001:db8:0:0::/64');
    expect(clientKey('::ffff:192.0.2.7')).toBe('192.0.2.7');
    expect(clientKey('192.0.2.7')).toBe('192.0.2.7');
    for (let i = 0; i < 3; i++) expect((await post(report({ message: `v6 ${i}` }), `2001:db8:5:6::${i + 1}`)).statusCode).toBe(204);
    expect((await post(report(), '2001:db8:5:6:ffff::9')).statusCode).toBe(429);
    expect((await post(report({ message: 'v6 other' }), '2001:db8:5:7::1')).statusCode).toBe(204);
  });

  it('flushes pending repeat counts when the app closes', async () => {
    const own = Fastify({ logger: false });
    const ownLog = captureLog();
    await own.register(cookie);
    await own.register(frontLogger, { logger: ownLog.logger, repeatWindowMs: 60_000 });
    for (let i = 0; i < 4; i++) await own.inject({ method: 'POST', url: FRONT_LOG_PATH, payload: report({ message: 'closing' }) });
    await own.close();
    expect(ownLog.lines().map((line) => [line.msg, line.front.count])).toEqual([
      ['front-end error', 1],
      ['front-end error repeated', 3],
    ]);
  });

  it('escapeControl leaves ordinary text alone', () => {
    expect(escapeControl('Ошибка: нет ключа «x» — 100%')).toBe('Ошибка: нет ключа «x» — 100%');
    expect(escapeControl('a\tb')).toBe('a\\tb');
  });
});
