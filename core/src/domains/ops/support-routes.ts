import type { FastifyRequest } from 'fastify';
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { CALLS } from '@obmen/shared/calls';
import { schemaOf } from '../../lib/call-schema.ts';
import { OPS_TOKEN_HEADER, ZOk, ZOpsReportParams, ZOpsSupportFileParams, ZOpsSupportParams, STORED_FILE_RESPONSE } from '@obmen/shared';
import type { TConfig } from '../../config.ts';
import { isAddressIn, parseCidrList } from '../../lib/cidr.ts';
import { refuseOversizedUpload } from '../../storage/upload.ts';
import { savedReplies, supportFileOf } from '../chat/operator.ts';
import { sendFile, withMessage } from '../chat/routes.ts';
import type { TChatContext } from '../chat/service.ts';
import { opsSessionOf } from './guard.ts';
import { CHAT_REPORT_TARGET_MS, queueFigures, queueMetrics, queueTargetsOf } from './queues.ts';
import { dashboardMetrics, partsHealth, todayVolumes } from './dashboard.ts';
import { findOpsSession } from './service.ts';
import { deskClaim, deskList, deskRelease, deskReply, deskReports, deskResolveReport, deskSetStatus, deskThread, whoOf, type TDeskCaller } from './support.ts';

const tags = ['Ops'];
const LOOPBACK = parseCidrList('127.0.0.0/8,::1/128')!;

/** /metrics answers the machine itself, or a signed-in operator who may see the queues; anyone else finds nothing there. */
async function mayScrape(app: { db: Parameters<typeof findOpsSession>[0] }, request: FastifyRequest, now: Date): Promise<boolean> {
  if (isAddressIn(LOOPBACK, request.ip)) return true;
  const token = request.headers[OPS_TOKEN_HEADER];
  const session = typeof token === 'string' ? await findOpsSession(app.db, token, now) : null;
  return session?.operator.permissions.includes('queues.view') ?? false;
}

/** The support desk, the reported chats and the queues' clocks (/ops/support, /ops). */
const supportRoutes: FastifyPluginAsyncZod<{ config: TConfig; now: () => Date }> = async (app, { config, now }) => {
  const ctx: TChatContext = { db: app.db, storage: app.storage };
  const desk = { targetMs: config.SUPPORT_FIRST_RESPONSE_MS };
  const targets = queueTargetsOf(config);
  const caller = (request: FastifyRequest): TDeskCaller => ({ operator: opsSessionOf(request).operator, requestId: request.id, ip: request.ip, now: now() });
  const ok = { 200: ZOk };
  const support = { config: { ops: 'support.reply' as const } };

  app.get(
    '/api/ops/queues',
    { config: { ops: 'queues.view' }, schema: { tags, summary: 'Every queue: target, count, oldest age, overdue', ...schemaOf(CALLS['GET /api/ops/queues']) } },
    async () => ({ status: 'ok' as const, queues: await queueFigures(app.db, targets, now()) }),
  );

  const metrics = queueMetrics(() => queueFigures(app.db, targets, now()));
  // The home's other figures (volumes, health), by the functions /api/ops/dashboard calls.
  const home = dashboardMetrics(async () => ({
    volumes: await todayVolumes(app.db, now()),
    health: await partsHealth(app.db, () => app.jobs.status(), now()),
  }));
  app.get('/metrics', { schema: { hide: true } }, async (request, reply) => {
    if (!(await mayScrape(app, request, now()))) return reply.callNotFound();
    return reply.type(metrics.contentType).send(`${await metrics.text()}${await home.text()}`);
  });

  app.get(
    '/api/ops/support',
    {
      ...support,
      schema: { tags, summary: 'Support conversations, the longest waiting first, with claims', ...schemaOf(CALLS['GET /api/ops/support']) },
    },
    async (request) => ({ status: 'ok' as const, ...(await deskList(app.db, caller(request), request.query.status, desk)) }),
  );

  app.get(
    '/api/ops/support/replies',
    { ...support, schema: { tags, summary: 'Saved replies in ru and en', ...schemaOf(CALLS['GET /api/ops/support/replies']) } },
    async () => ({ status: 'ok' as const, replies: await savedReplies(app.db) }),
  );

  app.get(
    '/api/ops/support/:account',
    {
      ...support,
      schema: {
        tags,
        summary: 'One support conversation: its newest messages (a view, audited)',
        params: ZOpsSupportParams,
        ...schemaOf(CALLS['GET /api/ops/support/{account}']),
      },
    },
    async (request) => ({ status: 'ok' as const, ...(await deskThread(app.db, caller(request), request.params.account, desk)) }),
  );

  app.post(
    '/api/ops/support/:account/claim',
    {
      ...support,
      schema: {
        tags,
        summary: 'Claim a conversation (409 ops_claimed when a colleague holds it)',
        params: ZOpsSupportParams,
        ...schemaOf(CALLS['POST /api/ops/support/{account}/claim']),
      },
    },
    async (request) => ({ status: 'ok' as const, claim: await deskClaim(app.db, caller(request), request.params.account) }),
  );

  app.post(
    '/api/ops/support/:account/release',
    {
      ...support,
      schema: { tags, summary: 'Give a claimed conversation back', params: ZOpsSupportParams, ...schemaOf(CALLS['POST /api/ops/support/{account}/release']) },
    },
    async (request) => {
      await deskRelease(app.db, caller(request), request.params.account);
      return { status: 'ok' as const };
    },
  );

  app.post(
    '/api/ops/support/:account/reply',
    {
      ...support,
      preValidation: refuseOversizedUpload,
      schema: {
        tags,
        summary: 'Reply (multipart: text, file0..n); takes or refreshes the claim',
        params: ZOpsSupportParams,
        ...schemaOf(CALLS['POST /api/ops/support/{account}/reply']),
        // Files come as multipart, read by the upload path: the JSON declaration is not checked here.
        body: z.unknown().describe('multipart/form-data (text, file0..n) or JSON {text}'),
      },
    },
    async (request) => ({
      status: 'ok' as const,
      message: await withMessage(request, ({ fields, files }) =>
        deskReply(ctx, caller(request), request.params.account, typeof fields.text === 'string' ? fields.text : '', files),
      ),
    }),
  );

  for (const [action, status] of [
    ['close', 'closed'],
    ['reopen', 'open'],
  ] as const) {
    app.post(
      `/api/ops/support/:account/${action}`,
      {
        ...support,
        schema: { tags, summary: status === 'closed' ? 'Close a conversation' : 'Reopen a conversation', params: ZOpsSupportParams, response: ok },
      },
      async (request) => {
        await deskSetStatus(app.db, caller(request), request.params.account, status);
        return { status: 'ok' as const };
      },
    );
  }

  app.get(
    '/api/ops/support/:account/file/:file',
    {
      config: { ops: 'support.view_files' },
      schema: {
        tags,
        summary: "A customer's file of their support conversation (each view audited)",
        params: ZOpsSupportFileParams,
        response: { 200: STORED_FILE_RESPONSE },
      },
    },
    async (request, reply) => sendFile(reply, ctx, await supportFileOf(app.db, whoOf(caller(request)), request.params.account, request.params.file)),
  );

  app.get(
    '/api/ops/chat-reports',
    {
      config: { ops: 'chat.reports' },
      schema: { tags, summary: 'Reported private chats, oldest first, with their messages', ...schemaOf(CALLS['GET /api/ops/chat-reports']) },
    },
    async (request) => ({ status: 'ok' as const, target_ms: CHAT_REPORT_TARGET_MS, reports: await deskReports(app.db, caller(request)) }),
  );

  app.post(
    '/api/ops/chat-reports/:id/resolve',
    {
      config: { ops: 'chat.reports' },
      schema: {
        tags,
        summary: 'Resolve a report (audited with its outcome)',
        params: ZOpsReportParams,
        ...schemaOf(CALLS['POST /api/ops/chat-reports/{id}/resolve']),
      },
    },
    async (request) => {
      await deskResolveReport(app.db, caller(request), request.params.id, request.body);
      return { status: 'ok' as const };
    },
  );
};

export default supportRoutes;
