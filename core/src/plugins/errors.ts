import fp from 'fastify-plugin';
import { anonymousUser, isI18nKey, ROUTE_NOT_FOUND_HEADER, translate, type TApiError, type TLocale } from '@obmen/shared';
import type { FastifyRequest } from 'fastify';
import { AppError } from '../errors.ts';
import { isDatabaseUnavailable } from '../db/outage.ts';

/** Every failure leaves as the shared error shape, localized; 5xx say nothing of internals. */
export default fp(
  async (app) => {
    app.setErrorHandler((err: unknown, request, reply) => {
      const known = toAppError(err, request);
      // A database outage is logged once by the db layer (db/outage.ts), not once per request.
      if (known.statusCode >= 500 && !isDatabaseUnavailable(known)) request.log.error({ err }, 'request failed');
      const body: TApiError = {
        status: 'error',
        code: known.code,
        message: translate(request.locale, known.messageKey, known.vars),
        ...(known.fields ? { fields: localizeFields(request.locale, known.fields, known.vars) } : {}),
        ...known.data,
      };
      if (known.code === 'unauthorized') body.user = anonymousUser(request.locale);
      if (known.headers) reply.headers(known.headers);
      return reply.code(known.statusCode).send(body);
    });
    // No route of that method and path: a mistyped call, not a missing entity (those have codes of their own).
    app.setNotFoundHandler((request, reply) => {
      const body: TApiError = { status: 'error', code: 'route_not_found', message: translate(request.locale, 'api.route_not_found') };
      // The BFF counts these against its per-client 404 limit (a scan of made-up paths).
      return reply.code(404).header(ROUTE_NOT_FOUND_HEADER, '1').send(body);
    });
  },
  { name: 'errors', dependencies: ['locale'] },
);

/**
 * Shared schemas carry i18n keys as messages; a message that is no key passes unchanged. A field
 * message takes the error's vars too ("larger than {{mb}} MB" under the file's field).
 */
function localizeFields(locale: TLocale, fields: Record<string, string>, vars: Record<string, string | number>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, message] of Object.entries(fields)) out[name] = isI18nKey(message) ? translate(locale, message, vars) : message;
  return out;
}

function toAppError(err: unknown, request: FastifyRequest): AppError {
  if (err instanceof AppError) {
    // A path param that fails its schema names nothing that can exist (plugins/schemas.ts).
    const paramsError = request.routeOptions.config?.paramsError;
    if (paramsError && err.code === 'validation' && (err as { validationContext?: string }).validationContext === 'params') return paramsError();
    return err;
  }
  const status = (err as { statusCode?: number }).statusCode;
  // Fastify's own client errors (bad JSON, body too large, unsupported type) keep their status.
  if (typeof status === 'number' && status >= 400 && status < 500) {
    if (status === 429) return new AppError('rate_limited');
    return new AppError('bad_request', { status });
  }
  return new AppError('internal');
}
