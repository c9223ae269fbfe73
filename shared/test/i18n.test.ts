import { afterEach, describe, expect, it, vi } from 'vitest';
import ruRaw from '../i18n/ru.json' with { type: 'json' };
import enRaw from '../i18n/en.json' with { type: 'json' };
import { DEFAULT_LOCALE, DICTIONARIES, LOCALES, ZDictionary, pickLocale, translate, type TI18nKey } from '../src/index.ts';

describe('i18n dictionaries', () => {
  it('load for every locale, ru being the default', () => {
    expect(LOCALES).toEqual(['ru', 'en']);
    expect(DEFAULT_LOCALE).toBe('ru');
    for (const locale of LOCALES) {
      expect(Object.keys(DICTIONARIES[locale]).length).toBeGreaterThan(10);
    }
  });

  it('have exactly the same keys in ru and en', () => {
    expect(Object.keys(DICTIONARIES.en).sort()).toEqual(Object.keys(DICTIONARIES.ru).sort());
  });

  it('are the JSON files as shipped, every value a non-empty string', () => {
    expect(DICTIONARIES.ru).toEqual(ruRaw);
    expect(DICTIONARIES.en).toEqual(enRaw);
    for (const locale of LOCALES) {
      for (const value of Object.values(DICTIONARIES[locale])) {
        expect(typeof value).toBe('string');
        expect(value.trim()).not.toBe('');
      }
    }
  });

  it('carry the texts the layout and the errors need', () => {
    expect(DICTIONARIES.en['not_found.title']).toBe('This page could not be found');
    expect(DICTIONARIES.ru['not_found.title']).toBe('Страница не найдена');
    for (const key of ['error.upstream_unavailable', 'error.upstream_timeout', 'error.not_found', 'footer.rights']) {
      expect(DICTIONARIES.ru[key], key).toBeTruthy();
      expect(DICTIONARIES.en[key], key).toBeTruthy();
    }
  });
});

describe('ZDictionary (the dictionary validator)', () => {
  it('accepts flat dotted keys with non-empty strings', () => {
    expect(ZDictionary.safeParse({ 'a.b': 'x', 'c_d-e.f2': 'y' }).success).toBe(true);
  });

  it('rejects nested objects', () => {
    expect(ZDictionary.safeParse({ header: { login: 'Log in' } }).success).toBe(false);
  });

  it('rejects empty values', () => {
    expect(ZDictionary.safeParse({ 'header.login': '' }).success).toBe(false);
  });

  it('rejects non-string values', () => {
    expect(ZDictionary.safeParse({ 'a.b': 1 }).success).toBe(false);
    expect(ZDictionary.safeParse({ 'a.b': null }).success).toBe(false);
    expect(ZDictionary.safeParse({ 'a.b': ['x'] }).success).toBe(false);
  });

  it('rejects keys that are not flat and dotted', () => {
    expect(ZDictionary.safeParse({ 'Header.Login': 'x' }).success).toBe(false);
    expect(ZDictionary.safeParse({ 'a..b': 'x' }).success).toBe(false);
    expect(ZDictionary.safeParse({ '.a': 'x' }).success).toBe(false);
    expect(ZDictionary.safeParse({ 'a b': 'x' }).success).toBe(false);
  });
});

describe('loading mismatched dictionaries', () => {
  afterEach(() => {
    vi.doUnmock('../i18n/ru.json');
    vi.doUnmock('../i18n/en.json');
    vi.resetModules();
  });

  async function loadWith(ru: unknown, en: unknown) {
    vi.resetModules();
    vi.doMock('../i18n/ru.json', () => ({ default: ru }));
    vi.doMock('../i18n/en.json', () => ({ default: en }));
    return import('../src/i18n.ts');
  }

  it('loads when the key sets match (the mock itself works)', async () => {
    const module = await loadWith({ 'a.b': 'А' }, { 'a.b': 'A' });
    expect(module.DICTIONARIES.en).toEqual({ 'a.b': 'A' });
    // The mocked dictionaries hold keys the real ones (and so the type) do not.
    expect(module.translate('ru', 'a.b' as TI18nKey)).toBe('А');
  });

  it('refuses a key present in ru only, naming it', async () => {
    await expect(loadWith({ 'a.b': 'А', 'only.ru': 'Р' }, { 'a.b': 'A' })).rejects.toThrow(/only\.ru/);
  });

  it('refuses a key present in en only, naming it', async () => {
    await expect(loadWith({ 'a.b': 'А' }, { 'a.b': 'A', 'only.en': 'E' })).rejects.toThrow(/only\.en/);
  });

  it('refuses a nested dictionary', async () => {
    await expect(loadWith({ a: { b: 'А' } }, { a: { b: 'A' } })).rejects.toThrow();
  });

  it('refuses an empty value', async () => {
    await expect(loadWith({ 'a.b': '' }, { 'a.b': 'A' })).rejects.toThrow();
  });
});

describe('translate', () => {
  it('returns the text of the locale', () => {
    expect(translate('en', 'not_found.title')).toBe('This page could not be found');
    expect(translate('ru', 'not_found.title')).toBe('Страница не найдена');
  });

  it('interpolates {{name}} placeholders', () => {
    expect(translate('en', 'footer.rights', { year: 2031 })).toBe('© 2031 Obmen. All rights reserved.');
    expect(translate('ru', 'footer.rights', { year: '2031' })).toBe('© 2031 Obmen. Все права защищены.');
    expect(translate('en', 'error.unknown_middleware', { name: 'auth' })).toBe('Unknown middleware auth');
  });

  it('leaves no placeholder behind when a variable is missing', () => {
    const text = translate('en', 'footer.rights');
    expect(text).not.toContain('{{');
    expect(text).toBe('©  Obmen. All rights reserved.');
  });

  it('returns the key itself for an unknown key', () => {
    expect(translate('en', 'no.such.key' as TI18nKey)).toBe('no.such.key');
  });

  it('pickLocale falls back to the default', () => {
    expect(pickLocale('en')).toBe('en');
    expect(pickLocale('ru')).toBe('ru');
    expect(pickLocale('de')).toBe('ru');
    expect(pickLocale(undefined)).toBe('ru');
  });
});
