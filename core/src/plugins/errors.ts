import fp from 'fastify-plugin';
import { anonymousUser, isI18nKey, translate, type TApiError, type TLocale, type TUser } from '@obmen/shared';
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
        ...known.data,
      };
      if (known.code === 'unauthorized') body.user = anonymousUser(request.locale);
      if (known.headers) reply.headers(known.headers);
      return reply.code(known.statusCode).send(body);
    });
    app.setNotFoundHandler((request, reply) => {
      const body: TApiError = { status: 'error', code: 'not_found', message: translate(request.locale, 'error.not_found') };
      return reply.code(404).send(body);
    });
  },
  { name: 'errors', dependencies: ['locale'] },
);

/** Shared schemas carry i18n keys as messages; a message that is no key passes unchanged. */
function localizeFields(locale: TLocale, fields: Record<string, string>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, message] of Object.entries(fields)) out[name] = isI18nKey(message) ? translate(locale, message) : message;
  return out;
}

function toAppError(err: unknown): AppError {
  if (err instanceof AppError) return err;
  const status = (err as { statusCode?: number }).statusCode;
  // Fastify's own client errors (bad JSON, body too large, unsupported type) keep their status.
  if (typeof status === 'number' && status >= 400 && status < 500) {
    if (status === 429) return new AppError('rate_limited');
    return new AppError('bad_request', { status });
  }
  return new AppError('internal');
}
