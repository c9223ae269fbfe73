import { test } from '@playwright/test';
import { BASE_URL } from './helpers.ts';

for (const theme of ['light', 'dark'] as const) {
  for (const width of [375, 1280]) {
    test(`pair ${theme} ${width}`, async ({ page, context }) => {
      await context.addCookies([
        { name: 'i18n_redirected', value: 'en', url: BASE_URL },
        { name: 'theme', value: theme, url: BASE_URL },
      ]);
      await page.request.post('/api/dev/rates/history', { data: { src: 'BTC', dst: 'USDT' } });
      await page.setViewportSize({ width, height: 900 });
      await page.goto('/exchange/BTC/USDT');
      const chart = page.getByTestId('rate-chart');
      await chart.and(page.locator('[data-status="ready"]')).waitFor();
      await page.getByTestId('rate-chart-canvas').and(page.locator('[data-drawn="true"]')).waitFor();
      await page.screenshot({ path: `/work/helpers/shots-lead/pair-${theme}-${width}.png`, fullPage: true });
    });
  }
}
