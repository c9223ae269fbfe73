import { afterAll, beforeAll, expect } from 'vitest';
import type { FastifyInstance } from 'fastify';
import { OPS_TOKEN_HEADER } from '@obmen/shared';
import type { Db } from '../src/db/index.ts';
import { build, type TEngine } from './helpers.ts';
import { createOperator } from '../src/domains/ops/service.ts';
import { totpCode, TOTP_STEP_S } from '../src/domains/security/totp.ts';
import { call, freshEmail } from './auth-helpers.ts';

export const OPERATOR_PASSWORD = 'operator correct horse';

/** A test's clock: what the app was built with (`now`) and how the test moves it on. */
export type TTestClock = { now: () => Date; tick: (ms: number) => void };

/** A clock standing at `start` until the test moves it. */
export function testClock(start = new Date('2026-11-27T09:00:00Z')): TTestClock {
  let at = start;
  return {
    now: () => at,
    tick: (ms) => {
      at = new Date(at.getTime() + ms);
    },
  };
}

export type TTestOperator = { email: string; secret: string; token: string; enrolToken: string };

/**
 * A new operator with these roles, created as the CLI does, enrolled through the link and signed
 * in with both factors: its session token and TOTP secret. Moves the clock one TOTP step (a code
 * counts once).
 */
export async function operatorWith(ctx: { app: FastifyInstance; db: Db }, clock: TTestClock, roles: string[]): Promise<TTestOperator> {
  const { email, token } = await createOperator(ctx.db, { email: freshEmail('op'), roles, actor: 'cli:test', now: clock.now() });
  const started = await call(ctx.app, '/api/ops/enrol/start', { payload: { token } });
  expect(started.statusCode).toBe(200);
  const secret = started.json().secret as string;
  const finished = await call(ctx.app, '/api/ops/enrol/finish', {
    payload: { token, password: OPERATOR_PASSWORD, code: totpCode(secret, clock.now().getTime()) },
  });
  expect(finished.statusCode).toBe(200);
  clock.tick(TOTP_STEP_S * 1000);
  const signedIn = await call(ctx.app, '/api/ops/sign-in', {
    payload: { email, password: OPERATOR_PASSWORD, code: totpCode(secret, clock.now().getTime()) },
  });
  expect(signedIn.statusCode).toBe(200);
  const session = signedIn.headers[OPS_TOKEN_HEADER];
  if (typeof session !== 'string') throw new Error('no ops token');
  return { email, secret, token: session, enrolToken: token };
}

/** The request options of a call made as this operator (the BFF's header from the ops cookie). */
export const asOperator = (token: string) => ({ headers: { [OPS_TOKEN_HEADER]: token } });

/** A fresh second factor for routes that ask for one (step-up): the next TOTP step's code. */
export async function stepUpOperator(app: FastifyInstance, clock: TTestClock, operator: TTestOperator): Promise<void> {
  clock.tick(TOTP_STEP_S * 1000);
  const answer = await call(app, '/api/ops/step-up', { payload: { code: totpCode(operator.secret, clock.now().getTime()) }, ...asOperator(operator.token) });
  expect(answer.statusCode).toBe(200);
}

/** The real app on `engine` for a file's tests, on a test clock: built before them, closed after. */
export function useOpsApp(engine: TEngine, clock: TTestClock = testClock()) {
  let built: Awaited<ReturnType<typeof build>> | undefined;
  beforeAll(async () => {
    built = await build(engine, {}, { now: clock.now });
  });
  afterAll(async () => {
    await built?.close();
  });
  const ready = () => {
    if (!built) throw new Error('the app is built in beforeAll');
    return built;
  };
  return {
    clock,
    get app() {
      return ready().app;
    },
    get db() {
      return ready().db;
    },
  };
}
