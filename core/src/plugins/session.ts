import fp from 'fastify-plugin';
import { API_KEY_HEADER, SESSION_CLEARED, SESSION_STATE_HEADER, SESSION_TOKEN_HEADER, isLocale } from '@obmen/shared';
import { findSession } from '../domains/auth/sessions.ts';
import { LOCALE_HEADER } from './locale.ts';

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
      // A signed request of a bot's key is that key's alone (domains/apikeys/guard.ts), whatever cookie came along.
      if (header === undefined || request.headers[API_KEY_HEADER] !== undefined) return;
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
