import { test } from '@playwright/test';
import { BASE_URL, islandsReady } from './helpers.ts';
import { signedInOperator } from './ops-helpers.ts';

const TINY_PNG = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==', 'base64');
const OUT = '/work/helpers/shots-config3';

test('shots', async ({ page, context }) => {
  test.setTimeout(180_000);
  await context.addCookies([{ name: 'i18n_redirected', value: 'ru', url: BASE_URL }]);
  await signedInOperator(page, ['finance', 'admin', 'content']);
  await page.goto('/ops/config/footer');
  await islandsReady(page);
  await page.getByTestId('ops-footer-name').fill('bank-upload');
  await page.getByTestId('ops-footer-file').setInputFiles({ name: 'logo.png', mimeType: 'image/png', buffer: TINY_PNG });
  await page.getByTestId('ops-footer-submit').click();
  await page.getByTestId('ops-footer-saved').waitFor();
  await page.goto('/ops/config/notifications');
  await islandsReady(page);
  await page.getByTestId('ops-notify-title-ru').fill('Плановые работы в субботу');
  await page.getByTestId('ops-notify-title-en').fill('Maintenance on Saturday');
  await page.getByTestId('ops-notify-send-at').fill(`${new Date().getFullYear() + 1}-01-01T10:00`);
  await page.getByTestId('ops-notify-publish').click();
  await page.getByTestId('ops-notify-published').waitFor();
  for (const [name, path] of [
    ['limits', '/ops/config/limits'],
    ['cards', '/ops/config/cards'],
    ['notifications', '/ops/config/notifications'],
    ['footer', '/ops/config/footer'],
    ['reconciliation', '/ops/reconciliation'],
  ] as const) {
    for (const width of [375, 1280]) {
      await page.setViewportSize({ width, height: 900 });
      await page.goto(path);
      await islandsReady(page);
      await page.waitForTimeout(500);
      await page.screenshot({ path: `${OUT}/${name}-${width}.png`, fullPage: true });
    }
  }
});
