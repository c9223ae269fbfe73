import { siteLog } from './server-log.ts';
import { DICTIONARIES, MISSING_KEY_MESSAGE, isI18nKey, translate, type TI18nKey, type TLocale } from '@obmen/shared';
import { CLIENT_MESSAGE_KEYS } from './client-i18n.ts';

/** What pages get as `Astro.locals.t`: a key (flat, dotted) and its `{{name}}` values. */
export type TTranslate = (key: TI18nKey, vars?: Record<string, string | number>) => string;

const translators = new Map<TLocale, TTranslate>();

/**
 * The server's translator: the shared dictionaries and `translate()`, the same as core's, with
 * the fallback to the default language. Not i18next: the dictionaries are flat with no plurals
 * or nesting, and i18next's t() was about a third of the CPU of rendering a page. A missing key
 * is reported, as the islands' i18next does in the browser.
 */
export function getT(locale: TLocale): TTranslate {
  let t = translators.get(locale);
  if (!t) {
    t = (key, vars) => {
      if (isI18nKey(key)) return translate(locale, key, vars);
      siteLog.warn({ type: 'i18n', key, locale }, MISSING_KEY_MESSAGE);
      return key;
    };
    translators.set(locale, t);
  }
  return t;
}

/**
 * The strings the layout ships to browser code, as templates: their `{{name}}` placeholders are
 * filled in the browser (clientMessage), so they must not go through `t`, which fills them now.
 */
export function clientMessageTemplates(locale: TLocale): Record<string, string> {
  return Object.fromEntries(CLIENT_MESSAGE_KEYS.map((key) => [key, DICTIONARIES[locale][key] ?? DICTIONARIES.ru[key] ?? key]));
}
