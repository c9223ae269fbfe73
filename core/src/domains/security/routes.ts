import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { SESSION_CLEARED, SESSION_STATE_HEADER, ZPasskeyParams, ZTokenParams, ZSessionParams, translate } from '@obmen/shared';
import { AppError, notFoundOf } from '../../errors.ts';
import { confirmEmailChange, getEmailState, reportEmailChange, requestEmailChange } from './email.ts';
import { currentUser, requireUser } from '../user/current.ts';
import { passkeyAssertionOptions, passkeyRegistrationOptions, relyingPartyOf } from './passkeys.ts';
import {
  disableTotp,
  enableTotp,
  enrolPasskey,
  getSecurityOverview,
  removePasskey,
  renewRecoveryCodes,
  revokeOtherSessions,
  revokeOwnSession,
  startTotpSetup,
} from './service.ts';
import { CALLS } from '@obmen/shared/calls';
import { schemaOf } from '../../lib/call-schema.ts';

/** /settings/security (two-factor, sessions, sign-in log) and /settings/bind-email. */
const securityRoutes: FastifyPluginAsyncZod<{ now?: () => Date; publicUrl: string }> = async (app, options) => {
  const tags = ['Auth'];
  const deps = { db: app.db, mailer: app.mailer, now: options.now ?? (() => new Date()) };
  const emailDeps = { db: app.db, mailer: app.mailer, publicUrl: options.publicUrl };
  const rp = relyingPartyOf(options.publicUrl);
  /** A malformed mailed-link token is the same "invalid or expired link" as a spent one. */
  const tokenRoute = { paramsError: () => new AppError('invalid_token') };

  app.get(
    '/api/security',
    {
      onRequest: requireUser,
      schema: { tags, summary: 'Two-factor state, live sessions, the last 20 sign-ins, the withdrawal hold', ...schemaOf(CALLS['GET /api/security']) },
    },
    (request) => getSecurityOverview(app.db, currentUser(request).id, request.sessionId),
  );

  app.post(
    '/api/security/totp/setup',
    {
      onRequest: requireUser,
      schema: {
        tags,
        summary: 'Start two-factor enrolment: a new TOTP secret, its otpauth URI and QR code',
        ...schemaOf(CALLS['POST /api/security/totp/setup']),
      },
    },
    (request) => startTotpSetup(app.db, currentUser(request)),
  );

  app.post(
    '/api/security/totp/enable',
    {
      onRequest: requireUser,
      schema: {
        tags,
        summary: 'Confirm enrolment with a code: two-factor on, ten recovery codes (shown once)',
        ...schemaOf(CALLS['POST /api/security/totp/enable']),
      },
    },
    (request) => enableTotp(deps, currentUser(request), request.body.code, request.locale),
  );

  app.post(
    '/api/security/totp/disable',
    {
      onRequest: requireUser,
      schema: { tags, summary: 'Turn two-factor off with a code (withdrawals then wait 24 hours)', ...schemaOf(CALLS['POST /api/security/totp/disable']) },
    },
    (request) => disableTotp(deps, currentUser(request), request.body, request.locale),
  );

  app.post(
    '/api/security/recovery_codes',
    {
      onRequest: requireUser,
      schema: { tags, summary: 'Ten new recovery codes for a code (the old ones stop working)', ...schemaOf(CALLS['POST /api/security/recovery_codes']) },
    },
    (request) => renewRecoveryCodes(deps, currentUser(request), request.body, request.locale),
  );

  app.post(
    '/api/security/passkeys/options',
    {
      onRequest: requireUser,
      schema: {
        tags,
        summary: 'Start adding a passkey: the options for navigator.credentials.create',
        ...schemaOf(CALLS['POST /api/security/passkeys/options']),
      },
    },
    (request) => passkeyRegistrationOptions(app.db, rp, currentUser(request), deps.now()),
  );

  app.post(
    '/api/security/passkeys',
    {
      onRequest: requireUser,
      schema: {
        tags,
        summary: 'Keep a new passkey (with the second factor when 2FA is on); withdrawals then wait 24 hours',
        ...schemaOf(CALLS['POST /api/security/passkeys']),
      },
    },
    (request) => enrolPasskey(deps, currentUser(request), request.body, request.locale),
  );

  app.post(
    '/api/security/passkeys/:id/remove',
    {
      onRequest: requireUser,
      config: { paramsError: () => notFoundOf('passkey') },
      schema: {
        tags,
        summary: 'Remove a passkey (with the second factor when 2FA is on)',
        params: ZPasskeyParams,
        ...schemaOf(CALLS['POST /api/security/passkeys/{id}/remove']),
      },
    },
    (request) => removePasskey(deps, currentUser(request), request.params.id, request.body, request.locale),
  );

  app.post(
    '/api/security/second_factor/options',
    {
      onRequest: requireUser,
      schema: {
        tags,
        summary: "The options of an assertion by one of the user's passkeys, in place of a code",
        ...schemaOf(CALLS['POST /api/security/second_factor/options']),
      },
    },
    (request) => passkeyAssertionOptions(app.db, rp, currentUser(request).id, deps.now()),
  );

  app.post(
    '/api/security/sessions/:id/revoke',
    {
      onRequest: requireUser,
      config: { paramsError: () => notFoundOf('session') },
      schema: { tags, summary: 'Sign one of your sessions out', params: ZSessionParams, ...schemaOf(CALLS['POST /api/security/sessions/{id}/revoke']) },
    },
    async (request, reply) => {
      await revokeOwnSession(app.db, currentUser(request).id, request.params.id);
      if (request.params.id === request.sessionId) reply.header(SESSION_STATE_HEADER, SESSION_CLEARED);
      return { status: 'ok' as const };
    },
  );

  app.post(
    '/api/security/sessions/revoke_others',
    { onRequest: requireUser, schema: { tags, summary: 'Sign out everywhere else', ...schemaOf(CALLS['POST /api/security/sessions/revoke_others']) } },
    async (request) => {
      const revoked = await revokeOtherSessions(app.db, currentUser(request).id, request.sessionId);
      return { status: 'ok' as const, message: translate(request.locale, 'security.others_signed_out', { count: revoked }), revoked };
    },
  );

  app.get(
    '/api/user/email',
    { onRequest: requireUser, schema: { tags, summary: 'The account e-mail and a change waiting for its link', ...schemaOf(CALLS['GET /api/user/email']) } },
    (request) => getEmailState(app.db, currentUser(request).id),
  );

  app.post(
    '/api/user/email',
    {
      onRequest: requireUser,
      schema: {
        tags,
        summary: 'Bind or change the e-mail: a link to the new address, a notice to the old one',
        ...schemaOf(CALLS['POST /api/user/email']),
      },
    },
    (request) => requestEmailChange(emailDeps, currentUser(request), request.body.email, request.locale),
  );

  app.post(
    '/api/user/email/confirm/:token',
    {
      config: tokenRoute,
      schema: {
        tags,
        summary: 'Confirm an e-mail change by the link sent to the new address',
        params: ZTokenParams,
        ...schemaOf(CALLS['POST /api/user/email/confirm/{token}']),
      },
    },
    (request) => confirmEmailChange(emailDeps, request.ip, request.params.token, request.locale),
  );

  app.post(
    '/api/user/email/report/:token',
    {
      config: tokenRoute,
      schema: {
        tags,
        summary: '"It was not me": stop or undo an e-mail change and sign every device out',
        params: ZTokenParams,
        ...schemaOf(CALLS['POST /api/user/email/report/{token}']),
      },
    },
    (request) => reportEmailChange(emailDeps, request.ip, request.params.token, request.locale),
  );
};

export default securityRoutes;
