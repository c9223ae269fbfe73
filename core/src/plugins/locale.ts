import fp from 'fastify-plugin';
import { DEFAULT_LOCALE, isLocale, type TLocale } from '@obmen/shared';

declare module 'fastify' {
  interface FastifyRequest {
    locale: TLocale;
  }
}

/** The BFF turns the i18n_redirected cookie into this header; other clients may send it too. */
export const LOCALE_HEADER = 'x-obmen-locale';

export default fp(
  async (app) => {
    app.decorateRequest('locale', DEFAULT_LOCALE);
    app.addHook('onRequest', async (request) => {
      const asked = request.headers[LOCALE_HEADER];
      if (isLocale(asked)) request.locale = asked;
    });
  },
  { name: 'locale' },
);
