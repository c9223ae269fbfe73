import type { FastifyReply, FastifyRequest } from 'fastify';
import { DEFAULT_LOCALE, LOCALE_COOKIE, isLocale, translate, type TApiError, type TI18nKey, type TLocale } from '@obmen/shared';

export function requestLocale(request: FastifyRequest): TLocale {
  const fromCookie = request.cookies?.[LOCALE_COOKIE];
  return isLocale(fromCookie) ? fromCookie : DEFAULT_LOCALE;
}

/** The shared error shape, localized for the caller. */
export function sendError(request: FastifyRequest, reply: FastifyReply, status: number, code: string, key: TI18nKey) {
  const body: TApiError = { status: 'error', code, message: translate(requestLocale(request), key) };
  return reply.code(status).type('application/json; charset=utf-8').send(body);
}
