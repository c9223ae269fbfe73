import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import {
  SESSION_CLEARED,
  SESSION_STATE_HEADER,
  SESSION_TOKEN_HEADER,
  ZChangePasswordBody,
  ZEmailBody,
  ZLoginByPasswordBody,
  ZRegisterBody,
  ZResetPasswordBody,
  ZTokenParams,
} from '@obmen/shared';
import type { TConfig } from '../../config.ts';
import { parseInput } from '../../validation.ts';
import { AppError } from '../../errors.ts';
import { requireUser } from '../user/current.ts';
import { getWalletEnvelope } from '../wallets/service.ts';
import {
  changePassword,
  checkAuth,
  checkResetToken,
  confirmEmail,
  logOut,
  registerAccount,
  requestPasswordReset,
  requestSignInLink,
  resetPassword,
  sendConfirmationInstructions,
  signInByLink,
  signInByPassword,
  type TClient,
  type TSignedIn,
} from './service.ts';

export function clientOf(request: FastifyRequest): TClient {
  const userAgent = request.headers['user-agent'];
  return { ip: request.ip, locale: request.locale, user: request.user, sessionId: request.sessionId, ...(userAgent ? { userAgent } : {}) };
}

/** The token goes to the BFF in a header it strips; the body only says who is signed in. */
function signedIn(reply: FastifyReply, result: TSignedIn) {
  reply.header(SESSION_TOKEN_HEADER, result.token);
  return result.state;
}

/** A mailed link's token; a malformed one is the same "invalid or expired link" as a spent one. */
function tokenOf(request: FastifyRequest): string {
  try {
    return parseInput(ZTokenParams, request.params).token;
  } catch {
    throw new AppError('invalid_token');
  }
}

/**
 * The account calls (spec §7 Auth). Every answer with a session carries `user`, `locale` and
 * `site_settings`; errors are `{status:'error', code, message, fields?}`. Mailed links land on
 * site pages (shared AUTH_LINK_PATHS) which POST the token here; no GET spends a token.
 */
const authRoutes: FastifyPluginAsync<{ config: TConfig }> = async (app, { config }) => {
  const deps = { db: app.db, config, mailer: app.mailer };

  // Signed in: the wallets and total balance travel with the state (envelope keys, spec §3).
  app.get('/api/auth/check', async (request) => {
    const state = await checkAuth(deps, clientOf(request));
    return request.user ? { ...state, ...(await getWalletEnvelope(app.db, request.user.id)) } : state;
  });

  app.post('/api/auth/register', (request) => registerAccount(deps, clientOf(request), parseInput(ZRegisterBody, request.body)));

  app.post('/api/auth/login_by_password', async (request, reply) =>
    signedIn(reply, await signInByPassword(deps, clientOf(request), parseInput(ZLoginByPasswordBody, request.body))),
  );

  app.post('/api/auth/login', (request) => requestSignInLink(deps, clientOf(request), parseInput(ZEmailBody, request.body)));

  app.post('/api/auth/login/:token', async (request, reply) => signedIn(reply, await signInByLink(deps, clientOf(request), tokenOf(request))));

  app.post('/api/auth/confirm/:token', async (request, reply) => signedIn(reply, await confirmEmail(deps, clientOf(request), tokenOf(request))));

  app.post('/api/auth/reset', (request) => requestPasswordReset(deps, clientOf(request), parseInput(ZEmailBody, request.body)));

  app.get('/api/auth/reset/:token', (request) => checkResetToken(deps, clientOf(request), tokenOf(request)));

  app.post('/api/auth/reset/:token', async (request, reply) => {
    const token = tokenOf(request);
    return signedIn(reply, await resetPassword(deps, clientOf(request), token, parseInput(ZResetPasswordBody, request.body)));
  });

  app.post('/api/auth/change', { preHandler: requireUser }, async (request, reply) =>
    signedIn(reply, await changePassword(deps, clientOf(request), parseInput(ZChangePasswordBody, request.body))),
  );

  app.post('/api/auth/logout', async (request, reply) => {
    reply.header(SESSION_STATE_HEADER, SESSION_CLEARED);
    return logOut(deps, clientOf(request));
  });

  // The spec names a GET; it only mails the signed-in user's own address (rate-limited), and
  // the SameSite=Lax cookie is not sent on cross-site subresource requests. POST works too.
  app.route({
    method: ['GET', 'POST'],
    url: '/api/auth/send_confirmation_instructions',
    preHandler: requireUser,
    handler: (request) => sendConfirmationInstructions(deps, clientOf(request)),
  });
};

export default authRoutes;
