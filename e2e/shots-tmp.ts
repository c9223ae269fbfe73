import { chromium } from '@playwright/test';
const base = 'http://127.0.0.1:3302';
const out = '/work/helpers/shots-charts';
const browser = await chromium.launch({ executablePath: '/usr/bin/chromium' });
for (const locale of ['ru', 'en']) {
  for (const [w, h] of [[375, 812], [1280, 800]]) {
    const context = await browser.newContext({ viewport: { width: w, height: h }, locale: locale === 'ru' ? 'ru-RU' : 'en-GB' });
    await context.addCookies([{ name: 'i18n_redirected', value: locale, url: base }]);
    const page = await context.newPage();
    await page.goto(`${base}/exchange/BTC/USDT`);
    await page.waitForSelector('[data-testid="rate-chart"][data-status="ready"]');
    await page.waitForSelector('[data-drawn="true"]');
    await page.waitForTimeout(500);
    await page.locator('[data-testid="rate-chart"]').screenshot({ path: `${out}/pair-chart-day-${locale}-${w}.png` });
    await page.click('[data-testid="rate-chart-range-year"]');
    await page.waitForSelector('[data-testid="rate-chart"][data-range="year"][data-status="ready"]');
    await page.waitForTimeout(500);
    await page.screenshot({ path: `${out}/pair-page-year-${locale}-${w}.png`, fullPage: true });
    await page.goto(`${base}/exchanges`);
    await page.screenshot({ path: `${out}/exchanges-${locale}-${w}.png`, fullPage: w === 375 ? false : true });
    await context.close();
  }
}
await browser.close();
