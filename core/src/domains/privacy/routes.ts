import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { DATA_EXPORT_RESPONSE, translate, ZDataExportParams } from '@obmen/shared';
import { CALLS } from '@obmen/shared/calls';
import { notFoundOf } from '../../errors.ts';
import { schemaOf } from '../../lib/call-schema.ts';
import type { TFileStorage } from '../../storage/index.ts';
import { currentUser, requireUser } from '../user/current.ts';
import { closeAccount, exportFile, privacyState, requestExport } from './service.ts';

const tags = ['Client'];

/** /settings/privacy: the data exports (asked for here, made by a job, downloaded for 24 hours) and closing the account. */
const privacyRoutes: FastifyPluginAsyncZod<{ now: () => Date; storage: TFileStorage }> = async (app, { now, storage }) => {
  app.get(
    '/api/user/privacy',
    {
      onRequest: requireUser,
      schema: { tags, summary: 'The data exports and whether the account may be closed', ...schemaOf(CALLS['GET /api/user/privacy']) },
    },
    (request) => privacyState(app.db, currentUser(request).id),
  );

  app.post(
    '/api/user/privacy/export',
    {
      onRequest: requireUser,
      schema: { tags, summary: 'Ask for an export of all the account’s data (made by a job)', ...schemaOf(CALLS['POST /api/user/privacy/export']) },
    },
    async (request) => {
      const userId = currentUser(request).id;
      await requestExport(app.db, userId, request.body.with_files, now());
      return { ...(await privacyState(app.db, userId)), message: translate(request.locale, 'privacy.export_requested') };
    },
  );

  app.get(
    '/api/user/privacy/export/:id',
    {
      onRequest: requireUser,
      config: { paramsError: () => notFoundOf('data_export') },
      schema: {
        tags,
        summary: 'Download a ready export (a ZIP of JSON and CSV)',
        params: ZDataExportParams,
        response: { 200: DATA_EXPORT_RESPONSE },
      },
    },
    async (request, reply) => {
      const file = await exportFile(app.db, currentUser(request).id, request.params.id, now());
      const object = await storage.get(file.key);
      if (!object) throw notFoundOf('data_export');
      return reply
        .header('content-type', 'application/zip')
        .header('content-length', object.size)
        .header('content-disposition', `attachment; filename="${file.name}"`)
        .header('x-content-type-options', 'nosniff')
        .header('cache-control', 'private, no-store')
        .send(object.body);
    },
  );

  app.post(
    '/api/user/close',
    {
      onRequest: requireUser,
      schema: { tags, summary: 'Close the account (every balance zero, nothing under way)', ...schemaOf(CALLS['POST /api/user/close']) },
    },
    async (request) => {
      await closeAccount(app.db, currentUser(request).id, request.body, now());
      return { status: 'ok' as const, message: translate(request.locale, 'privacy.closed') };
    },
  );
};

export default privacyRoutes;
