import { expect } from 'vitest';
import type { FastifyInstance, LightMyRequestResponse } from 'fastify';
import { LINK_BINDING_HEADER, SESSION_TOKEN_HEADER } from '@obmen/shared';
import type { Db } from '../src/db/index.ts';

export const DEMO = { email: 'demo@obmen.local', password: 'obmen-demo-2026' };

let nextIp = 0;
/** A fresh client address per call site, so IP rate-limit buckets never leak between tests. */
export function freshIp(): string {
  nextIp++;
  return `10.${(nextIp >> 16) & 255}.${(nextIp >> 8) & 255}.${nextIp & 255}`;
}

let nextEmail = 0;
export function freshEmail(prefix = 'user'): string {
  nextEmail++;
  return `${prefix}.${Date.now().toString(36)}.${nextEmail}@example.com`;
}

export type TCall = {
  method?: 'GET' | 'POST';
  payload?: object | string;
  /** The client address as the BFF reports it (X-Forwarded-For from 127.0.0.1). */
  ip?: string;
  token?: string;
  locale?: 'ru' | 'en';
  headers?: Record<string, string>;
  remoteAddress?: string;
};

/** One request as the BFF makes it: client address in X-Forwarded-For, session as Bearer. */
export function call(app: FastifyInstance, url: string, options: TCall = {}): Promise<LightMyRequestResponse> {
  const headers: Record<string, string> = { 'x-forwarded-for': options.ip ?? freshIp(), ...options.headers };
  if (options.token) headers.authorization = `Bearer ${options.token}`;
  if (options.locale) headers['x-obmen-locale'] = options.locale;
  return app.inject({
    method: options.method ?? (options.payload === undefined ? 'GET' : 'POST'),
    url,
    headers,
    ...(options.payload === undefined ? {} : { payload: options.payload }),
    ...(options.remoteAddress ? { remoteAddress: options.remoteAddress } : {}),
  });
}

/** A form as the site sends it (urlencoded, English messages), signed in as `user` when given, with an Idempotency-Key when given. */
export function postForm(
  app: FastifyInstance,
  user: { token: string } | null,
  url: string,
  payload: Record<string, string>,
  idempotencyKey?: string,
): Promise<LightMyRequestResponse> {
  return app.inject({
    method: 'POST',
    url,
    headers: {
      ...(user ? { authorization: `Bearer ${user.token}` } : {}),
      'x-obmen-locale': 'en',
      'content-type': 'application/x-www-form-urlencoded',
      ...(idempotencyKey ? { 'idempotency-key': idempotencyKey } : {}),
    },
    payload: new URLSearchParams(payload).toString(),
  });
}

export function sessionToken(res: LightMyRequestResponse): string {
  const token = res.headers[SESSION_TOKEN_HEADER];
  if (typeof token !== 'string') throw new Error(`no session token in answer ${res.statusCode} ${res.body}`);
  return token;
}

/**
 * The headers of the browser that asked for a link: its binding (which the BFF keeps in the
 * link_binding cookie and sends back), so spending the link there signs in at once.
 */
export function sameBrowser(linkRequest: LightMyRequestResponse): Record<string, string> {
  const binding = linkRequest.headers[LINK_BINDING_HEADER];
  if (typeof binding !== 'string') throw new Error(`no link binding in answer ${linkRequest.statusCode} ${linkRequest.body}`);
  return { [LINK_BINDING_HEADER]: binding };
}

export type TMailRow = { id: string; kind: string; to_address: string; subject: string; text_body: string; html_body: string; locale: string };

export async function mailsTo(db: Db, email: string): Promise<TMailRow[]> {
  return db.query<TMailRow>(
    'SELECT id::text, kind, to_address, subject, text_body, html_body, locale FROM mail_outbox WHERE lower(to_address) = lower($1) ORDER BY id',
    [email],
  );
}

export async function lastMailTo(db: Db, email: string): Promise<TMailRow> {
  const mails = await mailsTo(db, email);
  const last = mails.at(-1);
  if (!last) throw new Error(`no mail to ${email}`);
  return last;
}

/** The token of the first site link in a mail: /login?token=, /login?confirm=, /reset-password?token=. */
export function linkToken(mail: TMailRow): string {
  const match = /(?:token|confirm)=([A-Za-z0-9_-]{43})/.exec(mail.text_body);
  if (!match) throw new Error(`no link in mail: ${mail.text_body}`);
  return match[1]!;
}

/** Signs up through the mailed confirmation link and returns the session token. */
export async function signUp(app: FastifyInstance, db: Db, email: string, password: string, locale: 'ru' | 'en' = 'ru'): Promise<string> {
  const res = await call(app, '/api/auth/register', { payload: { email, password }, locale });
  if (res.statusCode !== 200) throw new Error(`register ${res.statusCode} ${res.body}`);
  const confirm = await call(app, `/api/auth/confirm/${linkToken(await lastMailTo(db, email))}`, { method: 'POST', headers: sameBrowser(res) });
  return sessionToken(confirm);
}

export async function logIn(app: FastifyInstance, email: string, password: string): Promise<string> {
  return sessionToken(await call(app, '/api/auth/login_by_password', { payload: { email, password } }));
}

/** An answer that refuses: its HTTP status and its whole body (code, message, and fields when it names any). */
export function expectRefusal(
  res: LightMyRequestResponse,
  statusCode: number,
  refusal: { code: string; message: string; fields?: Record<string, string> },
): void {
  expect(res.statusCode, res.body).toBe(statusCode);
  expect(res.json()).toEqual({ status: 'error', ...refusal });
}
