import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import {
  OPS_SESSION_STATE_HEADER,
  OPS_TOKEN_HEADER,
  SESSION_CLEARED,
  ZJsonLines,
  ZOpsAuditExportQuery,
  ZPasskeyParams,
  type TOpsOperator,
  type TOpsPermission,
} from '@obmen/shared';
import { auditPages, listAudit, writeAudit } from '../audit/service.ts';
import { opsSessionOf } from './guard.ts';
import { findOpsSession, finishEnrolment, operatorActor, setOperatorLocale, signIn, signOut, startEnrolment, stepUp, type TOperator } from './service.ts';
import { addOperatorPasskey, listOperatorPasskeys, operatorPasskeyOptions, opsSignInPasskeyOptions, removeOperatorPasskey } from './passkeys.ts';
import { relyingPartyOf } from '../security/passkeys.ts';
import { CALLS } from '@obmen/shared/calls';
import { schemaOf } from '../../lib/call-schema.ts';

const tags = ['Ops'];

const publicOperator = (operator: TOperator): TOpsOperator => ({
  email: operator.email,
  locale: operator.locale,
  roles: operator.roles,
  permissions: operator.permissions as TOpsPermission[],
});

const dayStart = (day: string | undefined) => (day === undefined ? undefined : new Date(`${day}T00:00:00Z`));

/** The back office's own calls: enrolment, sign-in and out, the operator, step-up, passkeys, the audit trail. */
const opsRoutes: FastifyPluginAsyncZod<{ now: () => Date; publicUrl: string }> = async (app, { now, publicUrl }) => {
  const rp = relyingPartyOf(publicUrl);

  app.post(
    '/api/ops/enrol/start',
    {
      config: { ops: null },
      schema: {
        tags,
        summary: "Starts an operator's enrolment: a TOTP secret for the link's operator",
        ...schemaOf(CALLS['POST /api/ops/enrol/start']),
      },
    },
    async (request) => ({ status: 'ok' as const, ...(await startEnrolment(app.db, request.body.token, now())) }),
  );

  app.post(
    '/api/ops/enrol/finish',
    {
      config: { ops: null },
      schema: { tags, summary: 'Finishes an enrolment: a password and a code of the new secret', ...schemaOf(CALLS['POST /api/ops/enrol/finish']) },
    },
    async (request) => {
      await finishEnrolment(app.db, { ...request.body, now: now(), locale: request.locale });
      return { status: 'ok' as const };
    },
  );

  app.post(
    '/api/ops/sign-in',
    {
      config: { ops: null },
      schema: {
        tags,
        summary: "Operator sign-in with password and second factor (a TOTP code or one of the operator's passkeys)",
        ...schemaOf(CALLS['POST /api/ops/sign-in']),
      },
    },
    async (request, reply) => {
      const token = await signIn(app.db, { ...request.body, now: now(), ip: request.ip });
      const session = await findOpsSession(app.db, token, now());
      reply.header(OPS_TOKEN_HEADER, token);
      return { status: 'ok' as const, operator: publicOperator(session!.operator) };
    },
  );

  app.post(
    '/api/ops/passkey/options',
    {
      config: { ops: null },
      schema: {
        tags,
        summary: 'The options of a passkey assertion for the sign-in, in place of the code',
        ...schemaOf(CALLS['POST /api/ops/passkey/options']),
      },
    },
    () => opsSignInPasskeyOptions(app.db, rp, now()),
  );

  app.get(
    '/api/ops/passkeys',
    { config: { ops: 'signed_in' }, schema: { tags, summary: "The signed-in operator's own passkeys", ...schemaOf(CALLS['GET /api/ops/passkeys']) } },
    (request) => listOperatorPasskeys(app.db, opsSessionOf(request)),
  );

  app.post(
    '/api/ops/passkeys/options',
    {
      config: { ops: 'signed_in', stepUp: true },
      schema: {
        tags,
        summary: "Start adding a passkey of the operator's own: the options for navigator.credentials.create",
        ...schemaOf(CALLS['POST /api/ops/passkeys/options']),
      },
    },
    (request) => operatorPasskeyOptions(app.db, rp, opsSessionOf(request), now()),
  );

  app.post(
    '/api/ops/passkeys',
    {
      config: { ops: 'signed_in', stepUp: true },
      schema: { tags, summary: "Keep a new passkey of the operator's own (audited)", ...schemaOf(CALLS['POST /api/ops/passkeys']) },
    },
    (request) => addOperatorPasskey(app.db, opsSessionOf(request), request.body, now(), { requestId: request.id, ip: request.ip }),
  );

  app.post(
    '/api/ops/passkeys/:id/remove',
    {
      config: { ops: 'signed_in', stepUp: true },
      schema: {
        tags,
        summary: "Remove one of the operator's own passkeys (audited)",
        params: ZPasskeyParams,
        ...schemaOf(CALLS['POST /api/ops/passkeys/{id}/remove']),
      },
    },
    (request) => removeOperatorPasskey(app.db, opsSessionOf(request), request.params.id, { requestId: request.id, ip: request.ip }),
  );

  app.post(
    '/api/ops/sign-out',
    { config: { ops: 'signed_in' }, schema: { tags, summary: 'Operator sign-out', ...schemaOf(CALLS['POST /api/ops/sign-out']) } },
    async (request, reply) => {
      await signOut(app.db, opsSessionOf(request), now());
      reply.header(OPS_SESSION_STATE_HEADER, SESSION_CLEARED);
      return { status: 'ok' as const };
    },
  );

  app.get(
    '/api/ops/me',
    { config: { ops: 'signed_in' }, schema: { tags, summary: 'The signed-in operator, roles and permissions', ...schemaOf(CALLS['GET /api/ops/me']) } },
    async (request) => ({
      status: 'ok' as const,
      operator: publicOperator(opsSessionOf(request).operator),
    }),
  );

  app.post(
    '/api/ops/locale',
    { config: { ops: 'signed_in' }, schema: { tags, summary: "The operator's language, kept per operator", ...schemaOf(CALLS['POST /api/ops/locale']) } },
    async (request) => {
      await setOperatorLocale(app.db, opsSessionOf(request), request.body.locale);
      return { status: 'ok' as const };
    },
  );

  app.post(
    '/api/ops/step-up',
    {
      config: { ops: 'signed_in' },
      schema: { tags, summary: 'The second factor again, for what needs a fresh one', ...schemaOf(CALLS['POST /api/ops/step-up']) },
    },
    async (request) => {
      await stepUp(app.db, opsSessionOf(request), request.body.code, now());
      return { status: 'ok' as const };
    },
  );

  app.get(
    '/api/ops/audit',
    {
      config: { ops: 'audit.view' },
      schema: { tags, summary: 'The audit trail, oldest first, with its hash chain', ...schemaOf(CALLS['GET /api/ops/audit']) },
    },
    async (request) => {
      const { actor, subject, action, from, to, after, before, order } = request.query;
      const rows = await listAudit(app.db, {
        actor,
        subject,
        action,
        from: dayStart(from),
        to: dayStart(to),
        afterId: after,
        beforeId: before,
        newestFirst: order === 'desc',
        limit: 200,
      });
      return { status: 'ok' as const, rows };
    },
  );

  app.get(
    '/api/ops/audit/export',
    {
      config: { ops: 'audit.view' },
      schema: {
        tags,
        summary: 'A period of the audit chain as JSON Lines, verifiable offline with `ops audit:verify <file>`',
        querystring: ZOpsAuditExportQuery,
        response: { 200: { content: { 'application/jsonl': { schema: ZJsonLines } } } },
      },
    },
    async (request, reply) => {
      const { from, to } = request.query;
      const session = opsSessionOf(request);
      const lines: string[] = [];
      for await (const page of auditPages(app.db, { from: dayStart(from), to: dayStart(to) })) for (const line of page) lines.push(JSON.stringify(line));
      // The export is itself a view of personal data: on the trail, after the rows it holds.
      await writeAudit(app.db, {
        actor: operatorActor(session.operator),
        action: 'audit.export',
        outcome: 'viewed',
        requestId: request.id,
        ip: request.ip,
        details: { from, to, rows: lines.length },
      });
      return reply
        .type('application/jsonl; charset=utf-8')
        .header('content-disposition', `attachment; filename="audit-${from}-${to}.jsonl"`)
        .header('cache-control', 'no-store')
        .send(lines.length ? `${lines.join('\n')}\n` : '');
    },
  );
};

export default opsRoutes;
