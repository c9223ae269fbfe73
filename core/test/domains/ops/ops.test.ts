import type { RouteOptions } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OPS_API_PREFIX, OPS_PERMISSIONS, OPS_SESSION_STATE_HEADER, OPS_TOKEN_HEADER } from '@obmen/shared';
import { build, ENGINES } from '../../helpers.ts';
import { call, freshEmail, signUp } from '../../auth-helpers.ts';
import { asOperator, OPERATOR_PASSWORD as PASSWORD, operatorWith as operatorWithRoles } from '../../ops-helpers.ts';
import { totpCode, TOTP_STEP_S } from '../../../src/domains/security/totp.ts';
import { verifyAuditChain } from '../../../src/domains/audit/service.ts';
import { createOperator } from '../../../src/domains/ops/service.ts';

describe.each(ENGINES)('the back office door on %s', (engine) => {
  let ctx: Awaited<ReturnType<typeof build>>;
  let clock = new Date('2026-11-27T09:00:00Z');
  const routes: Array<{ method: string; url: string; ops: unknown }> = [];
  const tick = (ms: number) => {
    clock = new Date(clock.getTime() + ms);
  };

  beforeAll(async () => {
    ctx = await build(
      engine,
      {},
      {
        now: () => clock,
        onRoute: (route: RouteOptions) => {
          if (!route.url.startsWith(OPS_API_PREFIX)) return;
          for (const method of [route.method].flat()) if (method !== 'HEAD') routes.push({ method, url: route.url, ops: route.config?.ops });
        },
      },
    );
  });
  afterAll(async () => {
    await ctx?.close();
  });

  const clockOf = { now: () => clock, tick };
  const operatorWith = (roles: string[]) => operatorWithRoles(ctx, clockOf, roles);
  const send = (route: { method: string; url: string }, extra: Parameters<typeof call>[2] = {}) =>
    call(ctx.app, route.url, { method: route.method as 'GET' | 'POST', ...(route.method === 'POST' ? { payload: {} } : {}), ...extra });
  const deniedRows = async (email: string) =>
    (await ctx.db.query<{ n: number }>(`SELECT count(*)::int AS n FROM operator_audit WHERE operator LIKE $1 AND outcome = 'denied'`, [`%:${email}`]))[0]!.n;

  it('the database holds exactly the permissions routes and answers may name', async () => {
    const rows = await ctx.db.query<{ name: string }>('SELECT name FROM ops_permissions');
    expect(rows.map((row) => row.name).sort()).toEqual([...OPS_PERMISSIONS].sort());
  });

  it('every /api/ops route declares its access; each one hides from strangers and customers and refuses operators without its permission', async () => {
    expect(routes.length).toBeGreaterThanOrEqual(7);
    expect(routes.filter((route) => route.ops === undefined)).toEqual([]);
    const customer = await signUp(ctx.app, ctx.db, freshEmail('cust'), 'correct horse battery', 'en');
    const content = await operatorWith(['content']);
    // Content's own permission: refused to support instead.
    const support = await operatorWith(['support']);
    const admin = await operatorWith(['admin', 'support', 'compliance', 'finance', 'content']);
    // Sign-out last: it ends the sessions the other calls use.
    const guarded = routes.filter((r) => r.ops !== null).sort((a, b) => Number(a.url.endsWith('/sign-out')) - Number(b.url.endsWith('/sign-out')));
    for (const route of guarded) {
      for (const who of [{}, { token: customer }]) {
        const res = await send(route, who);
        expect({ route, status: res.statusCode, code: res.json().code }).toMatchObject({ status: 404, code: 'route_not_found' });
      }
      const outsider = route.ops === 'content.publish' ? support : content;
      const before = await deniedRows(outsider.email);
      const refused = await send(route, asOperator(outsider.token));
      if (route.ops === 'signed_in' || route.ops === 'queues.view') {
        expect({ route, status: refused.statusCode }).not.toMatchObject({ status: 403 });
      } else {
        expect({ route, status: refused.statusCode, code: refused.json().code }).toMatchObject({ status: 403, code: 'ops_forbidden' });
        expect(await deniedRows(outsider.email)).toBe(before + 1);
      }
      const allowed = await send(route, asOperator(admin.token));
      expect([403, 404], `${route.method} ${route.url} answered ${allowed.statusCode} ${allowed.body}`).not.toContain(allowed.statusCode);
    }
    expect(await verifyAuditChain(ctx.db)).toMatchObject({ intact: true });
  });

  it("an operator's language starts as the enrolment page's, is kept when changed, and the core answers in it", async () => {
    const { email, token } = await createOperator(ctx.db, { email: freshEmail('lang'), roles: ['support'], actor: 'cli:test', now: clock });
    const secret = (await call(ctx.app, '/api/ops/enrol/start', { payload: { token } })).json().secret as string;
    await call(ctx.app, '/api/ops/enrol/finish', { payload: { token, password: PASSWORD, code: totpCode(secret, clock.getTime()) }, locale: 'en' });
    tick(TOTP_STEP_S * 1000);
    const signedIn = await call(ctx.app, '/api/ops/sign-in', { payload: { email, password: PASSWORD, code: totpCode(secret, clock.getTime()) } });
    expect(signedIn.json().operator.locale).toBe('en');
    const session = asOperator(signedIn.headers[OPS_TOKEN_HEADER] as string);
    expect((await call(ctx.app, '/api/ops/locale', { payload: { locale: 'ru' }, ...session })).statusCode).toBe(200);
    expect((await call(ctx.app, '/api/ops/me', session)).json().operator.locale).toBe('ru');
    expect((await call(ctx.app, '/api/ops/audit', session)).json().message).toBe('У вашей роли нет права на это действие.');
    expect((await call(ctx.app, '/api/ops/locale', { payload: { locale: 'de' }, ...session })).statusCode).toBe(400);
  });

  it('an enrolment link works once; a wrong code or password is one answer, audited; sessions end when idle, at 8 hours and at sign-out', async () => {
    const op = await operatorWith(['support']);
    expect((await call(ctx.app, '/api/ops/enrol/start', { payload: { token: op.enrolToken } })).json()).toMatchObject({ code: 'invalid_token' });

    tick(TOTP_STEP_S * 1000);
    const wrongCode = await call(ctx.app, '/api/ops/sign-in', { payload: { email: op.email, password: PASSWORD, code: '000000' }, locale: 'en' });
    const wrongPassword = await call(ctx.app, '/api/ops/sign-in', {
      payload: { email: op.email, password: 'nope nope nope', code: totpCode(op.secret, clock.getTime()) },
      locale: 'en',
    });
    for (const res of [wrongCode, wrongPassword])
      expect({ status: res.statusCode, body: res.json() }).toMatchObject({
        status: 401,
        body: { code: 'ops_sign_in_failed', message: 'Wrong email, password or code.' },
      });
    expect(await deniedRows(op.email)).toBe(2);

    const me = await call(ctx.app, '/api/ops/me', asOperator(op.token));
    expect(me.json()).toMatchObject({ operator: { email: op.email, roles: ['support'], permissions: expect.arrayContaining(['support.reply']) } });

    tick(14 * 60_000);
    expect((await call(ctx.app, '/api/ops/me', asOperator(op.token))).statusCode).toBe(200);
    tick(15 * 60_000 + 1000);
    const idle = await call(ctx.app, '/api/ops/me', asOperator(op.token));
    expect(idle.statusCode).toBe(404);
    expect(idle.headers[OPS_SESSION_STATE_HEADER]).toBe('cleared');

    const again = await operatorWith(['support']);
    // Used every 10 minutes, never idle: alive for 8 hours, then gone.
    const statuses: number[] = [];
    for (let i = 0; i < 49; i++) {
      tick(10 * 60_000);
      statuses.push((await call(ctx.app, '/api/ops/me', asOperator(again.token))).statusCode);
    }
    expect(statuses).toEqual([...Array<number>(48).fill(200), 404]);

    const third = await operatorWith(['support']);
    expect((await call(ctx.app, '/api/ops/sign-out', { method: 'POST', ...asOperator(third.token) })).statusCode).toBe(200);
    expect((await call(ctx.app, '/api/ops/me', asOperator(third.token))).statusCode).toBe(404);
  });
});

describe('the back office from outside OPS_ALLOWED_IPS', () => {
  let ctx: Awaited<ReturnType<typeof build>>;
  beforeAll(async () => {
    ctx = await build('pglite', { OPS_ALLOWED_IPS: '10.0.0.0/8, fd00::/8' });
  });
  afterAll(async () => {
    await ctx?.close();
  });

  it('answers 404 to every address but the allowed networks', async () => {
    const body = { email: 'nobody@example.com', password: 'whatever it is', code: '123456' };
    const outside = await call(ctx.app, '/api/ops/sign-in', { payload: body, ip: '203.0.113.9' });
    expect({ status: outside.statusCode, code: outside.json().code }).toEqual({ status: 404, code: 'route_not_found' });
    const inside = await call(ctx.app, '/api/ops/sign-in', { payload: body, ip: '10.20.30.40' });
    expect({ status: inside.statusCode, code: inside.json().code }).toEqual({ status: 401, code: 'ops_sign_in_failed' });
  });
});
