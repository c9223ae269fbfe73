import i18next, { type i18n, type TFunction } from 'i18next';
import { DEFAULT_LOCALE, DICTIONARIES, LOCALES, MISSING_KEY_MESSAGE, type TLocale } from '@obmen/shared';

/**
 * One i18next instance per locale, created once: a request never switches a shared instance's
 * language, so concurrent requests in different languages cannot leak into each other.
 */
const instances = new Map<TLocale, i18n>();

function createInstance(locale: TLocale): i18n {
  const instance = i18next.createInstance();
  void instance.init({
    lng: locale,
    fallbackLng: DEFAULT_LOCALE,
    resources: Object.fromEntries(LOCALES.map((code) => [code, { translation: DICTIONARIES[code] }])),
    keySeparator: false,
    nsSeparator: false,
    interpolation: { escapeValue: false },
    initAsync: false,
    saveMissing: true,
    missingKeyHandler: (_lngs, _ns, key) => console.warn(JSON.stringify({ type: 'i18n', message: MISSING_KEY_MESSAGE, key, locale })),
  });
  return instance;
}

export function getT(locale: TLocale): TFunction {
  let instance = instances.get(locale);
  if (!instance) {
    instance = createInstance(locale);
    instances.set(locale, instance);
  }
  return instance.t;
}
