import type { FastifyReply, FastifyRequest } from 'fastify';
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import {
  LINK_BINDING_HEADER,
  REFERRAL_HEADER,
  readReferralCode,
  SESSION_CLEARED,
  SESSION_STATE_HEADER,
  SESSION_TOKEN_HEADER,
  ZConfirmationResponse,
  ZTokenParams,
} from '@obmen/shared';
import type { TConfig } from '../../config.ts';
import { AppError } from '../../errors.ts';
import { requireUser } from '../user/current.ts';
import { getWalletEnvelope } from '../wallets/service.ts';
import { unreadOf } from '../chat/service.ts';
import {
  changePassword,
  checkAuth,
  checkResetToken,
  confirmEmail,
  reportSignIn,
  logOut,
  previewLink,
  registerAccount,
  requestPasswordReset,
  requestSignInLink,
  resetPassword,
  sendConfirmationInstructions,
  signInByLink,
  signInByPassword,
  type TClient,
  type TLinkRequested,
  signInSecondFactorOptions,
  signInWithSecondFactor,
  passkeySignInOptions,
  signInByPasskey,
  type TPasswordSignIn,
  type TSignedIn,
} from './service.ts';
import { CALLS } from '@obmen/shared/calls';
import { schemaOf } from '../../lib/call-schema.ts';
import { relyingPartyOf } from '../security/passkeys.ts';

export function clientOf(request: FastifyRequest): TClient {
  const userAgent = request.headers['user-agent'];
  const refCode = readReferralCode(request.headers[REFERRAL_HEADER]);
  const linkBinding = request.headers[LINK_BINDING_HEADER];
  return {
    ip: request.ip,
    locale: request.locale,
    user: request.user,
    sessionId: request.sessionId,
    ...(userAgent ? { userAgent } : {}),
    ...(refCode ? { refCode } : {}),
    ...(typeof linkBinding === 'string' ? { linkBinding } : {}),
  };
}

/**
 * The token goes to the BFF in a header it strips; the body only says who is signed in. With
 * 2FA on a sign-in answers the code step's challenge instead, and no token.
 */
function signedIn(reply: FastifyReply, result: TSignedIn | TPasswordSignIn) {
  if (result.token !== null) reply.header(SESSION_TOKEN_HEADER, result.token);
  return result.state;
}

/** The binding of the browser that asked for a link goes to the BFF in a header it turns into a cookie. */
function linkRequested<T>(reply: FastifyReply, result: TLinkRequested<T>): T {
  reply.header(LINK_BINDING_HEADER, result.binding);
  return result.answer;
}

/** A malformed mailed-link token is the same "invalid or expired link" as a spent one. */
const tokenRoute = { paramsError: () => new AppError('invalid_token') };

/**
 * The account calls (spec §7 Auth). Every answer with a session carries `user`, `locale` and
 * `site_settings`. Mailed links land on site pages (shared AUTH_LINK_PATHS) which POST the
 * token here; no GET spends a token.
 */
const authRoutes: FastifyPluginAsyncZod<{ config: TConfig; now: () => Date }> = async (app, { config, now }) => {
  const deps = { db: app.db, config, mailer: app.mailer };
  const rp = relyingPartyOf(config.PUBLIC_URL);
  const tags = ['Auth'];

  // Signed in: the wallets and total balance travel with the state (envelope keys, spec §3).
  app.get(
    '/api/auth/check',
    {
      schema: {
        tags,
        summary: 'Who is signed in (user, locale, site settings, notifications, wallets, unread_msgs)',
        ...schemaOf(CALLS['GET /api/auth/check']),
      },
    },
    async (request) => {
      const state = await checkAuth(deps, clientOf(request));
      if (!request.user) return state;
      const [wallets, unread] = await Promise.all([getWalletEnvelope(app.db, request.user.id), unreadOf(app.db, request.user.id)]);
      return { ...state, ...wallets, unread_msgs: unread };
    },
  );

  app.post(
    '/api/auth/register',
    {
      schema: {
        tags,
        summary: 'Sign up (mails a confirmation link; the same answer for a known address)',
        ...schemaOf(CALLS['POST /api/auth/register']),
      },
    },
    async (request, reply) => linkRequested(reply, await registerAccount(deps, clientOf(request), request.body)),
  );

  app.post(
    '/api/auth/login_by_password',
    {
      schema: {
        tags,
        summary: "Sign in with a password (with 2FA on: answers the code step's challenge, no session yet)",
        ...schemaOf(CALLS['POST /api/auth/login_by_password']),
      },
    },
    async (request, reply) => signedIn(reply, await signInByPassword(deps, clientOf(request), request.body)),
  );

  app.post(
    '/api/auth/login_second_factor',
    {
      schema: {
        tags,
        summary: "Second step of a sign-in with 2FA on: the challenge and a TOTP or recovery code, or a passkey's assertion",
        ...schemaOf(CALLS['POST /api/auth/login_second_factor']),
      },
    },
    async (request, reply) => signedIn(reply, await signInWithSecondFactor(deps, clientOf(request), request.body, now())),
  );

  app.post(
    '/api/auth/login_second_factor/options',
    {
      schema: {
        tags,
        summary: "Second step of a sign-in with 2FA on: options for an assertion by the pending sign-in's user's passkey",
        ...schemaOf(CALLS['POST /api/auth/login_second_factor/options']),
      },
    },
    (request) => signInSecondFactorOptions(deps, clientOf(request), request.body, rp, now()),
  );

  app.post(
    '/api/auth/passkey/options',
    {
      schema: { tags, summary: 'Start a sign-in with a passkey: options for navigator.credentials.get', ...schemaOf(CALLS['POST /api/auth/passkey/options']) },
    },
    (request) => passkeySignInOptions(deps, clientOf(request), rp, now()),
  );

  app.post(
    '/api/auth/passkey',
    { schema: { tags, summary: 'Sign in with a passkey alone (a discoverable credential)', ...schemaOf(CALLS['POST /api/auth/passkey']) } },
    async (request, reply) => signedIn(reply, await signInByPasskey(deps, clientOf(request), request.body, now())),
  );

  app.post(
    '/api/auth/login',
    { schema: { tags, summary: 'Mail a sign-in link (passwordless)', ...schemaOf(CALLS['POST /api/auth/login']) } },
    async (request, reply) => linkRequested(reply, await requestSignInLink(deps, clientOf(request), request.body)),
  );

  // Mailed links that sign in: GET says whose link it is and whether this browser asked for it
  // (spends nothing); POST spends it, from another browser only with `confirm` (its button).
  const signInLinks = [
    { name: 'login', kind: 'sign_in', what: 'a sign-in link', spend: signInByLink },
    { name: 'confirm', kind: 'confirm_email', what: 'a confirmation link (confirms the email)', spend: confirmEmail },
  ] as const;
  for (const { name, kind, what, spend } of signInLinks) {
    const path = `/api/auth/${name}/:token`;
    app.get(
      path,
      {
        config: tokenRoute,
        schema: {
          tags,
          summary: `The masked address ${what} signs into, and whether this browser asked for it (spends nothing)`,
          params: ZTokenParams,
          ...schemaOf(CALLS[`GET /api/auth/${name}/{token}`]),
        },
      },
      (request) => previewLink(deps, clientOf(request), kind, request.params.token),
    );
    app.post(
      path,
      {
        config: tokenRoute,
        schema: {
          tags,
          summary: `Sign in by ${what}; opened in another browser than the one that asked, only with confirm`,
          params: ZTokenParams,
          ...schemaOf(CALLS[`POST /api/auth/${name}/{token}`]),
        },
      },
      async (request, reply) => signedIn(reply, await spend(deps, clientOf(request), request.params.token, request.body)),
    );
  }

  app.post('/api/auth/reset', { schema: { tags, summary: 'Mail a password reset link', ...schemaOf(CALLS['POST /api/auth/reset']) } }, (request) =>
    requestPasswordReset(deps, clientOf(request), request.body),
  );

  app.get(
    '/api/auth/reset/:token',
    {
      config: tokenRoute,
      schema: { tags, summary: 'Is this reset link still valid? (spends nothing)', params: ZTokenParams, ...schemaOf(CALLS['GET /api/auth/reset/{token}']) },
    },
    (request) => checkResetToken(deps, clientOf(request), request.params.token),
  );

  app.post(
    '/api/auth/reset/:token',
    {
      config: tokenRoute,
      schema: {
        tags,
        summary: 'Set a new password by a reset link (signs in)',
        params: ZTokenParams,
        ...schemaOf(CALLS['POST /api/auth/reset/{token}']),
      },
    },
    async (request, reply) => signedIn(reply, await resetPassword(deps, clientOf(request), request.params.token, request.body)),
  );

  app.post(
    '/api/auth/sign_in/report/:token',
    {
      config: tokenRoute,
      schema: {
        tags,
        summary: '"This wasn\'t me" from a new-sign-in mail: every session ends, withdrawals wait 24 hours, a password reset opens',
        params: ZTokenParams,
        ...schemaOf(CALLS['POST /api/auth/sign_in/report/{token}']),
      },
    },
    (request) => reportSignIn(deps, clientOf(request), request.params.token),
  );

  app.post(
    '/api/auth/change',
    {
      onRequest: requireUser,
      schema: {
        tags,
        summary: 'Change (or set the first) password; other sessions end',
        ...schemaOf(CALLS['POST /api/auth/change']),
      },
    },
    async (request, reply) => signedIn(reply, await changePassword(deps, clientOf(request), request.body)),
  );

  app.post('/api/auth/logout', { schema: { tags, summary: 'Sign out', ...schemaOf(CALLS['POST /api/auth/logout']) } }, async (request, reply) => {
    reply.header(SESSION_STATE_HEADER, SESSION_CLEARED);
    return logOut(deps, clientOf(request));
  });

  // The spec names a GET; it only mails the signed-in user's own address (rate-limited), and
  // the SameSite=Lax cookie is not sent on cross-site subresource requests. POST works too.
  app.route({
    method: ['GET', 'POST'],
    url: '/api/auth/send_confirmation_instructions',
    onRequest: requireUser,
    schema: { tags, summary: 'Mail the email confirmation link again', response: { 200: ZConfirmationResponse } },
    handler: async (request, reply) => linkRequested(reply, await sendConfirmationInstructions(deps, clientOf(request))),
  });
};

export default authRoutes;
