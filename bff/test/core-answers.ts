import type { IncomingMessage } from 'node:http';
import type { z } from 'zod';
import { anonymousUser, type TArticle, type TLocale } from '@obmen/shared';
import { CALLS, checkAnswer, type TAnyCall } from '@obmen/shared/calls';
import { DEFAULT_SITE_SETTINGS } from '../../core/src/domains/site/service.ts';

/*
 * What a stand-in core answers to the calls the real site's pages make. The pages hold every
 * answer to its declaration in shared/src/calls.ts outside production (a mismatch is no answer:
 * the page falls over), so each stub answer is checked against the same declaration here, when
 * it is made: a stub that drifts from the contract fails by name, not as a page's 503.
 */

/** A stub answer to `call`, as sent on the wire, held to the call's declared answer. */
export function declaredAnswer<C extends TAnyCall>(call: C, answer: z.input<C['answer']>): z.input<C['answer']> {
  checkAnswer(call, answer, true);
  return answer;
}

/** The page's language as the core reads it from the BFF (x-obmen-locale), Russian by default. */
export function localeOf(req: IncomingMessage): TLocale {
  return req.headers['x-obmen-locale'] === 'en' ? 'en' : 'ru';
}

/** GET /api/auth/check for a visitor without a session, on a core with the default site settings. */
export function anonymousCheck(locale: TLocale = 'ru') {
  return declaredAnswer(CALLS['GET /api/auth/check'], { user: anonymousUser(locale), locale, site_settings: DEFAULT_SITE_SETTINGS });
}

/** GET /api/content/menu with no menu items and no footer images. */
export const EMPTY_MENU = declaredAnswer(CALLS['GET /api/content/menu'], {
  menus: { header_menu: [], footer_menu: [], main_menu: [] },
  footer_images: [],
});

/** GET /api/content/article/{name}: the article in the given language, updated at a fixed time. */
export function articleAnswer(article: Pick<TArticle, 'name' | 'locale' | 'title' | 'body_html'>) {
  return declaredAnswer(CALLS['GET /api/content/article/{name}'], { article: { ...article, updated_at: '2026-11-21T00:00:00Z' } });
}
