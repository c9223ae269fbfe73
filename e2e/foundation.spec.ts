import { expect, test, type Page } from '@playwright/test';
import { BASE_URL } from './helpers.ts';

/**
 * The foundation (layout, language, 404, health, burger, CSP) as a visitor
 * sees it, against the real BFF + core.
 */

const DAY_S = 24 * 60 * 60;

/** The element the visitor can see: the switcher exists both in the header and in the burger menu. */
function visible(page: Page, testId: string) {
  return page.getByTestId(testId).filter({ visible: true });
}

test('home page is Russian by default, with header, logo link home and footer', async ({ page }) => {
  const response = await page.goto('/');
  expect(response?.status()).toBe(200);
  await expect(page.locator('html')).toHaveAttribute('lang', 'ru');
  const header = page.locator('header').first();
  await expect(header).toBeVisible();
  const homeLink = header.locator('a[href="/"]').first();
  await expect(homeLink).toBeVisible();
  await expect(homeLink.locator('img')).toBeVisible();
  await expect(page.locator('footer').last()).toContainText('Все права защищены');
});

test('switching to English sets the i18n_redirected cookie for 365 days and reloads in English', async ({ page, context }) => {
  await page.goto('/');
  await expect(page.locator('html')).toHaveAttribute('lang', 'ru');
  await visible(page, 'lang-en').click();
  await expect(page.locator('html')).toHaveAttribute('lang', 'en');
  await expect(page.locator('footer').last()).toContainText('All rights reserved');

  const cookie = (await context.cookies()).find((c) => c.name === 'i18n_redirected');
  expect(cookie, 'i18n_redirected cookie').toBeDefined();
  expect(cookie!.value).toBe('en');
  expect(cookie!.path).toBe('/');
  const lifetimeDays = (cookie!.expires - Date.now() / 1000) / DAY_S;
  expect(lifetimeDays).toBeGreaterThan(364);
  expect(lifetimeDays).toBeLessThanOrEqual(365.01);
});

test('English stays after a reload', async ({ page }) => {
  await page.goto('/');
  await visible(page, 'lang-en').click();
  await expect(page.locator('html')).toHaveAttribute('lang', 'en');
  await page.reload();
  await expect(page.locator('html')).toHaveAttribute('lang', 'en');
  await expect(page.locator('footer').last()).toContainText('All rights reserved');
});

test('switching back to Russian', async ({ page, context }) => {
  await context.addCookies([{ name: 'i18n_redirected', value: 'en', url: BASE_URL }]);
  await page.goto('/');
  await expect(page.locator('html')).toHaveAttribute('lang', 'en');
  await visible(page, 'lang-ru').click();
  await expect(page.locator('html')).toHaveAttribute('lang', 'ru');
  await expect(page.locator('footer').last()).toContainText('Все права защищены');
  expect((await context.cookies()).find((c) => c.name === 'i18n_redirected')?.value).toBe('ru');
});

test('an unknown route answers 404 with the Russian not-found page, header and footer', async ({ page }) => {
  const response = await page.goto('/no-such-page');
  expect(response?.status()).toBe(404);
  await expect(page.locator('html')).toHaveAttribute('lang', 'ru');
  await expect(page.getByRole('heading', { name: 'Страница не найдена' })).toBeVisible();
  await expect(page.locator('header').first()).toBeVisible();
  await expect(page.locator('footer').last()).toBeVisible();
  await expect(page.locator('footer').last()).toContainText('Все права защищены');
});

test('an unknown route answers 404 with the English not-found page', async ({ page, context }) => {
  await context.addCookies([{ name: 'i18n_redirected', value: 'en', url: BASE_URL }]);
  const response = await page.goto('/no-such-page');
  expect(response?.status()).toBe(404);
  await expect(page.locator('html')).toHaveAttribute('lang', 'en');
  await expect(page.getByRole('heading', { name: 'This page could not be found' })).toBeVisible();
  await expect(page.locator('header').first()).toBeVisible();
  await expect(page.locator('footer').last()).toContainText('All rights reserved');
});

test('a deep unknown route answers 404 too', async ({ page }) => {
  const response = await page.goto('/settings/no-such-tab/x');
  expect(response?.status()).toBe(404);
  await expect(page.getByRole('heading', { name: 'Страница не найдена' })).toBeVisible();
});

test('GET /local/healthcheck answers 200 JSON status ok', async ({ request }) => {
  const response = await request.get('/local/healthcheck');
  expect(response.status()).toBe(200);
  expect(response.headers()['content-type']).toMatch(/^application\/json/);
  expect(await response.json()).toMatchObject({ status: 'ok' });
});

test.describe('at a 375 px phone viewport', () => {
  test.use({ viewport: { width: 375, height: 800 }, isMobile: true, hasTouch: true });

  test('the burger opens the mobile menu and the close button hides it', async ({ page }) => {
    await page.goto('/');
    const burger = page.getByTestId('burger-open');
    const menu = page.getByTestId('mobile-menu');
    await expect(burger).toBeVisible();
    await expect(menu).toBeHidden();
    await burger.click();
    await expect(menu).toBeVisible();
    await expect(page.getByTestId('burger-close')).toBeVisible();
    await page.getByTestId('burger-close').click();
    await expect(menu).toBeHidden();
    await expect(burger).toBeVisible();
  });

  test('the language can be switched from the mobile menu', async ({ page }) => {
    await page.goto('/');
    await page.getByTestId('burger-open').click();
    const menu = page.getByTestId('mobile-menu');
    await expect(menu).toBeVisible();
    await menu.getByTestId('lang-en').click();
    await expect(page.locator('html')).toHaveAttribute('lang', 'en');
    await expect(page.getByTestId('mobile-menu')).toBeHidden();
  });
});

test('at 1280 px the burger button is hidden', async ({ page }) => {
  await page.setViewportSize({ width: 1280, height: 800 });
  await page.goto('/');
  await expect(page.locator('header').first()).toBeVisible();
  await expect(page.getByTestId('burger-open')).toBeHidden();
  await expect(page.getByTestId('mobile-menu')).toBeHidden();
  await expect(visible(page, 'lang-en')).toBeVisible();
});

test('the home page logs no Content-Security-Policy errors', async ({ page }) => {
  const cspErrors: string[] = [];
  const allErrors: string[] = [];
  page.on('console', (message) => {
    if (message.type() !== 'error') return;
    allErrors.push(message.text());
    if (/content[- ]security[- ]policy|refused to (execute|load|apply|connect|frame)/i.test(message.text())) cspErrors.push(message.text());
  });
  page.on('pageerror', (error) => allErrors.push(`pageerror: ${error.message}`));
  await page.goto('/', { waitUntil: 'load' });
  // The page's one script wires the burger: proof that it ran at all under the policy.
  await page.setViewportSize({ width: 375, height: 800 });
  await page.getByTestId('burger-open').click();
  await expect(page.getByTestId('mobile-menu')).toBeVisible();
  await page.reload({ waitUntil: 'networkidle' });
  expect(cspErrors, cspErrors.join('\n')).toEqual([]);
  if (allErrors.length) test.info().annotations.push({ type: 'console errors (not CSP)', description: allErrors.join('\n') });
});
