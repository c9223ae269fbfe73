import { expect, test, type Page } from '@playwright/test';
import { BASE_URL, DEMO, islandsReady, logIn } from './helpers.ts';
import { signedInOperator } from './ops-helpers.ts';

/*
 * Rates with a history: the pair page's chart over its four ranges (a made-up past through the
 * dev route), its text alternative, a rate an operator changes reaching the open chart live, and
 * the pairs list's 24-hour change and spark line. Sign-ups: none (the demo account watches).
 */
const PAIR = 'BTC/USDT';

async function madeUpPast(page: Page, src: string, dst: string) {
  const response = await page.request.post('/api/dev/rates/history', { data: { src, dst } });
  expect(response.status()).toBe(200);
}

async function chartReady(page: Page, range: string) {
  const chart = page.getByTestId('rate-chart');
  await expect(chart).toHaveAttribute('data-range', range);
  await expect(chart).toHaveAttribute('data-status', 'ready');
  await expect(page.getByTestId('rate-chart-canvas')).toHaveAttribute('data-drawn', 'true');
  return chart;
}

test.describe.configure({ mode: 'serial' });

test('the pair page charts the rate over a day, a week, a month and a year, with its text alternative', async ({ page, context }) => {
  await context.addCookies([{ name: 'i18n_redirected', value: 'en', url: BASE_URL }]);
  await madeUpPast(page, 'BTC', 'USDT');
  await page.goto(`/exchange/${PAIR}`);
  await islandsReady(page);
  // The form works while (and whether or not) the chart loads.
  await expect(page.getByTestId('exchange-form')).toBeVisible();
  const chart = await chartReady(page, 'day');
  await expect(chart.locator('canvas').first()).toBeVisible();
  await expect(chart.getByRole('heading', { name: 'Market rate of BTC in USDT' })).toBeVisible();
  await expect(page.getByTestId('rate-chart-range-day')).toHaveAttribute('aria-pressed', 'true');
  // A minute a candle over the day, read the right way up.
  expect(Number(await chart.getAttribute('data-points'))).toBeGreaterThan(1400);
  await expect(page.getByTestId('rate-chart-close')).toHaveText(/^1\u00a0BTC = [\d,]+\.\d{2}\u00a0USDT$/);
  await expect(page.getByTestId('rate-chart-change')).toHaveText(/^[+−]?\d+(\.\d+)?%$/);
  const summary = page.getByTestId('rate-chart-summary');
  for (const term of ['Open', 'High', 'Low', 'Close', 'Change']) await expect(summary.getByRole('term').filter({ hasText: term })).toHaveCount(1);
  const daySummary = await summary.textContent();

  const counts: Record<string, number> = {};
  for (const range of ['week', 'month', 'year'] as const) {
    await page.getByTestId(`rate-chart-range-${range}`).click();
    await chartReady(page, range);
    await expect(page.getByTestId(`rate-chart-range-${range}`)).toHaveAttribute('aria-pressed', 'true');
    await expect(page.getByTestId('rate-chart-range-day')).toHaveAttribute('aria-pressed', 'false');
    counts[range] = Number(await chart.getAttribute('data-points'));
  }
  // Hours over a week and a month, days over a year.
  expect(counts.week).toBeGreaterThanOrEqual(168);
  expect(counts.week).toBeLessThanOrEqual(169);
  expect(counts.month).toBeGreaterThanOrEqual(720);
  expect(counts.year).toBeGreaterThanOrEqual(365);
  expect(counts.year).toBeLessThanOrEqual(366);
  expect(await summary.textContent()).not.toBe(daySummary);
});

test('the chart draws in the dark theme too, in its colours, and its text alternative is there', async ({ page, context }) => {
  await context.addCookies([
    { name: 'i18n_redirected', value: 'ru', url: BASE_URL },
    { name: 'theme', value: 'dark', url: BASE_URL },
  ]);
  await page.goto(`/exchange/${PAIR}`);
  await expect(page.locator('html')).toHaveAttribute('data-theme', 'dark');
  const chart = await chartReady(page, 'day');
  await expect(chart.getByRole('heading', { name: 'Рыночный курс BTC в USDT' })).toBeVisible();
  await expect(page.getByTestId('rate-chart-close')).toHaveText(/^1\u00a0BTC = [\d\u202f]+,\d{2}\u00a0USDT$/);
  // Drawn over the dark card (its canvas is transparent): a light card would be a white box.
  const background = await chart.evaluate((element) => getComputedStyle(element.closest('.card') ?? element).backgroundColor);
  const [r = 255, g = 255, b = 255] = (background.match(/\d+/g) ?? []).map(Number);
  expect((r + g + b) / 3, background).toBeLessThan(100);
  await chart.scrollIntoViewIfNeeded();
  await page.screenshot({ path: test.info().outputPath('pair-chart-dark.png') });
});

test('a pair quoted below 1 is charted from its other side (1 BTC in USDT on the USDT → BTC page)', async ({ page }) => {
  await madeUpPast(page, 'USDT', 'BTC');
  await page.goto('/exchange/USDT/BTC');
  await islandsReady(page);
  await chartReady(page, 'day');
  await expect(page.getByTestId('rate-chart-close')).toHaveText(/^1\u00a0BTC = [\d\u202f]+,\d{2}\u00a0USDT$/);
});

test('a rate an operator changes reaches the open chart live', async ({ browser }) => {
  const customer = await browser.newContext({ baseURL: BASE_URL, storageState: { cookies: [], origins: [] } });
  const watcher = await customer.newPage();
  await logIn(watcher, DEMO.email, DEMO.password);
  await watcher.goto(`/exchange/${PAIR}`);
  await islandsReady(watcher);
  await chartReady(watcher, 'day');
  const before = await watcher.getByTestId('rate-chart').getAttribute('data-last');

  const desk = await browser.newContext({ baseURL: BASE_URL, storageState: { cookies: [], origins: [] } });
  const operator = await desk.newPage();
  await signedInOperator(operator, ['finance']);
  const rate = (Number(before) * 1.013).toFixed(2);
  const changed = await operator.request.post('/api/ops/config/rates', { data: { src: 'BTC', dst: 'USDT', rate } });
  expect(changed.status()).toBe(200);

  // No reload: the socket's notice fetched the newest candle.
  await expect(watcher.getByTestId('rate-chart')).toHaveAttribute('data-last', rate);
  // Read in Russian: "1 BTC = 66 845,12 USDT".
  const [whole = '', fraction = ''] = rate.split('.');
  await expect(watcher.getByTestId('rate-chart-close')).toHaveText(`1\u00a0BTC = ${whole.slice(0, -3)}\u202f${whole.slice(-3)},${fraction}\u00a0USDT`);
  await customer.close();
  await desk.close();
});

test('the pairs list shows each pair’s 24-hour change and a spark line', async ({ page }) => {
  await madeUpPast(page, 'ETH', 'USDT');
  await page.goto('/exchanges?search=ETH%2FUSDT');
  const card = page
    .getByTestId('pairs')
    .getByTestId('pair')
    .filter({ has: page.getByTestId('pair-spark') });
  await expect(card).toHaveCount(1);
  await expect(card.getByTestId('pair-change')).toHaveText(/^\s*Изменение за 24 часа: [+−]?\d+(,\d+)?%\s*$/);
  await expect(card.getByTestId('pair-spark').locator('polyline')).toHaveAttribute('points', /^(\d+\.\d,\d+\.\d ?){24}$/);
});
