import fp from 'fastify-plugin';
import type { FastifyRequest } from 'fastify';
import { SESSION_CLEARED, SESSION_STATE_HEADER, SESSION_TOKEN_HEADER, isLocale } from '@obmen/shared';
import { findSession, type TAuthUser } from '../domains/auth/sessions.ts';
import { unauthorized } from '../errors.ts';
import { LOCALE_HEADER } from './locale.ts';

declare module 'fastify' {
  interface FastifyRequest {
    /** The signed-in user of `Authorization: Bearer <token>`, or null. */
    user: TAuthUser | null;
    sessionId: string | null;
  }
}

const BEARER = /^Bearer\s+(\S+)\s*$/i;

/**
 * Authenticates by `Authorization: Bearer <session token>` (the BFF turns the remember_token
 * cookie into it). A token that is presented but dead (unknown, expired, revoked) gets
 * `x-obmen-session: cleared` on the answer, so the BFF drops the cookie without reading bodies.
 */
export default fp(
  async (app) => {
    app.decorateRequest('user', null);
    app.decorateRequest('sessionId', null);
    app.addHook('onRequest', async (request, reply) => {
      const header = request.headers.authorization;
      if (header === undefined) return;
      const token = BEARER.exec(header)?.[1] ?? '';
      const session = await findSession(app.db, token);
      if (!session) {
        reply.header(SESSION_STATE_HEADER, SESSION_CLEARED);
        return;
      }
      request.user = session.user;
      request.sessionId = session.id;
      if (session.renewed) reply.header(SESSION_TOKEN_HEADER, token);
      // The browser's current choice (cookie → header) wins; otherwise the account's language.
      if (!isLocale(request.headers[LOCALE_HEADER])) request.locale = session.user.locale;
    });
  },
  { name: 'session', dependencies: ['db', 'locale'] },
);

/** preHandler for routes that need a signed-in user: 401 with an anonymous `user` otherwise. */
export async function requireUser(request: FastifyRequest): Promise<void> {
  if (!request.user) throw unauthorized();
}

/** The signed-in user of a route guarded by requireUser. */
export function currentUser(request: FastifyRequest): TAuthUser {
  if (!request.user) throw unauthorized();
  return request.user;
}
