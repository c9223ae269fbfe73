import { expect, test, type Page } from '@playwright/test';
import { axeOn } from './axe.ts';
import { BASE_URL, islandsReady, signUp } from './helpers.ts';

/*
 * The dark theme: the header's switch (light / dark / as on the device) sets the `theme` cookie,
 * the server writes <html data-theme> from it, so a reload paints the chosen theme from its first
 * byte; "as on the device" leaves it to prefers-color-scheme. The core's sandbox card page and the
 * back office follow the choice. Screenshots of what the reader sees are kept as attachments.
 */

const DARK_BG = 'rgb(46, 52, 64)';
const LIGHT_BG = 'rgb(244, 246, 249)';
const PAIR = '/exchange/USDT/BTC';

const background = (page: Page) => page.evaluate(() => getComputedStyle(document.body).backgroundColor);
const htmlTag = (body: string) => /<html[^>]*>/.exec(body)?.[0] ?? '';

async function keepScreenshot(page: Page, name: string) {
  const path = test.info().outputPath(`${name}.png`);
  await page.screenshot({ path });
  await test.info().attach(name, { path, contentType: 'image/png' });
}

test('the switch: dark, chosen by keyboard, survives a reload with no flash; "as on the device" follows the system', async ({ browser, page, context }) => {
  await page.setViewportSize({ width: 1280, height: 800 });
  await page.emulateMedia({ colorScheme: 'light' });
  await page.goto(PAIR);
  await islandsReady(page);
  const html = page.locator('html');
  await expect(html).not.toHaveAttribute('data-theme');
  expect(await background(page)).toBe(LIGHT_BG);

  const dark = page.locator('.site-header').getByTestId('theme-dark');
  await expect(page.locator('.site-header').getByRole('group', { name: 'Тема оформления' })).toBeVisible();
  await dark.focus();
  await page.keyboard.press('Enter');
  await expect(html).toHaveAttribute('data-theme', 'dark');
  await expect(dark).toHaveAttribute('aria-pressed', 'true');
  expect(await background(page)).toBe(DARK_BG);
  expect((await context.cookies(BASE_URL)).find((cookie) => cookie.name === 'theme')?.value).toBe('dark');

  // The next request's page, as the server sends it: dark before any script runs.
  expect(htmlTag(await (await page.request.get(PAIR)).text())).toContain('data-theme="dark"');
  const noScript = await browser.newContext({ javaScriptEnabled: false, colorScheme: 'light', viewport: { width: 1280, height: 800 } });
  await noScript.addCookies([{ name: 'theme', value: 'dark', url: BASE_URL }]);
  const firstPaint = await noScript.newPage();
  await firstPaint.goto(PAIR);
  expect(await background(firstPaint)).toBe(DARK_BG);
  await keepScreenshot(firstPaint, 'pair-dark-1280-without-scripts');
  await noScript.close();

  await page.reload();
  await expect(html).toHaveAttribute('data-theme', 'dark');
  expect(await background(page)).toBe(DARK_BG);
  await islandsReady(page);
  await keepScreenshot(page, 'pair-dark-1280');

  // As on the device: no attribute, the system's scheme decides, before and after a reload.
  await page.locator('.site-header').getByTestId('theme-system').click();
  await expect(html).not.toHaveAttribute('data-theme');
  expect(await background(page)).toBe(LIGHT_BG);
  await page.emulateMedia({ colorScheme: 'dark' });
  expect(await background(page)).toBe(DARK_BG);
  await page.reload();
  await expect(html).not.toHaveAttribute('data-theme');
  expect(await background(page)).toBe(DARK_BG);
  await expect(page.locator('meta[name="theme-color"][media="(prefers-color-scheme: dark)"]')).toHaveAttribute('content', '#2e3440');
});

test('on a phone the switch is in the burger menu, labelled in English too; light wins over a dark device', async ({ page, context }) => {
  await context.addCookies([{ name: 'i18n_redirected', value: 'en', url: BASE_URL }]);
  await page.setViewportSize({ width: 375, height: 812 });
  await page.emulateMedia({ colorScheme: 'dark' });
  await page.goto(PAIR);
  await islandsReady(page);
  expect(await background(page)).toBe(DARK_BG);
  await page.getByTestId('burger-open').click();
  const menu = page.getByTestId('mobile-menu');
  await expect(menu.getByRole('group', { name: 'Colour theme' })).toBeVisible();
  await menu.getByRole('button', { name: 'Light' }).click();
  await expect(page.locator('html')).toHaveAttribute('data-theme', 'light');
  await page.reload();
  await expect(page.locator('html')).toHaveAttribute('data-theme', 'light');
  expect(await background(page)).toBe(LIGHT_BG);
  await context.addCookies([{ name: 'theme', value: 'dark', url: BASE_URL }]);
  await page.reload();
  await islandsReady(page);
  await keepScreenshot(page, 'pair-dark-375');
});

test('the sandbox card page and the back office follow the choice; the card page passes axe-core in both themes', async ({ page, context }) => {
  test.slow();
  const account = await signUp(page, { prefix: 'theme-card' });
  expect((await page.request.post('/api/dev/level', { data: { account_id: account.accountId, level: 1 } })).ok()).toBe(true);
  const opened = await page.request.post('/api/deposit/integration_json', { form: { ps: 'sandbox-card', currency: 'RUB', amount: '1000' } });
  expect(opened.ok(), await opened.text()).toBe(true);
  const payUrl = ((await opened.json()) as { payment: { pay_url: string } }).payment.pay_url;
  for (const theme of ['dark', 'light'] as const) {
    await context.addCookies([{ name: 'theme', value: theme, url: BASE_URL }]);
    await page.goto(payUrl);
    await expect(page.locator('html')).toHaveAttribute('data-theme', theme);
    expect(await page.evaluate(() => getComputedStyle(document.body).backgroundColor)).toBe(theme === 'dark' ? DARK_BG : 'rgb(238, 242, 242)');
    // With its field errors showing, too.
    await page.getByTestId('sandbox-pay').click();
    await expect(page.locator('[aria-invalid="true"]').first()).toBeVisible();
    const serious = (await axeOn(page).analyze()).violations.filter((violation) => violation.impact === 'serious' || violation.impact === 'critical');
    expect(serious.map((violation) => `${theme} ${violation.id}: ${violation.nodes.map((node) => node.target.join(' ')).join(', ')}`)).toEqual([]);
  }
  await context.addCookies([{ name: 'theme', value: 'dark', url: BASE_URL }]);
  await page.goto('/ops/login');
  await expect(page.locator('html')).toHaveAttribute('data-theme', 'dark');
  expect(await background(page)).toBe(DARK_BG);
});
