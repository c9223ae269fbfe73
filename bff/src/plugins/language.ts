import fp from 'fastify-plugin';
import { LOCALE_COOKIE, LOCALE_COOKIE_MAX_AGE_S, REQUEST_ID_HEADER, ZLangBody } from '@obmen/shared';
import { sendError } from '../errors.ts';
import { applySessionHeaders, forwardSession } from '../session.ts';

/**
 * POST /api/lang {lang}: the core stores the choice on a signed-in user; the BFF records it
 * in the i18n_redirected cookie for everyone (spec §4 and §9: 365 days).
 */
export default fp(
  async (app) => {
    app.post('/api/lang', async (request, reply) => {
      const parsed = ZLangBody.safeParse(request.body);
      if (!parsed.success) return sendError(request, reply, 400, 'validation', 'error.validation');
      const { lang } = parsed.data;
      const headers: Record<string, string> = {
        'content-type': 'application/json',
        'x-obmen-locale': lang,
        'x-forwarded-for': request.ip,
        [REQUEST_ID_HEADER]: request.id,
      };
      forwardSession(request, headers);
      let answer;
      let body: string;
      try {
        answer = await app.core.request({ path: '/api/lang', method: 'POST', headers, body: JSON.stringify({ lang }) });
        body = await answer.body.text();
      } catch (err) {
        const timedOut = String((err as { code?: string }).code).includes('TIMEOUT');
        request.log.warn({ code: (err as { code?: string }).code }, 'core unreachable for /api/lang');
        return timedOut
          ? sendError(request, reply, 504, 'upstream_timeout', 'error.upstream_timeout')
          : sendError(request, reply, 503, 'upstream_unavailable', 'error.upstream_unavailable');
      }
      const answerHeaders = { ...answer.headers };
      applySessionHeaders(answerHeaders, request);
      const setCookie = answerHeaders['set-cookie'];
      if (setCookie) reply.header('set-cookie', setCookie);
      if (answer.statusCode < 400) {
        reply.setCookie(LOCALE_COOKIE, lang, {
          path: '/',
          maxAge: LOCALE_COOKIE_MAX_AGE_S,
          sameSite: 'lax',
          secure: request.https,
        });
      }
      return reply.code(answer.statusCode).type('application/json; charset=utf-8').send(body);
    });
  },
  { name: 'language', dependencies: ['@fastify/cookie', 'upstream'] },
);
