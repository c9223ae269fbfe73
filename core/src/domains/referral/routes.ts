import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { HISTORY_CSV_MAX_ROWS, ZRecruitParams, ZRecruitResponse, translate } from '@obmen/shared';
import { notFoundOf } from '../../errors.ts';
import { sendCsv } from '../history/service.ts';
import { currentUser, requireUser } from '../user/current.ts';
import {
  BONUS_CSV_COLUMNS,
  bonusHistory,
  changeInvite,
  getInvite,
  listReferees,
  recruit,
  referralInfo,
  sendInvitations,
  type TReferralDeps,
} from './service.ts';
import { CALLS } from '@obmen/shared/calls';
import { csvSchemaOf, schemaOf } from '../../lib/call-schema.ts';

/** Referral (spec §7): invite codes, terms and totals, referees, bonus history, invitations by mail. */
const referralRoutes: FastifyPluginAsyncZod<{ publicUrl: string; now: () => Date }> = async (app, { publicUrl, now }) => {
  const tags = ['Referral'];
  const deps = (): TReferralDeps => ({ db: app.db, publicUrl, mailer: app.mailer });

  app.get(
    '/api/referral/invite',
    { onRequest: requireUser, schema: { tags, summary: 'The invite code and link, and every active code', ...schemaOf(CALLS['GET /api/referral/invite']) } },
    async (request) => ({ status: 'ok' as const, ...(await getInvite(deps(), currentUser(request).id)) }),
  );

  app.post(
    '/api/referral/invite',
    {
      onRequest: requireUser,
      schema: {
        tags,
        summary: 'Create a labelled invite code (label; up to 5) or retire one (retire)',
        ...schemaOf(CALLS['POST /api/referral/invite']),
      },
    },
    async (request) => {
      const { invite, created } = await changeInvite(deps(), currentUser(request).id, request.body);
      return { status: 'ok' as const, message: translate(request.locale, created ? 'referral.code_added' : 'referral.code_retired'), ...invite };
    },
  );

  app.get(
    '/api/referral/info',
    { onRequest: requireUser, schema: { tags, summary: 'The programme terms and the user bonus totals', ...schemaOf(CALLS['GET /api/referral/info']) } },
    async (request) => ({ status: 'ok' as const, ...(await referralInfo(app.db, currentUser(request).id, now())) }),
  );

  app.get(
    '/api/referral/list',
    {
      onRequest: requireUser,
      schema: { tags, summary: 'The user referees (masked e-mail), newest first', ...schemaOf(CALLS['GET /api/referral/list']) },
    },
    async (request) => ({ status: 'ok' as const, ...(await listReferees(app.db, currentUser(request).id, request.query, now())) }),
  );

  app.get(
    '/api/referral/recruit/:id',
    {
      onRequest: requireUser,
      config: { paramsError: () => notFoundOf('recruit') },
      schema: { tags, summary: 'One of the user referees, with earnings per month', params: ZRecruitParams, response: { 200: ZRecruitResponse } },
    },
    async (request) => ({ status: 'ok' as const, recruit: await recruit(app.db, currentUser(request).id, request.params.id, now()) }),
  );

  app.get(
    '/api/referral/bonus/history',
    {
      onRequest: requireUser,
      schema: {
        tags,
        summary: 'Bonuses per day and referee, never per trade (format=csv for a file)',
        ...csvSchemaOf(CALLS['GET /api/referral/bonus/history']),
      },
    },
    async (request, reply) => {
      const query = request.query;
      if (query.format === 'csv') {
        const page = await bonusHistory(app.db, currentUser(request).id, query, HISTORY_CSV_MAX_ROWS);
        return sendCsv(reply, 'referral-bonuses.csv', BONUS_CSV_COLUMNS, page.items);
      }
      return { status: 'ok' as const, ...(await bonusHistory(app.db, currentUser(request).id, query)) };
    },
  );

  app.post(
    '/api/referral/mailing',
    {
      onRequest: requireUser,
      schema: {
        tags,
        summary: 'Invite up to 10 addresses by mail, in the chosen language',
        ...schemaOf(CALLS['POST /api/referral/mailing']),
      },
    },
    async (request) => {
      const accepted = await sendInvitations(deps(), currentUser(request).id, request.body);
      return { status: 'ok' as const, accepted, message: translate(request.locale, 'referral.sent', { count: accepted }) };
    },
  );
};

export default referralRoutes;
