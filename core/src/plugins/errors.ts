import fp from 'fastify-plugin';
import { translate, type TApiError } from '@obmen/shared';
import { AppError } from '../errors.ts';

/** Every failure leaves as the shared error shape, localized; 5xx say nothing of internals. */
export default fp(
  async (app) => {
    app.setErrorHandler((err: unknown, request, reply) => {
      const known = toAppError(err);
      if (known.statusCode >= 500) request.log.error({ err }, 'request failed');
      const body: TApiError = {
        status: 'error',
        code: known.code,
        message: translate(request.locale, known.messageKey, known.vars),
        ...(known.fields ? { fields: known.fields } : {}),
      };
      return reply.code(known.statusCode).send(body);
    });
    app.setNotFoundHandler((_request, reply) => reply.code(404).send(errorBody(_request.locale, 'not_found', 'error.not_found')));
  },
  { name: 'errors', dependencies: ['locale'] },
);

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
