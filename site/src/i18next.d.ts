import type ru from '@obmen/shared/i18n/ru.json';

// The islands' t() takes only keys of the dictionaries (flat and dotted: no key or namespace separator).
declare module 'i18next' {
  interface CustomTypeOptions {
    keySeparator: false;
    nsSeparator: false;
    resources: { translation: typeof ru };
  }
}
