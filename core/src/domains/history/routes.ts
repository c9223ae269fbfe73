import type { FastifyReply } from 'fastify';
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { STATEMENT_RESPONSE, ZStatementQuery } from '@obmen/shared';
import { currentUser, requireUser } from '../user/current.ts';
import { readStatement, statementPeriod } from './statement.ts';
import { renderStatementPdf } from './statement-pdf.ts';

/** The account statement (/history): a PDF for a month or a period, made from the ledger. */
const historyRoutes: FastifyPluginAsyncZod<{ now: () => Date; publicUrl: string }> = async (app, { now, publicUrl }) => {
  app.get(
    '/api/history/statement',
    {
      onRequest: requireUser,
      config: { apiKey: 'read' },
      schema: {
        tags: ['Client'],
        summary: 'An account statement for a month or a period of up to a year (PDF: balances, movements, fees)',
        querystring: ZStatementQuery,
        response: { 200: STATEMENT_RESPONSE },
      },
    },
    async (request, reply) => {
      const at = now();
      const period = statementPeriod(request.query, at);
      const statement = await readStatement(app.db, currentUser(request).id, period, request.locale);
      const name = `obmen-statement-${statement.accountId}-${period.from.toISOString().slice(0, 10)}.pdf`;
      // A stream, not the schema's string: the raw reply, as stored files are sent.
      const raw: FastifyReply = reply;
      return raw
        .type('application/pdf')
        .header('content-disposition', `attachment; filename="${name}"`)
        .header('cache-control', 'private, no-store')
        .send(renderStatementPdf(statement, { url: publicUrl, generatedAt: at }));
    },
  );
};

export default historyRoutes;
