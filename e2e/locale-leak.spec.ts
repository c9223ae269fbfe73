import { expect, test, type BrowserContext, type Page } from '@playwright/test';
import en from '../shared/i18n/en.json' with { type: 'json' };
import ru from '../shared/i18n/ru.json' with { type: 'json' };
import { A11Y_STATES } from './a11y-routes.ts';
import { BASE_URL, islandsReady, signUp } from './helpers.ts';

/*
 * A page in one language shows nothing of the other's dictionary or data. Every
 * route of e2e/a11y-routes.ts, signed out and signed in, in both languages: the English pages
 * hold no Cyrillic at all; the Russian pages hold no English dictionary phrase and no English
 * currency name. Visible text and the text read aloud (labels, placeholders, titles, alt) both count.
 */

type TLocale = 'ru' | 'en';
const DICTIONARIES: Record<TLocale, Record<string, string>> = { ru, en };
const CYRILLIC = /[\u0400-\u04ff]+[^\n]{0,40}/;

/** English phrases that are not also Russian text (product names, codes and "AML/KYC" are both). */
const ENGLISH_PHRASES = [
  ...new Set(
    Object.entries(DICTIONARIES.en)
      .filter(([key, text]) => DICTIONARIES.ru[key] !== text && /[a-z]{3,} [a-z]{3,}/i.test(text) && !text.includes('{{'))
      .map(([, text]) => text),
  ),
];

/**
 * The page's text (hidden parts too) and what is read aloud, leaving out parts marked as another
 * language (`lang`, WCAG 3.1.2), such as each language's own name in the language switch.
 */
async function pageTexts(page: Page): Promise<string> {
  return page.evaluate(() => {
    const own = document.documentElement.lang;
    const body = document.body.cloneNode(true) as HTMLElement;
    for (const element of body.querySelectorAll('script, style, template')) element.remove();
    for (const element of body.querySelectorAll('[lang]')) if (element.getAttribute('lang') !== own) element.remove();
    const said = [...body.querySelectorAll('[aria-label], [placeholder], [title], img[alt]')].flatMap((element) =>
      ['aria-label', 'placeholder', 'title', 'alt'].map((name) => element.getAttribute(name) ?? ''),
    );
    return [document.title, body.textContent ?? '', ...said].join('\n');
  });
}

async function englishCurrencyNames(page: Page): Promise<string[]> {
  const response = await page.request.get('/api/exchange/list', { headers: { cookie: 'i18n_redirected=en' } });
  const russian = await page.request.get('/api/exchange/list', { headers: { cookie: 'i18n_redirected=ru' } });
  const names = (list: { currencies: Array<{ code: string; name: string }> }) => new Map(list.currencies.map((c) => [c.code, c.name]));
  const ruNames = names(await russian.json());
  return [...names(await response.json())].filter(([code, name]) => ruNames.get(code) !== name).map(([, name]) => name);
}

function leaks(text: string, locale: TLocale, foreignNames: string[]): string[] {
  if (locale === 'en') {
    const cyrillic = CYRILLIC.exec(text);
    return cyrillic ? [`Cyrillic text: "${cyrillic[0]}"`] : [];
  }
  return [...ENGLISH_PHRASES, ...foreignNames].filter((phrase) => text.includes(phrase)).map((phrase) => `English text: "${phrase}"`);
}

async function walk(context: BrowserContext, auth: 'in' | 'out', locale: 'ru' | 'en'): Promise<string[]> {
  const page = await context.newPage();
  const foreignNames = await englishCurrencyNames(page);
  expect(foreignNames.length, 'some currencies are named differently in English').toBeGreaterThan(0);
  const found: string[] = [];
  const paths = [...new Set(A11Y_STATES.filter((state) => state.auth === auth || state.auth === 'both').map((state) => state.path))];
  await context.addCookies([{ name: 'i18n_redirected', value: locale, url: BASE_URL }]);
  for (const path of paths) {
    await page.goto(path);
    await islandsReady(page);
    found.push(...leaks(await pageTexts(page), locale, foreignNames).map((leak) => `${locale} ${path}: ${leak}`));
  }
  return found;
}

// One test per language, so the two walks run side by side; the page list grows with every page
// added to the axe list, hence a budget per page rather than a fixed one.
const PER_PAGE_MS = 4_000;
const pageCount = (auth: 'in' | 'out') => new Set(A11Y_STATES.filter((state) => state.auth === auth || state.auth === 'both').map((state) => state.path)).size;

for (const locale of ['ru', 'en'] as const) {
  test(`signed out: no page shows the other language (${locale})`, async ({ browser }) => {
    test.setTimeout(60_000 + PER_PAGE_MS * pageCount('out'));
    const context = await browser.newContext({ storageState: { cookies: [], origins: [] } });
    const found = await walk(context, 'out', locale);
    await context.close();
    expect(found).toEqual([]);
  });

  test(`signed in: no page shows the other language (${locale})`, async ({ browser }) => {
    test.setTimeout(60_000 + PER_PAGE_MS * pageCount('in'));
    const context = await browser.newContext({ storageState: { cookies: [], origins: [] } });
    await signUp(await context.newPage(), { prefix: 'leak' });
    const found = await walk(context, 'in', locale);
    await context.close();
    expect(found).toEqual([]);
  });
}
