import fp from 'fastify-plugin';
import { anonymousUser, translate, type TApiError, type TUser } from '@obmen/shared';
import { AppError } from '../errors.ts';
import { isDatabaseUnavailable } from '../db/outage.ts';

/** Every failure leaves as the shared error shape, localized; 5xx say nothing of internals. */
export default fp(
  async (app) => {
    app.setErrorHandler((err: unknown, request, reply) => {
      const known = toAppError(err);
      // A database outage is logged once by the db layer (db/outage.ts), not once per request.
      if (known.statusCode >= 500 && !isDatabaseUnavailable(known)) request.log.error({ err }, 'request failed');
      const body: TApiError & { user?: TUser } = {
        status: 'error',
        code: known.code,
        message: translate(request.locale, known.messageKey, known.vars),
        ...(known.fields ? { fields: localizeFields(request.locale, known.fields) } : {}),
      };
      if (known.code === 'unauthorized') body.user = anonymousUser(request.locale);
      if (known.headers) reply.headers(known.headers);
      return reply.code(known.statusCode).send(body);
    });
    app.setNotFoundHandler((_request, reply) => reply.code(404).send(errorBody(_request.locale, 'not_found', 'error.not_found')));
  },
  { name: 'errors', dependencies: ['locale'] },
);

/** Shared schemas carry i18n keys as messages; a message that is no key passes unchanged. */
function localizeFields(locale: Parameters<typeof translate>[0], fields: Record<string, string>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, message] of Object.entries(fields)) out[name] = translate(locale, message);
  return out;
}

function errorBody(locale: Parameters<typeof translate>[0], code: string, key: string): TApiError {
  return { status: 'error', code, message: translate(locale, key) };
}

function toAppError(err: unknown): AppError {
  if (err instanceof AppError) return err;
  const status = (err as { statusCode?: number }).statusCode;
  // Fastify's own client errors (bad JSON, body too large, unsupported type) keep their status.
  if (typeof status === 'number' && status >= 400 && status < 500) {
    if (status === 429) return new AppError('rate_limited', 429, 'error.rate_limited');
    return new AppError('bad_request', status, 'error.validation');
  }
  return new AppError('internal', 500, 'error.internal');
}
