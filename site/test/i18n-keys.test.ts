import { describe, expect, it } from 'vitest';
import i18next, { type TFunction } from 'i18next';
import { DICTIONARIES } from '@obmen/shared';
import { getT } from '../src/lib/i18n.ts';

/*
 * The typecheck is the test: `t` takes only keys of ru.json, on the pages (TTranslate) and in the
 * islands (i18next, typed by site/src/i18next.d.ts). Each @ts-expect-error fails the typecheck
 * the day an unknown key or a bare string is accepted again.
 */
describe('t accepts only keys that exist', () => {
  const key: string = 'site.name';

  it('on the pages', () => {
    const t = getT('en');
    expect(t('site.name')).toBe(DICTIONARIES.en['site.name']);
    // @ts-expect-error: not a key of the dictionaries
    t('no.such.key');
    // @ts-expect-error: a string built from data must go through a typed map first
    t(key);
  });

  it('in the islands', async () => {
    const t: TFunction = await i18next.createInstance().init({ lng: 'en', resources: { en: { translation: DICTIONARIES.en } } });
    expect(t('site.name')).toBe(DICTIONARIES.en['site.name']);
    // @ts-expect-error: not a key of the dictionaries
    t('no.such.key');
    // @ts-expect-error: a string built from data must go through a typed map first
    t(key);
  });
});
