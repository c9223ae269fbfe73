import { z } from 'zod';
import ru from '../i18n/ru.json' with { type: 'json' };
import en from '../i18n/en.json' with { type: 'json' };
import { DEFAULT_LOCALE, isLocale, type TLocale } from './constants.ts';
import { localizeVars } from './format.ts';
export { MISSING_KEY_MESSAGE } from './constants.ts';

const KEY = /^[a-z0-9_-]+(\.[a-z0-9_-]+)*$/;

/** Flat dotted keys to non-empty strings: nested objects are a mistake, not a style. */
export const ZDictionary = z.record(z.string().regex(KEY, 'i18n keys are flat and dotted'), z.string().min(1));
export type TDictionary = z.infer<typeof ZDictionary>;

function validateDictionaries(raw: Record<TLocale, unknown>): Record<TLocale, TDictionary> {
  const parsed = {
    ru: ZDictionary.parse(raw.ru),
    en: ZDictionary.parse(raw.en),
  };
  const ruKeys = Object.keys(parsed.ru);
  const enKeys = new Set(Object.keys(parsed.en));
  const onlyRu = ruKeys.filter((key) => !enKeys.has(key));
  const onlyEn = [...enKeys].filter((key) => !(key in parsed.ru));
  if (onlyRu.length || onlyEn.length) {
    throw new Error(`i18n dictionaries differ: only ru ${onlyRu.join(', ')}; only en ${onlyEn.join(', ')}`);
  }
  return parsed;
}

export const DICTIONARIES: Record<TLocale, TDictionary> = validateDictionaries({ ru, en });

/** Every key of the dictionaries (ru and en hold the same set, checked above). */
export type TI18nKey = keyof typeof ru;

export function isI18nKey(key: string): key is TI18nKey {
  return Object.hasOwn(DICTIONARIES[DEFAULT_LOCALE], key);
}

export function pickLocale(value: unknown): TLocale {
  return isLocale(value) ? value : DEFAULT_LOCALE;
}

/**
 * A tiny translator for code that must not pull i18next in (core mails, BFF errors).
 * `{{name}}` placeholders are replaced from `vars`; decimal amounts among them are written the
 * locale's way (localizeVars), so core's messages and refusals read "1 234,50" in Russian.
 */
export function translate(locale: TLocale, key: TI18nKey, vars: Record<string, string | number> = {}): string {
  const template = DICTIONARIES[locale][key] ?? DICTIONARIES[DEFAULT_LOCALE][key];
  if (template === undefined) return key;
  const shown = localizeVars(vars, locale);
  return template.replace(/\{\{\s*(\w+)\s*\}\}/g, (_, name: string) => String(shown[name] ?? ''));
}
