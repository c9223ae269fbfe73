import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OPS_COOKIE, OPS_SESSION_MAX_S, OPS_SESSION_STATE_HEADER, OPS_TOKEN_HEADER, SESSION_COOKIE, LINK_BINDING_COOKIE } from '@obmen/shared';
import { json } from './helpers.ts';
import { buildBff, fakeCoreAndBff, parseSetCookies, startRealCore } from './session-helpers.ts';
import { totpCode, TOTP_STEP_S } from '../../core/src/domains/security/totp.ts';
import { createOperator } from '../../core/src/domains/ops/service.ts';

const HOST = 'obmen.test';
const ORIGIN = `http://${HOST}`;
const OPS_TOKEN = 'O'.repeat(43);
const CUSTOMER_TOKEN = 'C'.repeat(43);
const BINDING = 'B'.repeat(43);

describe('BFF ops cookie (fake core)', () => {
  const fake = fakeCoreAndBff();

  const post = (url: string, cookie?: string, extra: Record<string, string> = {}) =>
    fake.bff.app.inject({ method: 'POST', url, headers: { host: HOST, origin: ORIGIN, ...(cookie ? { cookie } : {}), ...extra }, payload: {} });

  it('turns the token of a sign-in answer into ops_token (HttpOnly, SameSite=Strict, not Secure on http) and strips it', async () => {
    fake.upstream.handle = (_req, res) => json(res, 200, { status: 'ok' }, { [OPS_TOKEN_HEADER]: OPS_TOKEN });
    const res = await post('/api/ops/sign-in');
    expect(res.headers[OPS_TOKEN_HEADER]).toBeUndefined();
    expect(parseSetCookies(res.headers['set-cookie'])).toEqual([
      { name: OPS_COOKIE, value: OPS_TOKEN, attributes: { 'max-age': String(OPS_SESSION_MAX_S), path: '/', httponly: true, samesite: 'Strict' } },
    ]);
    expect(res.body).not.toContain(OPS_TOKEN);
  });

  it('never sets the ops cookie from an answer outside /api/ops, nor from a malformed token, and strips the header anyway', async () => {
    fake.upstream.handle = (_req, res) => json(res, 200, {}, { [OPS_TOKEN_HEADER]: OPS_TOKEN });
    const elsewhere = await post('/api/auth/login_by_password');
    expect(elsewhere.headers['set-cookie']).toBeUndefined();
    expect(elsewhere.headers[OPS_TOKEN_HEADER]).toBeUndefined();
    fake.upstream.handle = (_req, res) => json(res, 200, {}, { [OPS_TOKEN_HEADER]: 'x; Domain=evil.example' });
    const malformed = await post('/api/ops/sign-in');
    expect(malformed.headers['set-cookie']).toBeUndefined();
    expect(malformed.headers[OPS_TOKEN_HEADER]).toBeUndefined();
  });

  it('sends ops_token to /api/ops only, and none of the customer session there', async () => {
    fake.upstream.handle = (_req, res) => json(res, 200, {});
    const cookies = `${OPS_COOKIE}=${OPS_TOKEN}; ${SESSION_COOKIE}=${CUSTOMER_TOKEN}; ${LINK_BINDING_COOKIE}=${BINDING}`;
    await fake.bff.app.inject({ url: '/api/ops/me', headers: { cookie: cookies } });
    await fake.bff.app.inject({ url: '/api/auth/check', headers: { cookie: cookies } });
    const [ops, customer] = fake.upstream.hits;
    expect(ops!.headers[OPS_TOKEN_HEADER]).toBe(OPS_TOKEN);
    expect(ops!.headers.authorization).toBeUndefined();
    expect(ops!.headers['x-obmen-link-binding']).toBeUndefined();
    expect(ops!.headers.cookie).toBeUndefined();
    expect(customer!.headers[OPS_TOKEN_HEADER]).toBeUndefined();
    expect(customer!.headers.authorization).toBe(`Bearer ${CUSTOMER_TOKEN}`);
  });

  it('drops a client-sent x-obmen-ops-token everywhere', async () => {
    fake.upstream.handle = (_req, res) => json(res, 200, {});
    await fake.bff.app.inject({ url: '/api/ops/me', headers: { [OPS_TOKEN_HEADER]: OPS_TOKEN } });
    await fake.bff.app.inject({ url: '/api/auth/check', headers: { [OPS_TOKEN_HEADER]: OPS_TOKEN } });
    // The cookie wins over a forged header on /api/ops.
    await fake.bff.app.inject({ url: '/api/ops/me', headers: { [OPS_TOKEN_HEADER]: 'F'.repeat(43), cookie: `${OPS_COOKIE}=${OPS_TOKEN}` } });
    expect(fake.upstream.hits.map((hit) => hit.headers[OPS_TOKEN_HEADER])).toEqual([undefined, undefined, OPS_TOKEN]);
  });

  it('clears ops_token when the core says cleared (and only when the browser had one), and hides that header', async () => {
    fake.upstream.handle = (_req, res) => json(res, 200, { status: 'ok' }, { [OPS_SESSION_STATE_HEADER]: 'cleared' });
    const res = await post('/api/ops/sign-out', `${OPS_COOKIE}=${OPS_TOKEN}; ${SESSION_COOKIE}=${CUSTOMER_TOKEN}`);
    expect(res.headers[OPS_SESSION_STATE_HEADER]).toBeUndefined();
    // The customer's own cookie stays as it is.
    expect(parseSetCookies(res.headers['set-cookie'])).toEqual([
      { name: OPS_COOKIE, value: '', attributes: { 'max-age': '0', path: '/', httponly: true, samesite: 'Strict' } },
    ]);
    const none = await post('/api/ops/sign-out');
    expect(none.headers['set-cookie']).toBeUndefined();
    expect(none.headers[OPS_SESSION_STATE_HEADER]).toBeUndefined();
  });
});

describe('BFF ops cookie over https (behind a trusted load balancer)', () => {
  const fake = fakeCoreAndBff({ TRUST_PROXY: '127.0.0.1' }, { trustProxy: '127.0.0.1' });

  it('marks the cookie Secure, and its clearing too', async () => {
    const https = { 'x-forwarded-proto': 'https', host: HOST, origin: `https://${HOST}` };
    fake.upstream.handle = (_req, res) => json(res, 200, {}, { [OPS_TOKEN_HEADER]: OPS_TOKEN });
    const set = await fake.bff.app.inject({ method: 'POST', url: '/api/ops/sign-in', headers: https, payload: {} });
    expect(parseSetCookies(set.headers['set-cookie'])[0]!.attributes).toMatchObject({ secure: true, samesite: 'Strict', httponly: true });
    fake.upstream.handle = (_req, res) => json(res, 200, {}, { [OPS_SESSION_STATE_HEADER]: 'cleared' });
    const cleared = await fake.bff.app.inject({
      method: 'POST',
      url: '/api/ops/sign-out',
      headers: { ...https, cookie: `${OPS_COOKIE}=${OPS_TOKEN}` },
      payload: {},
    });
    expect(parseSetCookies(cleared.headers['set-cookie'])[0]!.attributes).toMatchObject({ secure: true, 'max-age': '0' });
  });
});

describe('BFF + real core over a socket: an operator enrols, signs in, signs out', () => {
  let clock = new Date('2026-11-27T09:00:00Z');
  let core: Awaited<ReturnType<typeof startRealCore>>;
  let bff: Awaited<ReturnType<typeof buildBff>>;
  let origin = '';
  beforeAll(async () => {
    core = await startRealCore({}, { now: () => clock });
    bff = await buildBff(core.url);
    await bff.app.listen({ host: '127.0.0.1', port: 0 });
    origin = `http://127.0.0.1:${(bff.app.server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    await bff.close();
    await core.close();
  });

  const send = (path: string, cookie: string, body?: object) =>
    fetch(`${origin}${path}`, {
      method: body ? 'POST' : 'GET',
      headers: { origin, cookie, ...(body ? { 'content-type': 'application/json' } : {}) },
      ...(body ? { body: JSON.stringify(body) } : {}),
    });

  it('keeps the operator in ops_token, which a customer cookie never replaces', async () => {
    const password = 'operator correct horse';
    const { email, token } = await createOperator(core.db, { email: 'op-socket@obmen.test', roles: ['admin'], actor: 'cli:test', now: clock });
    const started = await send('/api/ops/enrol/start', '', { token });
    expect(started.status).toBe(200);
    const { secret } = (await started.json()) as { secret: string };
    expect((await send('/api/ops/enrol/finish', '', { token, password, code: totpCode(secret, clock.getTime()) })).status).toBe(200);
    clock = new Date(clock.getTime() + TOTP_STEP_S * 1000);
    const signedIn = await send('/api/ops/sign-in', `${SESSION_COOKIE}=${CUSTOMER_TOKEN}`, { email, password, code: totpCode(secret, clock.getTime()) });
    expect(signedIn.status).toBe(200);
    expect(signedIn.headers.get(OPS_TOKEN_HEADER)).toBeNull();
    const [cookie] = parseSetCookies(signedIn.headers.getSetCookie());
    expect(cookie).toMatchObject({ name: OPS_COOKIE, attributes: { httponly: true, samesite: 'Strict' } });
    const jar = `${OPS_COOKIE}=${cookie!.value}`;
    const me = await send('/api/ops/me', jar);
    expect(me.status).toBe(200);
    expect(((await me.json()) as { operator: { email: string; roles: string[] } }).operator).toMatchObject({ email, roles: ['admin'] });
    // The ops cookie alone is no customer session.
    const check = await send('/api/auth/check', jar);
    expect(((await check.json()) as { user: { is_authenticated: boolean } }).user.is_authenticated).toBe(false);
    const out = await send('/api/ops/sign-out', jar, {});
    expect(out.status).toBe(200);
    expect(out.headers.get(OPS_SESSION_STATE_HEADER)).toBeNull();
    expect(parseSetCookies(out.headers.getSetCookie())[0]).toMatchObject({ name: OPS_COOKIE, value: '', attributes: { 'max-age': '0' } });
    expect((await send('/api/ops/me', jar)).status).toBe(404);
  });
});
